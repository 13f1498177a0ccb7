"""Split one Messenger / Instagram webhook body into one body per agent (to be re-signed).

Used only when the items of one POST resolve to different agents (a body whose items all go to one
agent is forwarded byte-for-byte): platforms.md section 2.6, option (c), as for WhatsApp. Each part
keeps `object` and every entry's own keys (`id`, `time`...) with only that agent's items; an entry
holding none of its items is left out, and a `messaging` / `standby` / `changes` list the part
keeps nothing of is removed (Meta sends no empty lists).

`parts` maps an agent to the `Envelope.item_path`s it owns (`meta_messaging.parse`):

    (entry, "messaging" | "standby" | "changes", index)   one item
    (entry,)                                              a whole entry without items
    ()                                                    the whole body (no entries)

One pass over the entries and items for all agents; parts are serialised compactly with ASCII
escapes, like Meta's own bodies. ValueError for a path that is not an item of the body or is owned
by two agents; UnparsedUpdate for a body `parse` would reject.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from stickyroute.channels.meta_messaging import ITEM_LISTS, load

__all__ = ["split_body"]

ItemPath = tuple[int | str, ...]


def split_body(body: bytes, parts: Mapping[str, Sequence[ItemPath]]) -> dict[str, bytes]:
    """Original body + item paths per agent -> one serialised body per agent (same keys)."""
    doc = load(body)
    entries = doc["entry"]
    owner: dict[ItemPath, str] = {}
    for agent, paths in parts.items():
        for path in map(tuple, paths):
            if not _is_item(entries, path):
                raise ValueError(f"item path {path!r} of agent {agent!r} is not an item of the body")
            if owner.setdefault(path, agent) != agent:
                raise ValueError(f"item path {path!r} owned by {owner[path]!r} and {agent!r}")
    if () in owner:
        return {agent: _serialise(doc) for agent in parts}
    kept: dict[str, list[Any]] = {agent: [] for agent in parts}
    for e, entry in enumerate(entries):
        if (e,) in owner:
            kept[owner[(e,)]].append(entry)
            continue
        lists: dict[str, dict[str, list[Any]]] = {}
        for key, value in entry.items():
            if key in ITEM_LISTS and isinstance(value, list):
                for i, item in enumerate(value):
                    holder = owner.get((e, key, i))
                    if holder is not None:
                        lists.setdefault(holder, {}).setdefault(key, []).append(item)
        for holder, own in lists.items():
            kept[holder].append({k: own.get(k, v) for k, v in entry.items()
                                 if k in own or not (k in ITEM_LISTS and isinstance(v, list))})
    return {agent: _serialise({k: (kept[agent] if k == "entry" else v) for k, v in doc.items()}) for agent in parts}


def _is_item(entries: list[Any], path: ItemPath) -> bool:
    """True when `path` is one of the item paths `meta_messaging.parse` gives for these entries."""
    if path == ():
        return not entries
    e = path[0]
    if type(e) is not int or not 0 <= e < len(entries) or not isinstance(entries[e], dict):
        return len(path) == 1 and type(e) is int and 0 <= e < len(entries)
    entry = entries[e]
    has_items = any(k in ITEM_LISTS and isinstance(v, list) and v for k, v in entry.items())
    if len(path) == 1:
        return not has_items
    if len(path) != 3 or path[1] not in ITEM_LISTS or type(path[2]) is not int:
        return False
    listed = entry.get(str(path[1]))
    return isinstance(listed, list) and 0 <= path[2] < len(listed)


def _serialise(doc: dict[str, Any]) -> bytes:
    return json.dumps(doc, ensure_ascii=True, separators=(",", ":")).encode("ascii")
