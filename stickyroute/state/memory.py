"""The embedded state backend: one process, bounded cachetools caches, asyncio waiting.

Routes live in one `cachetools.TLRUCache` per channel (at most `max_conversations`, least
recently used dropped first, each route expiring `ttl_s` after its `last_active`, or later while a
human desk holds it: `Route.expires_at`); recent texts in
a `TTLCache` per channel; the keys of written routes by `ConversationKey.digest` in a dict per
channel (agent signals and the catalogue name a conversation by digest, issue #12) that holds
every route's key: a key whose route is gone stays until the dict reaches twice the channel's
bound, then those are swept in one pass (amortised O(1) per write). The
delivery log lives in `stickyroute.state.memory_deliveries` (re-exported here).

Time: the caches' timer reads `_NOW`, a `ContextVar` that every method sets to its `now` argument
right before touching a cache. A context variable belongs to the calling task, so a decision
awaiting the classifier can never see a time set by another conversation's task.

One decision per conversation at a time: an `asyncio.Lock` per held key (made on first use,
dropped when its last user leaves). Not thread-safe: one event loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator, Mapping

from cachetools import Cache, TLRUCache, TTLCache

from stickyroute.core.route import ConversationKey, Route
from stickyroute.state._now import NOW as _NOW
from stickyroute.state._now import timer as _timer
from stickyroute.state.base import ConversationLimits, Lease, LeaseTimeout
from stickyroute.state.catalogue import Conversation
from stickyroute.state.memory_deliveries import (
    DELIVERY_TTL_S,
    MAX_MEMOS,
    MAX_REPLY_BYTES,
    MemoryDeliveryLog,
    MemoryDeliverySteps,
)

__all__ = ["DELIVERY_TTL_S", "MAX_MEMOS", "MAX_REPLY_BYTES", "MemoryConversationState", "MemoryDeliveryLog",
           "MemoryDeliverySteps"]


def _idle_expiry(ttl_s: float) -> Callable[[ConversationKey, Route, float], float]:
    """The TLRUCache time-to-use of a route: `ttl_s` seconds after its `last_active` (a desk's
    hold: its end when later, `Route.expires_at`)."""

    def expires_at(_key: ConversationKey, route: Route, _now: float) -> float:
        return route.expires_at(ttl_s)

    return expires_at


class MemoryConversationState:
    """`ConversationState` and `RouteCatalogue` in this process (see the module docstring).

    `limits` gives each channel's TTL and bound; `recent_messages` how many texts per
    conversation the classifier may see as context (0 keeps none). KeyError for a channel
    without limits.
    """

    def __init__(self, limits: Mapping[str, ConversationLimits], recent_messages: int = 0) -> None:
        self._recent_messages = 0
        self._limits: dict[str, ConversationLimits] = {}
        self._routes: dict[str, TLRUCache[ConversationKey, Route]] = {}
        self._recent: dict[str, TTLCache[ConversationKey, tuple[str, ...]]] = {}
        self._locks: dict[ConversationKey, tuple[asyncio.Lock, int]] = {}
        self._digests: dict[str, dict[str, ConversationKey]] = {}
        self._tokens = 0
        self.configure(limits, recent_messages)

    def configure(self, limits: Mapping[str, ConversationLimits], recent_messages: int) -> None:
        for channel, limit in limits.items():
            if self._limits.get(channel) == limit and (recent_messages > 0) == (channel in self._recent):
                continue
            size = max(1, limit.max_conversations)
            routes: TLRUCache[ConversationKey, Route] = TLRUCache(maxsize=size, ttu=_idle_expiry(limit.ttl_s),
                                                                  timer=_timer)
            for key, route in self._snapshot(channel):  # oldest first: a smaller bound keeps the newest
                routes[key] = route
            self._routes[channel] = routes
            self._digests[channel] = {key.digest(): key for key in Cache.__iter__(routes)}
            self._recent.pop(channel, None)
            if recent_messages > 0:  # recent texts are only context: a changed bound starts them afresh
                self._recent[channel] = TTLCache(maxsize=size, ttl=limit.ttl_s, timer=_timer)
            self._limits[channel] = limit
        self._recent_messages = recent_messages  # a removed channel keeps its caches for requests in flight

    def _findable(self, key: ConversationKey) -> None:
        """Name `key` by its digest (its route was just written); sweep the keys of dropped routes
        when the channel's dict holds twice its bound."""
        digests, routes = self._digests[key.channel], self._routes[key.channel]
        digests[key.digest()] = key
        if len(digests) > 2 * routes.maxsize:
            self._digests[key.channel] = {d: k for d, k in digests.items() if Cache.__contains__(routes, k)}

    def _snapshot(self, channel: str) -> list[tuple[ConversationKey, Route]]:
        """The channel's live routes, least recently active first, without touching their LRU order."""
        return sorted(self._peek(channel), key=lambda item: item[1].last_active)

    def _peek(self, channel: str) -> Iterator[tuple[ConversationKey, Route]]:
        """Every live (key, route) of a channel at the current `_NOW` (`Route.expires_at`), on a
        snapshot of its keys. `Cache.__getitem__` reads a route without moving it in the LRU
        order (a scan by an operator must not decide which route is dropped next)."""
        routes, limit = self._routes.get(channel), self._limits.get(channel)
        if routes is None or limit is None:
            return
        ttl_s, now = limit.ttl_s, _NOW.get()
        for key in list(Cache.__iter__(routes)):
            try:
                route = Cache.__getitem__(routes, key)
            except KeyError:
                continue
            if route.expires_at(ttl_s) > now:
                yield key, route

    async def acquire(self, key: ConversationKey, now: float, wait_s: float | None = None) -> Lease:
        lock, users = self._locks.get(key, (None, 0))
        if lock is None:
            lock = asyncio.Lock()
        self._locks[key] = (lock, users + 1)
        try:
            if lock.locked():  # held by another decision: wait, at most wait_s
                async with asyncio.timeout(wait_s):
                    await lock.acquire()
            else:  # free: taken without suspending
                await lock.acquire()
        except TimeoutError:
            self._leave(key)
            raise LeaseTimeout(f"conversation {key.hashed()} still held after {wait_s} s") from None
        except BaseException:
            self._leave(key)
            raise
        _NOW.set(now)
        recent = self._recent.get(key.channel)
        self._tokens += 1
        return Lease(key, self._routes[key.channel].get(key), recent.get(key, ()) if recent is not None else (),
                     self._tokens)

    async def commit(self, lease: Lease, now: float, *, store: Route | None = None, forget: bool = False,
                     text: str | None = None) -> None:
        key = lease.key
        _NOW.set(now)
        try:
            routes = self._routes[key.channel]
            if forget:
                routes.pop(key, None)
            elif store is not None:
                routes[key] = store
                self._findable(key)
            recent = self._recent.get(key.channel)
            if recent is not None and text:
                recent[key] = (*recent.get(key, ()), text)[-self._recent_messages:]
        finally:
            await self.release(lease)

    async def release(self, lease: Lease) -> None:
        lock, _users = self._locks[lease.key]
        lock.release()
        self._leave(lease.key)

    def _leave(self, key: ConversationKey) -> None:
        lock, users = self._locks[key]
        if users <= 1:
            del self._locks[key]
        else:
            self._locks[key] = (lock, users - 1)

    async def routes(self, channel: str, now: float) -> list[tuple[Conversation, Route]]:
        _NOW.set(now)
        return list(self._peek(channel))

    async def read(self, channel: str, digest: str, now: float) -> Route | None:
        key = self._digests[channel].get(digest)
        if key is None:
            return None
        _NOW.set(now)
        return self._routes[channel].get(key)

    async def swap(self, channel: str, digest: str, expected: Route, new: Route | None, now: float) -> bool:
        key = self._digests[channel].get(digest)
        if key is None or key in self._locks:  # gone, or a decision holds (or awaits) it
            return False
        _NOW.set(now)
        routes = self._routes[channel]
        if routes.get(key) != expected:
            return False
        if new is None:
            del routes[key]
        else:
            routes[key] = new
        return True

    async def aclose(self) -> None:
        return None
