"""`[channels.<name>]`: webhook paths, platform secrets, routing overrides, bindings, thread routes.

Rules (issue #2 "Config", issue #3 "Configuration"):
- `type` defaults to the table name when that is a platform (`[channels.telegram]`).
- `path` / `paths` are exact paths starting with "/", unique across channels; default "/<name>".
- Platform keys (secrets, `bot_username`) belong to their platform: another platform's key is an
  error (`stickyroute.config._platform` has the table and each key's form). So do the platform API
  keys of `stickyroute webhook` (`bot_token`; `app_id`, `access_token`), which keep their `${VAR}`s
  until that command uses them (`stickyroute.config.platform_api`).
- Routing: code defaults <- `[routing]` <- `overrides`; deadlines: `[upstream]` <- `upstream`.
- Ids in bindings and thread routes are strings or integers, normalised with
  `stickyroute.config.ids.normalise_id` (`+1555...` -> `1555...`, `-100123` -> `"-100123"`).
- `agents` (optional): the agents reachable on the channel, each a known agent, listed once;
  the default agent and every binding's and thread route's agent must be among them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection

from stickyroute.config._agents import check_name
from stickyroute.config._platform import ALL_KEYS, NAMES, read_platform_keys, read_upstream_override
from stickyroute.config._reader import Table, Unresolved, describe, quote
from stickyroute.config._sections import AUTO_ROUTE_KEYS, ROUTING_KEYS, routing_values
from stickyroute.config.ids import normalise_id
from stickyroute.config.model import Binding, Channel, ChannelType, RoutingSettings, ThreadRoute, UpstreamSettings
from stickyroute.config.platform_api import API_KEYS, API_KEYS_OF, PlatformApi, api_key_problem

_TYPES = tuple(t.value for t in ChannelType)
CHANNEL_KEYS = (
    "type", "path", "paths", "default_agent", *ALL_KEYS, "overrides", "upstream", "bindings", "thread_routes",
    "agents", *API_KEYS,
)


def read_channels(root: Table, agent_names: Collection[str], routing: RoutingSettings,
                  upstream: UpstreamSettings | None = None) -> dict[str, Channel]:
    """`root["channels"]`: every valid channel by name, in file order; none is an error.

    `agent_names` are the agents named in the file (valid or not), so a broken agent does not
    also make every reference to it an error.
    """
    table = root.table("channels")
    if table is None or not table.data:
        if table is not None or not root.has("channels"):
            root.error("channels", "at least one channel is required")
        return {}
    path_owner: dict[str, str] = {}
    channels = {}
    for name, sub in table.tables_by_name():
        valid_name = check_name(table, name, "channel")
        channel = _read_channel(name, sub, agent_names, routing, upstream or UpstreamSettings(), path_owner)
        if valid_name and channel is not None:
            channels[name] = channel
    return channels


def _read_channel(name: str, table: Table, agent_names: Collection[str], routing: RoutingSettings,
                  upstream: UpstreamSettings, path_owner: dict[str, str]) -> Channel | None:
    table.reject_unknown(CHANNEL_KEYS)
    kind = _read_type(name, table)
    paths = _read_paths(name, table, path_owner)
    default_agent = _agent_ref(table, "default_agent", agent_names)
    secrets = read_platform_keys(table, kind)
    deadlines = read_upstream_override(table.table("upstream"), upstream)
    overrides = table.table("overrides")
    if overrides is not None:
        overrides.reject_unknown(AUTO_ROUTE_KEYS + ROUTING_KEYS)
        routing = dataclasses.replace(routing, **routing_values(overrides))
    allowed = _read_allowed(table, agent_names)
    _check_reachable(table, "default_agent", default_agent, allowed)
    bindings = _read_bindings(table, agent_names, allowed)
    thread_routes = _read_thread_routes(table, agent_names, allowed)
    if kind is None or paths is None or default_agent is None:
        return None
    return Channel(name=name, type=kind, paths=paths, default_agent=default_agent,
                   routing=routing, bindings=bindings, thread_routes=thread_routes, agents=allowed,
                   upstream=deadlines, api=_read_api(table, kind), **secrets)


def _read_api(table: Table, kind: ChannelType) -> PlatformApi:
    """`bot_token`, `app_id`, `access_token` as written (`${VAR}` resolved by `stickyroute webhook`):
    each on its own platforms only, a literal one checked for its shape."""
    values = {key: table.string(key) for key in API_KEYS}
    for key, value in values.items():
        if value is None:
            continue
        if key not in API_KEYS_OF.get(kind.value, ()):
            owners = [NAMES[ChannelType(k)] for k, keys in API_KEYS_OF.items() if key in keys]
            named = owners[0] if len(owners) == 1 else f"{', '.join(owners[:-1])} and {owners[-1]}"
            table.error(key, f"not a {kind.value} setting ({named} only)")
        elif (problem := api_key_problem(key, value)) is not None:
            table.error(key, problem)
    return PlatformApi(**values)


def _read_allowed(table: Table, agent_names: Collection[str]) -> tuple[str, ...] | None:
    """`agents`: the channel's reachable agents (None when absent: every agent)."""
    items = table.indexed_strings("agents")
    if items is None:
        return None
    if not items and not table.data["agents"]:
        table.error("agents", "must not be empty (leave it out to reach every agent)")
        return None
    allowed: list[str] = []
    for i, name in items:
        if name not in agent_names:
            table.error(f"agents[{i}]", f"no agent named {quote(name)}")
        elif name in allowed:
            table.error(f"agents[{i}]", f"{quote(name)} is listed twice")
        else:
            allowed.append(name)
    return tuple(allowed)


