"""`Agent`: one agent of the config (`[agents.<name>]`), in a module of its own (re-exported by
`stickyroute.config.model`): its upstream, what it is about, and how it holds conversations
(issue #22: `sticky`, `human`, `hold_s`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

__all__ = ["DEFAULT_HOLD_MINUTES", "Agent"]

DEFAULT_HOLD_MINUTES = 24 * 60.0
"""A human desk's `hold_minutes` when not set: a day of inactivity, longer than any usual TTL."""


@dataclass(frozen=True, slots=True)
class Agent:
    """`[agents.<name>]`: one agent's upstream and what it is about.

    `url` is a base URL: the inbound path and query are appended. `channel_urls` maps a channel
    name to an exact target URL that replaces base + path for that channel. Keywords already
    include those of the agent's `rules` pack.
    """

    name: str
    url: str
    channel_urls: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    description: str = ""
    aliases: tuple[str, ...] = ()
    keywords: tuple[str, ...] = ()
    weak_keywords: tuple[str, ...] = ()
    confirm_keywords: tuple[str, ...] = ()
    """Strong keywords that never decide alone (issue #22): what they lead goes to the classifier."""
    max_connections: int | None = None
    """This agent's pool size; None: `upstream.max_connections`."""
    hidden: bool = False
    """Never listed by `/agent`, never chosen by `/agent`, `@name`, the classifier or keywords:
    reached only through Layer 1 (bindings, thread routes, a channel default)."""
    token: str | None = field(default=None, repr=False)
    """Bearer token of this agent on the agent API (`POST /v1/hints`); None: it cannot call it."""
    sticky: bool = True
    """False: a detour agent: it answers what Layer 2 sends it, the route stays (reason `detour`)."""
    human: bool = False
    """A human desk: a conversation handed, switched or pinned to it is held there (`held`)."""
    hold_s: float = DEFAULT_HOLD_MINUTES * 60.0
    """A desk's hold in seconds of inactivity (`hold_minutes` * 60); the route lives while held."""
    sticky_bonus_offset: int = 0
    """Extra points (>= 0) added to `[routing] sticky_bonus` while this agent holds the route: an
    agent whose own turns often name other agents' words (a taxi named after the hotel it leaves
    from) keeps its conversations against one such keyword. Learned packs may set it."""
    two_topic_confirm: bool = False
    """While this agent holds the route, a message of several sentences whose first one is not a
    courtesy (acknowledgement or short) and does not name the keywords' winner is confirmed by the
    classifier instead of switched by keywords alone: it opens with the holder's business and
    brings up a second topic later ("Seven altogether. And I need a train too."). Learned packs
    may set it."""
