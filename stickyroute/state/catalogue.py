"""The route catalogue: what admin, agent hints, reloads and stats may ask of a backend's routes,
outside the per-message step (`ConversationState`: acquire -> commit | release).

    routes(channel, now)                          every live route, with its conversation's digest
    size(channel, now)                            how many live routes (memory: O(1))
    read(channel, digest, now)                    one live route, or None
    swap(channel, digest, expected, new, now)     compare-and-set (None: drop the route)

Four calls per backend (memory, Redis, the fallback around Redis); the views built on them
(`count`, `census`, `scan`, `prune`, `route_of`) are written once in `stickyroute.state.views`.
A conversation is named by `ConversationKey.digest()` (32 hex): the agent signals' name for it
(issue #12), whose first 12 characters are the decision log's `conversation`; the memory backend
keys its routes by it, Redis reads it off the key name.
"""

from __future__ import annotations

from typing import Protocol

from stickyroute.core.route import Route
from stickyroute.state.base import ConversationState

__all__ = ["RouteCatalogue", "RouteState"]


class RouteCatalogue(Protocol):
    """The live routes of each channel, read and swapped outside a decision."""

    async def routes(self, channel: str, now: float) -> list[tuple[str, Route]]:
        """(digest, route) of every live route of `channel` at `now`, in no order, without
        refreshing any (O(routes of the channel): on Redis a SCAN of every primary)."""
        ...

    async def size(self, channel: str, now: float) -> int:
        """How many live routes `channel` has at `now` (`len(routes(...))`, cheaper where the
        backend can tell: the memory backend's cache length, O(1) but for what expired)."""
        ...

    async def read(self, channel: str, digest: str, now: float) -> Route | None:
        """The live route of the conversation of `channel` whose digest is `digest`, or None
        (no lock, no refresh)."""
        ...

    async def swap(self, channel: str, digest: str, expected: Route, new: Route | None, now: float, *,
                   while_held: bool = False) -> bool:
        """Write `new` as that conversation's route (None: drop it) when it is still `expected`
        and no decision holds the conversation (`while_held`: even when one does; it writes its
        own outcome after, a reload's prune); False otherwise (nothing written: read again)."""
        ...


class RouteState(ConversationState, RouteCatalogue, Protocol):
    """A backend that is both the per-message step and the catalogue of its routes (memory,
    Redis, the fallback around Redis: one object, two faces)."""
