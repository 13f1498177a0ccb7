"""Split one WhatsApp Cloud API webhook body into one body per agent, and re-sign it.

Used only when the items of one POST resolve to different agents (a body whose items all go to
one agent is forwarded byte-for-byte). Each part keeps the whole structure (`object`, entry
`id`s, change `field`, `metadata`, `messaging_product`, `errors`...) with only that agent's
messages and statuses; see platforms.md section 2.6, option (c): split and re-sign with the app
secret, which agents verify exactly like a Meta signature.

`parts` maps an agent name to the `Envelope.item_path`s it owns (as produced by
`stickyroute.channels.whatsapp.parse`):

    (entry, change, "messages" | "statuses", index)   one message or status
    (entry, change, <event list>, index)               one call, echo, preference... (whatsapp_fields)
    (entry, change, "history", chunk, thread)          one history thread: a history change goes
                                                       whole to the one agent of all its threads
    (entry, change)                                    a whole change without items (NO_SENDER)
    (entry,)                                           a whole entry without changes
    ()                                                 the whole body (a body with no entries)

A change or entry left without messages and statuses is dropped from a part only when it had
some in the original body; an emptied `messages`/`statuses` key is removed (Meta omits empty
lists). `contacts` keeps the contacts of the part's own senders/recipients when every kept item
names one, else all of them.

One pass over the body for all agents (linear in its size: no per-agent or per-item scan of
another list; sub-objects are shared, not copied, since parts are serialised at once).
Parts are serialised compactly with ASCII escapes (`\\u00e9`, lowercase hex, like Meta):
`json.dumps(doc, ensure_ascii=True, separators=(",", ":"))`. `split_body` raises ValueError
for an item path not in the body or owned by two agents, or a history change whose threads go
to different agents; UnparsedUpdate for a body `parse` would reject.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from stickyroute.channels.security import meta_signature as sign  # re-exported: the batch parts are re-signed with it
from stickyroute.channels.whatsapp_fields import EVENT_FIELDS, HISTORY, MESSAGE_FIELDS
from stickyroute.channels.whatsapp_parse import (
    ITEM_LISTS,
    change_field,
    envelopes,
    items,
    load,
    sender_aliases,
    status_user,
)

__all__ = ["sign", "split_body"]

ItemPath = tuple[int | str, ...]


def split_body(body: bytes, parts: Mapping[str, Sequence[ItemPath]]) -> dict[str, bytes]:
    """Original body + item paths per agent -> one serialised body per agent (same keys).

    Accepted paths are exactly the `item_path`s `whatsapp.parse` gives for this body.
    """
    doc = load(body)
    owner: dict[ItemPath, str] = {}
    for agent, paths in parts.items():
        for path in map(tuple, paths):
            if not _is_item(doc, path):
                raise ValueError(f"item path {path!r} of agent {agent!r} is not an item of the body")
            if path in owner and owner[path] != agent:
                raise ValueError(f"item path {path!r} owned by {owner[path]!r} and {agent!r}")
            owner[path] = agent
    if () in owner:
        return {agent: _serialise(doc) for agent in parts}
    entries: dict[str, list[Any]] = {agent: [] for agent in parts}
    for e, entry in enumerate(doc["entry"]):
        if (e,) in owner:
            entries[owner[(e,)]].append(entry)
            continue
        changes: dict[str, list[Any]] = {}
        for c, change in enumerate(_changes(entry)):
            for agent, part in _split_change(change, (e, c), owner).items():
                changes.setdefault(agent, []).append(part)
        for agent, kept in changes.items():
            entries[agent].append(_with(entry, "changes", kept))
    return {agent: _serialise(_with(doc, "entry", entries[agent])) for agent in parts}


def _is_item(doc: dict[str, Any], path: ItemPath) -> bool:
    """True when `path` is one of the `item_path`s `whatsapp.parse` gives for `doc` (checked by
    walking it, not by parsing the body again)."""
    if path == ():
        return not doc["entry"]
    if not isinstance(path[0], int) or not 0 <= path[0] < len(doc["entry"]):
        return False
    changes = _changes(doc["entry"][path[0]])
    if len(path) == 1:
        return not changes
    if not isinstance(path[1], int) or not 0 <= path[1] < len(changes):
        return False
    change = changes[path[1]]
    found = envelopes({"entry": [{"changes": [change]}]}, "") if len(path) == 2 else None
    if found is not None:
        return found[0].item_path == (0, 0)
    return _item_in_change(change, path[2:])


def _item_in_change(change: object, rest: ItemPath) -> bool:
    """True when `rest` (the part of an item path after entry and change) names an item."""
    field = change_field(change)
    value = _value(change)
    if not rest or not all(isinstance(i, int) and i >= 0 for i in rest[1:]):
        return False
    if field == HISTORY:
        if len(rest) != 3 or rest[0] != HISTORY:
            return False
        chunk = _at(value.get(HISTORY), rest[1])
        return _at(chunk.get("threads") if isinstance(chunk, dict) else None, rest[2]) is not _MISSING
    if len(rest) != 2:
        return False
    spec = EVENT_FIELDS.get(field) if isinstance(field, str) else None
    names = ("messages", "statuses") if field in MESSAGE_FIELDS else (spec.items,) if spec is not None else ()
    return rest[0] in names and _at(value.get(str(rest[0])), rest[1]) is not _MISSING


_MISSING = object()


def _at(listed: object, index: int | str) -> Any:
    """`listed[index]` of a JSON list, or _MISSING."""
    if isinstance(listed, list) and isinstance(index, int) and 0 <= index < len(listed):
        return listed[index]
    return _MISSING


def _split_change(change: object, path: tuple[int, int], owner: Mapping[ItemPath, str]) -> dict[str, Any]:
    """The change's part for each agent owning some of it (agents owning none are absent)."""
    if path in owner:
        return {owner[path]: change}
    field = change_field(change)
    value = _value(change)
    if field == HISTORY:
        agents = {agent for p, agent in owner.items() if p[:3] == (*path, HISTORY)}
        if len(agents) > 1:
            raise ValueError(f"the history change {path!r} names users of {len(agents)} agents: not split")
        return {agents.pop(): change} if agents else {}
    kept: dict[str, dict[str, list[Any]]] = {}
    for key, i, item in items(value, field):
        agent = owner.get((*path, key, i))
        if agent is not None:
            kept.setdefault(agent, {k: [] for k in ITEM_LISTS if k in value})[key].append(item)
    contacts = _contacts_of(value.get("contacts"), field, kept)
    return {agent: _reduced_change(change, value, lists, contacts.get(agent, [])) for agent, lists in kept.items()}


