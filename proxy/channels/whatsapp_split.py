"""Split one WhatsApp Cloud API webhook body into one body per agent, and re-sign it.

Used only when the items of one POST resolve to different agents (a body whose items all go to
one agent is forwarded byte-for-byte). Each part keeps the whole structure (`object`, entry
`id`s, change `field`, `metadata`, `messaging_product`, `errors`...) with only that agent's
messages and statuses; see platforms.md section 2.6, option (c): split and re-sign with the app
secret, which agents verify exactly like a Meta signature.

`parts` maps an agent name to the `Envelope.item_path`s it owns (as produced by
`proxy.channels.whatsapp.parse`):

    (entry, change, "messages" | "statuses", index)   one message or status
    (entry, change)                                    a whole change without items (NO_SENDER)
    (entry,)                                           a whole entry without changes
    ()                                                 the whole body (a body with no entries)

A change or entry left without messages and statuses is dropped from a part only when it had
some in the original body; an emptied `messages`/`statuses` key is removed (Meta omits empty
lists). `contacts` keeps the contacts of the part's own senders/recipients when every kept item
names one, else all of them.

Parts are serialised compactly with ASCII escapes (`\\u00e9`, lowercase hex, like Meta):
`json.dumps(doc, ensure_ascii=True, separators=(",", ":"))`. `split_body` raises ValueError
for an item path not in the body or owned by two agents, UnparsedUpdate for a body `parse`
would reject.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from typing import Any

from proxy.channels.security import meta_signature as sign  # re-exported: the batch parts are re-signed with it
from proxy.channels.whatsapp_parse import ITEM_LISTS, envelopes, items, load, sender_aliases

__all__ = ["sign", "split_body"]

ItemPath = tuple[int | str, ...]


def split_body(body: bytes, parts: Mapping[str, Sequence[ItemPath]]) -> dict[str, bytes]:
    """Original body + item paths per agent -> one serialised body per agent (same keys).

    Accepted paths are exactly the `item_path`s `whatsapp.parse` gives for this body.
    """
    doc = load(body)
    known = {envelope.item_path for envelope in envelopes(doc, "")}
    owner: dict[ItemPath, str] = {}
    for agent, paths in parts.items():
        for path in map(tuple, paths):
            if path not in known:
                raise ValueError(
                    f"item path {path!r} of agent {agent!r} is not an item of the body")
            if path in owner and owner[path] != agent:
                raise ValueError(f"item path {path!r} owned by {owner[path]!r} and {agent!r}")
            owner[path] = agent
    return {
        agent: _serialise(_part(doc, {tuple(p) for p in paths})) for agent, paths in parts.items()
    }


def _part(doc: dict[str, Any], selected: set[ItemPath]) -> dict[str, Any]:
    """A deep copy of `doc` reduced to the selected items (see the module docstring)."""
    if () in selected:
        return copy.deepcopy(doc)
    entries = []
    for e, entry in enumerate(doc["entry"]):
        if (e,) in selected:
            entries.append(copy.deepcopy(entry))
            continue
        changes = []
        for c, change in enumerate(_changes(entry)):
            if (e, c) in selected:
                changes.append(copy.deepcopy(change))
                continue
            value = _value(change)
            kept: dict[str, list[Any]] = {key: [] for key in ITEM_LISTS if key in value}
            for key, i, item in items(value):
                if (e, c, key, i) in selected:
                    kept[key].append(item)
            if any(kept.values()):
                changes.append(_reduced_change(change, value, kept))
        if changes:
            entries.append(_with(entry, "changes", changes))
    return _with(doc, "entry", entries)


def _reduced_change(
    change: dict[str, Any], value: dict[str, Any], kept: dict[str, list[Any]]
) -> dict[str, Any]:
    """The change with only the kept items (emptied lists removed) and their contacts."""
    new_value: dict[str, Any] = {}
    for key, item in value.items():
        if key in kept:
            if kept[key]:
                new_value[key] = copy.deepcopy(kept[key])
        elif key == "contacts" and isinstance(item, list):
            contacts = _kept_contacts(item, kept)
            if contacts:
                new_value[key] = contacts
        else:
            new_value[key] = copy.deepcopy(item)
    return _with(change, "value", new_value)


def _with(obj: dict[str, Any], key: str, new: Any) -> dict[str, Any]:
    """A deep copy of `obj` with `key` replaced by `new`, key order kept."""
    return {k: (new if k == key else copy.deepcopy(v)) for k, v in obj.items()}


def _kept_contacts(contacts: list[Any], kept: dict[str, list[Any]]) -> list[Any]:
    """Contacts of the kept items' users; all contacts when some kept item names no user."""
    users: set[str] = set()
    for key, listed in kept.items():
        for item in listed:
            ids = _item_ids(key, item)
            if not ids:
                return copy.deepcopy(contacts)
            users.update(ids)
    return [copy.deepcopy(contact) for contact in contacts if _belongs(contact, users)]


def _belongs(contact: object, users: set[str]) -> bool:
    """A contact naming no user id is kept (cannot tell); else it must name a kept user."""
    ids = _contact_ids(contact) if isinstance(contact, dict) else set()
    return not ids or bool(ids & users)


def _item_ids(key: str, item: object) -> set[str]:
    if not isinstance(item, dict):
        return set()
    if key == "messages":
        return set(sender_aliases(item.get("from"), item.get("from_user_id"), []))
    person = item.get("recipient_id")
    if item.get("recipient_type") == "group":
        person = item.get("recipient_participant_id")
    return set(sender_aliases(person, item.get("recipient_user_id"), []))


def _contact_ids(contact: dict[str, Any]) -> set[str]:
    return set(sender_aliases(contact.get("wa_id"), contact.get("user_id"), []))


def _changes(entry: object) -> list[Any]:
    changes = entry.get("changes") if isinstance(entry, dict) else None
    return changes if isinstance(changes, list) else []


def _value(change: object) -> dict[str, Any]:
    value = change.get("value") if isinstance(change, dict) else None
    return value if isinstance(value, dict) else {}


def _serialise(doc: dict[str, Any]) -> bytes:
    return json.dumps(doc, ensure_ascii=True, separators=(",", ":")).encode("ascii")