def _check_reachable(table: Table, key: str, agent: str | None, allowed: tuple[str, ...] | None,
                     channel: Table | None = None) -> None:
    """A Layer-1 target (`key` of `table`) must be among the channel's `agents` when it has a list."""
    if agent is None or allowed is None or agent in allowed:
        return
    where = (channel or table).sub("agents")
    table.error(key, f"{quote(agent)} is not among {where} (the agents reachable on this channel)")


def _read_type(name: str, table: Table) -> ChannelType | None:
    if table.has("type"):
        value = table.choice("type", _TYPES)
        return None if value is None else ChannelType(value)
    if name in _TYPES:
        return ChannelType(name)
    table.error("type", f"is required: the table name {quote(name)} is not a channel type "
                f"({', '.join(_TYPES)})")
    return None


def _read_paths(name: str, table: Table, path_owner: dict[str, str]) -> tuple[str, ...] | None:
    """The channel's exact webhook paths (default "/<name>"), each claimed in `path_owner`."""
    if table.has("path") and table.has("paths"):
        table.error("paths", "set path or paths, not both")
        return None
    if table.has("paths"):
        paths = table.strings("paths", None)
        if paths is not None and not paths:
            table.error("paths", "must not be empty")
        keyed = [(f"paths[{i}]", p) for i, p in enumerate(paths or ())]
    elif table.has("path"):
        path = table.string("path")
        keyed = [] if path is None else [("path", path)]
    else:
        keyed = [("path", f"/{name}")]
    result = []
    for key, path in keyed:
        if not path.startswith("/"):
            table.error(key, f"must start with \"/\", got {quote(path)}")
        elif "?" in path or "#" in path:
            table.error(key, f"must be a path without query or fragment, got {quote(path)}")
        elif path in path_owner:
            owner = path_owner[path]
            where = "listed twice" if owner == name else f"already the path of channel {owner}"
            table.error(key, f"{quote(path)} is {where}")
        else:
            path_owner[path] = name
            result.append(path)
    return tuple(result) if len(result) == len(keyed) and result else None


def _agent_ref(table: Table, key: str, agent_names: Collection[str]) -> str | None:
    """A required agent name that must be one of `agent_names`."""
    agent = table.string(key, required=True)
    if agent is not None and agent not in agent_names:
        table.error(key, f"no agent named {quote(agent)}")
        return None
    return agent


def _read_id(table: Table, key: str) -> str | None:
    """A platform id (string or integer), normalised; None when absent or invalid."""
    value = table.data.get(key)
    if value is None or isinstance(value, Unresolved):
        return None
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        table.error(key, f"expected a string or an integer, got {describe(value)}")
        return None
    normalised = normalise_id(value)
    if normalised is None:
        table.error(key, "must not be empty")
    return normalised


def _read_bindings(table: Table, agent_names: Collection[str], allowed: tuple[str, ...] | None
                   ) -> tuple[Binding, ...]:
    """`[[bindings]]`: exactly one of user or chat, plus agent (among `allowed` when set); one
    binding per id."""
    result = []
    seen: dict[tuple[str, str], str] = {}
    for item in table.tables("bindings"):
        item.reject_unknown(("user", "chat", "agent"))
        present = [k for k in ("user", "chat") if item.has(k)]
        ids = {k: _read_id(item, k) for k in present}
        agent = _agent_ref(item, "agent", agent_names)
        _check_reachable(item, "agent", agent, allowed, table)
        if len(present) != 1:
            item.error("", "expected exactly one of user or chat")
            continue
        kind = present[0]
        ident = ids[kind]
        if ident is None:
            continue
        if (kind, ident) in seen:
            item.error(kind, f"{kind} {quote(ident)} is already bound by {seen[kind, ident]}")
            continue
        seen[kind, ident] = item.key.rsplit(".", 1)[-1]
        if agent is not None:
            result.append(Binding(agent=agent, **{kind: ident}))
    return tuple(result)


def _read_thread_routes(table: Table, agent_names: Collection[str], allowed: tuple[str, ...] | None
                        ) -> tuple[ThreadRoute, ...]:
    """`[[thread_routes]]`: chat, thread and agent (among `allowed` when set), one route per
    (chat, thread)."""
    result = []
    seen: dict[tuple[str, str], str] = {}
    for item in table.tables("thread_routes"):
        item.reject_unknown(("chat", "thread", "agent"))
        for key in ("chat", "thread"):
            if not item.has(key):
                item.error(key, "is required")
        chat, thread = _read_id(item, "chat"), _read_id(item, "thread")
        agent = _agent_ref(item, "agent", agent_names)
        _check_reachable(item, "agent", agent, allowed, table)
        if chat is None or thread is None:
            continue
        if (chat, thread) in seen:
            item.error("", f"chat {quote(chat)} thread {quote(thread)} already has a route "
                       f"({seen[chat, thread]})")
            continue
        seen[chat, thread] = item.key.rsplit(".", 1)[-1]
        if agent is not None:
            result.append(ThreadRoute(chat=chat, thread=thread, agent=agent))
    return tuple(result)
