"""`[agents.<name>]`: upstream URLs, per-channel targets, descriptions, aliases and keywords.

An agent's keyword lists are its own lists merged with its rule pack (`rules`, a path relative
to the config file; see `stickyroute.config.rulepack`). Names and aliases share one namespace: an
alias that is another agent's name or alias is an error.
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path
from types import MappingProxyType

from stickyroute.config._desks import read_desk
from stickyroute.config._reader import Table, quote
from stickyroute.config._tokens import bearer_token_problem
from stickyroute.config.model import Agent
from stickyroute.config.rulepack import (
    ALIAS,
    RESERVED_NAMES,
    merge_words,
    read_aliases,
    read_keywords,
    read_offset,
    read_pack,
)

AGENT_KEYS = ("url", "channels", "description", "aliases", "keywords", "weak_keywords", "confirm_keywords",
              "rules", "max_connections", "hidden", "token", "sticky", "human", "hold_minutes",
              "sticky_bonus_offset", "two_topic_confirm")


def check_name(table: Table, name: str, what: str) -> bool:
    """True when `name` is a valid agent/channel name (else the problem is recorded)."""
    if not ALIAS.fullmatch(name):
        table.error(name, f"{what} name must be lowercase letters, digits, - or _")
        return False
    if name in RESERVED_NAMES:
        table.error(name, f"{quote(name)} is reserved")
        return False
    return True


def read_agents(root: Table, config_dir: Path,
                channel_names: Collection[str]) -> dict[str, Agent]:
    """`root["agents"]`: every valid agent by name, in file order; none at all is an error."""
    table = root.table("agents")
    if table is None or not table.data:
        if table is not None or not root.has("agents"):
            root.error("agents", "at least one agent is required")
        return {}
    agents: dict[str, Agent] = {}
    for name, sub in table.tables_by_name():
        valid_name = check_name(table, name, "agent")
        agent = _read_agent(name, sub, config_dir, channel_names)
        if valid_name:
            agents[name] = agent
    _check_aliases(table, agents)
    return agents


def _read_agent(name: str, table: Table, config_dir: Path,
                channel_names: Collection[str]) -> Agent:
    """One agent; with problems recorded, the url may be "" (the config is rejected anyway)."""
    table.reject_unknown(AGENT_KEYS)
    url = table.url("url", required=True)
    pack = read_pack(table, table.string("rules"), config_dir)
    keywords = merge_words(read_keywords(table, "keywords"), pack.keywords)
    weak = merge_words(read_keywords(table, "weak_keywords"), pack.weak_keywords,
                       exclude=keywords)
    first = merge_words(read_keywords(table, "confirm_keywords"), pack.confirm_keywords,
                        exclude=keywords + weak)
    aliases = merge_words(read_aliases(table, "aliases"), pack.aliases, exclude=(name,))
    description = table.string("description", allow_empty=True) or pack.description
    channel_urls = {}
    urls = table.table("channels")
    if urls is not None:
        for channel in urls.data:
            if channel not in channel_names:
                urls.error(channel, f"no channel named {quote(channel)}")
            target = urls.url(channel)
            if target is not None:
                channel_urls[channel] = target
    return Agent(
        name=name,
        url=url or "",
        channel_urls=MappingProxyType(channel_urls),
        description=description,
        aliases=aliases,
        keywords=keywords,
        weak_keywords=weak,
        confirm_keywords=first,
        max_connections=table.integer("max_connections", minimum=1),
        hidden=bool(table.boolean("hidden", False)),
        token=_token(table),
        sticky_bonus_offset=_first_set(read_offset(table), pack.sticky_bonus_offset),
        two_topic_confirm=bool(_first_set(table.boolean("two_topic_confirm"), pack.two_topic_confirm)),
        **read_desk(table),
    )


def _first_set(*values: int | bool | None) -> int:
    """The first value that is set (the agent's own key, then its pack's), else 0."""
    return next((v for v in values if v is not None), 0)


def _token(table: Table) -> str | None:
    """The agent's API token (`token`); shorter than 16 characters is a warning."""
    token = table.string("token")
    problem = bearer_token_problem(token) if token is not None else None
    if problem is not None:
        table.error("token", problem)
    elif token is not None and len(token) < 16:
        table.problems.warn(table.sub("token"), "shorter than 16 characters: easy to guess")
    return token


def _check_aliases(table: Table, agents: dict[str, Agent]) -> None:
    """Each alias names one agent only: not another agent's name, not another's alias."""
    alias_owner: dict[str, str] = {}
    for agent in agents.values():
        for alias in agent.aliases:
            key = f"{agent.name}.aliases"
            if alias in agents:
                table.error(key, f"{quote(alias)} is already the name of agent {alias}")
            elif alias in alias_owner:
                table.error(key, f"{quote(alias)} is also an alias of agent {alias_owner[alias]}")
            else:
                alias_owner[alias] = agent.name
