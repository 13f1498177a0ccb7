"""`[agents.<name>]` keys of issue #22: `sticky`, `human`, `hold_minutes`, and the warnings about
human desks that `stickyroute check` prints.

    sticky = false       a detour agent: what Layer 2 sends it by keywords or the classifier is
                         answered there while the route stays with the previous agent
    human = true         a human desk: a conversation it is handed, switched or pinned to is held
    hold_minutes = 1440  the desk's hold, in minutes of inactivity (default a day; > 0)

Errors: a human desk that is not sticky, `hold_minutes` without `human = true`, a value of the
wrong type or not > 0. Warnings: a hold shorter than the TTL of a channel reaching the desk (the
hold would end before the route), a desk without an agent `token` (it can release a conversation
only in its webhook reply), a hidden desk (handoffs and `/agent` cannot name it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stickyroute.config._reader import Problems, Table
from stickyroute.config.agent import DEFAULT_HOLD_MINUTES
from stickyroute.config.model import Agent, Channel

__all__ = ["read_desk", "warn_desks"]


def read_desk(table: Table) -> dict[str, Any]:
    """`sticky`, `human` and `hold_s` of one agent table, as `Agent` keyword arguments."""
    sticky = table.boolean("sticky", True)
    human = table.boolean("human", False)
    hold_minutes = table.number("hold_minutes", positive=True)
    if human and sticky is False:
        table.error("sticky", "a human desk (human = true) is always sticky: remove sticky = false")
    if hold_minutes is not None and not human:
        table.error("hold_minutes", "only a human desk has a hold: set human = true, or remove hold_minutes")
    return {"sticky": sticky is not False, "human": bool(human),
            "hold_s": (hold_minutes if hold_minutes is not None else DEFAULT_HOLD_MINUTES) * 60.0}


def warn_desks(problems: Problems, agents: Mapping[str, Agent], channels: Mapping[str, Channel]) -> None:
    """The human desks' warnings (see the module docstring)."""
    for desk in (a for a in agents.values() if a.human):
        key = f"agents.{desk.name}"
        shorter = [c for c in channels.values() if c.allows(desk.name) and desk.hold_s < c.routing.ttl_s]
        if shorter:
            ttl = shorter[0].routing.ttl_s / 60.0
            problems.warn(f"{key}.hold_minutes", f"{desk.hold_s / 60.0:g} minutes is shorter than channel "
                          f"{shorter[0].name}'s auto_route_ttl_minutes ({ttl:g}): the hold ends before the route")
        if desk.token is None:
            problems.warn(f"{key}.token", "a human desk without a token can release a conversation only in its "
                          "webhook reply (X-Stickyroute-Hint: done), not through POST /v1/hints")
        if desk.hidden:
            problems.warn(f"{key}.hidden", "a hidden desk is reached only by admin pins and Layer 1: handoffs and "
                          "/agent cannot name it")
