"""Views over a route catalogue, written once for every backend: counts, per-agent census,
listings, pruning after a reload, one conversation's route.

    views = RouteViews(catalogue)                  (state/build.py: StateBackends.views)
    await views.count(channel, now)                -> int      /stats "routes", the gauge
    await views.census(channel, now)               -> {agent: live routes}     GET /v1/agents
    await views.scan(channel, now, agent=, limit=) -> [(hashed key, route)]    GET /v1/conversations
    await views.prune(channel, keep, now)          -> routes dropped           a reload
    await views.route_of(key, now)                 -> Route | None             one conversation

Each view is O(routes of the channel) (on Redis a SCAN of every primary, on a cluster each
primary in turn): for operators and reloads, never per request; `count` asks the catalogue's `size`
(O(1) in memory: it runs on every scrape and /stats). `route_of` is one read.
"""

from __future__ import annotations

import asyncio
import heapq
from collections import Counter
from collections.abc import Collection, Iterable, Sequence
from typing import TypeVar

from stickyroute.core.route import ConversationKey, Route
from stickyroute.state.catalogue import RouteCatalogue

__all__ = ["PRUNE_BATCH", "RouteViews", "most_recent"]

PRUNE_BATCH = 64
"""Routes a prune swaps concurrently (within the Redis pool's connections)."""

K = TypeVar("K")


def most_recent(routes: Iterable[tuple[K, Route]], limit: int | None) -> list[tuple[K, Route]]:
    """(key, route) pairs, most recently active first, at most `limit` (None: all)."""
    if limit is None:
        return sorted(routes, key=lambda item: item[1].last_active, reverse=True)
    return heapq.nlargest(limit, routes, key=lambda item: item[1].last_active)


class RouteViews:
    """The views of `catalogue`'s routes (see the module docstring).

    `also_prune`: catalogues that hold routes of the same channels besides `catalogue` and that a
    reload must prune too (the memory a shared backend falls back to: what it wrote during an
    outage); the other views read `catalogue` alone.
    """

    def __init__(self, catalogue: RouteCatalogue, also_prune: Sequence[RouteCatalogue] = ()) -> None:
        self.catalogue = catalogue
        self._also_prune = tuple(also_prune)

    async def count(self, channel: str, now: float) -> int:
        """Live routes of `channel` at `now`."""
        return await self.catalogue.size(channel, now)

    async def census(self, channel: str, now: float) -> dict[str, int]:
        """Live routes of `channel` at `now` per agent."""
        return dict(Counter(route.agent for _digest, route in await self.catalogue.routes(channel, now)))

    async def scan(self, channel: str, now: float, *, agent: str | None = None,
                   limit: int | None = None) -> list[tuple[str, Route]]:
        """The live routes of `channel` at `now` (only those to `agent` when given), most recently
        active first, at most `limit` (None: all), each with its conversation's hashed key
        (`ConversationKey.hashed`: 12 hex, the decision log's `conversation`)."""
        live = [(digest, route) for digest, route in await self.catalogue.routes(channel, now)
                if agent is None or route.agent == agent]
        return [(digest[:12], route) for digest, route in most_recent(live, limit)]

    async def prune(self, channel: str, keep: Collection[str], now: float) -> int:
        """Drop every route of `channel` whose agent is not in `keep` (a reload removed it from the
        channel), in `catalogue` and every `also_prune` catalogue; how many were dropped. A route
        is dropped while a decision holds its conversation too (that decision writes its own
        outcome after, under the new config's rules when it started after the reload); one that
        changed since it was listed is left as it is. `PRUNE_BATCH` swaps at a time (on Redis,
        one round trip for the batch's calls on the pool's connections)."""
        dropped = 0
        for catalogue in (*self._also_prune, self.catalogue):
            listed = await catalogue.routes(channel, now)
            doomed = [(digest, route) for digest, route in listed if route.agent not in keep]
            for start in range(0, len(doomed), PRUNE_BATCH):
                done = await asyncio.gather(*(catalogue.swap(channel, digest, route, None, now, while_held=True)
                                              for digest, route in doomed[start:start + PRUNE_BATCH]))
                dropped += sum(done)
        return dropped

    async def route_of(self, key: ConversationKey, now: float) -> Route | None:
        """The live route of the conversation `key` at `now`, or None (no lock, no refresh)."""
        return await self.catalogue.read(key.channel, key.digest(), now)