def _contacts_of(contacts: object, field: object, kept: dict[str, dict[str, list[Any]]]) -> dict[str, list[Any]]:
    """Each agent's contacts: those naming one of its kept items' users; all of them when one of
    its kept items names no user; a contact naming no user goes to every agent (cannot tell)."""
    if not isinstance(contacts, list):
        return {}
    users: dict[str, set[str]] = {}
    everything: set[str] = set()
    for agent, lists in kept.items():
        for key, listed in lists.items():
            for item in listed:
                ids = _item_ids(key, field, item)
                if not ids:
                    everything.add(agent)
                for user in ids:
                    users.setdefault(user, set()).add(agent)
    out: dict[str, list[Any]] = {agent: [] for agent in kept}
    for contact in contacts:
        ids = _contact_ids(contact) if isinstance(contact, dict) else set()
        agents = set(kept) if not ids else everything.union(*(users.get(i, set()) for i in ids))
        for agent in agents:
            out[agent].append(contact)
    return out


def _reduced_change(change: Any, value: dict[str, Any], kept: dict[str, list[Any]], contacts: list[Any]) -> Any:
    """The change with only the kept items (emptied lists removed) and their contacts."""
    new_value: dict[str, Any] = {}
    for key, item in value.items():
        if key in kept:
            if kept[key]:
                new_value[key] = kept[key]
        elif key == "contacts" and isinstance(item, list):
            if contacts:
                new_value[key] = contacts
        else:
            new_value[key] = item
    return _with(change, "value", new_value)


def _with(obj: dict[str, Any], key: str, new: Any) -> dict[str, Any]:
    """`obj` with `key` replaced by `new`, key order kept (other values shared)."""
    return {k: (new if k == key else v) for k, v in obj.items()}


def _item_ids(key: str, field: object, item: object) -> set[str]:
    if not isinstance(item, dict):
        return set()
    if key == "messages":
        return set(sender_aliases(item.get("from"), item.get("from_user_id")))
    if key == "statuses":
        _group, person, bsuid = status_user(item)
        return set(sender_aliases(person, bsuid))
    spec = EVENT_FIELDS.get(field) if isinstance(field, str) else None
    return set(sender_aliases(*spec.user(item))) if spec is not None else set()


def _contact_ids(contact: dict[str, Any]) -> set[str]:
    return set(sender_aliases(contact.get("wa_id"), contact.get("user_id")))


def _changes(entry: object) -> list[Any]:
    changes = entry.get("changes") if isinstance(entry, dict) else None
    return changes if isinstance(changes, list) else []


def _value(change: object) -> dict[str, Any]:
    value = change.get("value") if isinstance(change, dict) else None
    return value if isinstance(value, dict) else {}


def _serialise(doc: dict[str, Any]) -> bytes:
    return json.dumps(doc, ensure_ascii=True, separators=(",", ":")).encode("ascii")
