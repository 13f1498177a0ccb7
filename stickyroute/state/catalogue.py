"""The route catalogue: what admin, agent hints, reloads and stats may ask of a backend's routes,
outside the per-message step (`ConversationState`: acquire -> commit | release).

    routes(channel, now)                          every live route, with its conversation
    read(channel, digest, now)                    one live route, or None
    swap(channel, digest, expected, new, now)     compare-and-set (None: drop the route)

Three calls per backend (memory, Redis, the fallback around Redis); the views built on them
(`count`, `census`, `scan`, `prune`, `route_of`) are written once in `stickyroute.state.views`.
A conversation is named by `ConversationKey.digest()` (32 hex): the agent signals' name for it
(issue #12), whose first 12 characters are the decision log's `conversation`. A listing gives
each route's conversation as a `Conversation`: anything with that `digest()` (the memory backend
its `ConversationKey`, hashed only when a view needs it; Redis a `Digest` read off the key name).
"""

from __future__ import annotations

from typing import NamedTuple, Protocol

from stickyroute.core.route import Route
from stickyroute.state.base import ConversationState

__all__ = ["Conversation", "Digest", "RouteCatalogue", "RouteState"]


class Conversation(Protocol):
    """A listed route's conversation."""

    def digest(self) -> str:
        """`ConversationKey.digest()` of the conversation (32 hex)."""
        ...


class Digest(NamedTuple):
    """A conversation known by its digest alone (a Redis key name holds no raw ids)."""

    value: str

    def digest(self) -> str:
        """`value`: 32 hex."""
        return self.value


class RouteCatalogue(Protocol):
    """The live routes of each channel, read and swapped outside a decision."""

    async def routes(self, channel: str, now: float) -> list[tuple[Conversation, Route]]:
        """(conversation, route) of every live route of `channel` at `now`, in no order, without
        refreshing any (O(routes of the channel): on Redis a SCAN of every primary)."""
        ...

    async def read(self, channel: str, digest: str, now: float) -> Route | None:
        """The live route of the conversation of `channel` whose digest is `digest`, or None
        (no lock, no refresh)."""
        ...

    async def swap(self, channel: str, digest: str, expected: Route, new: Route | None, now: float) -> bool:
        """Write `new` as that conversation's route (None: drop it) when it is still `expected`
        and no decision holds the conversation; False otherwise (nothing written: read again)."""
        ...


class RouteState(ConversationState, RouteCatalogue, Protocol):
    """A backend that is both the per-message step and the catalogue of its routes (memory,
    Redis, the fallback around Redis: one object, two faces)."""
