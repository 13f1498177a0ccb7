"""The embedded state backend: one process, bounded cachetools caches, asyncio waiting.

Routes live in one `cachetools.TLRUCache` per channel (at most `max_conversations`, least
recently used dropped first, each route expiring `ttl_s` after its `last_active`, or later while a
human desk holds it: `Route.expires_at`); recent texts in
a `TTLCache` per channel; the keys of written routes by `ConversationKey.digest` in an `LRUCache`
per channel of the same bound (agent signals name a conversation by digest, issue #12). The
delivery log lives in `stickyroute.state.memory_deliveries` (re-exported here).

Time: the caches' timer reads `_NOW`, a `ContextVar` that every method sets to its `now` argument
right before touching a cache. A context variable belongs to the calling task, so a decision
awaiting the classifier can never see a time set by another conversation's task.

One decision per conversation at a time: an `asyncio.Lock` per held key (made on first use,
dropped when its last user leaves). Not thread-safe: one event loop.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable, Collection, Iterator, Mapping

from cachetools import Cache, LRUCache, TLRUCache, TTLCache

from stickyroute.core.route import ConversationKey, Route
from stickyroute.state._now import NOW as _NOW
from stickyroute.state._now import timer as _timer
from stickyroute.state.base import ConversationLimits, Lease, LeaseTimeout, most_recent
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
    """`ConversationState` in this process (see the module docstring).

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
        self._digests: dict[str, LRUCache[str, ConversationKey]] = {}
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
            digests: LRUCache[str, ConversationKey] = LRUCache(maxsize=size)
            for key, _route in self._snapshot(channel):
                digests[key.digest()] = key
            self._digests[channel] = digests
            self._recent.pop(channel, None)
            if recent_messages > 0:  # recent texts are only context: a changed bound starts them afresh
                self._recent[channel] = TTLCache(maxsize=size, ttl=limit.ttl_s, timer=_timer)
            self._limits[channel] = limit
        self._recent_messages = recent_messages  # a removed channel keeps its caches for requests in flight

    def _snapshot(self, channel: str) -> list[tuple[ConversationKey, Route]]:
        """The channel's live routes, least recently active first, without touching their LRU order."""
        routes = self._routes.get(channel)
        if routes is None:
            return []
        return sorted(self._peek(routes), key=lambda item: item[1].last_active)

    @staticmethod
    def _peek(routes: TLRUCache[ConversationKey, Route]) -> Iterator[tuple[ConversationKey, Route]]:
        """Every live (key, route) of a cache at the current `_NOW`: iteration yields live keys
        only, and `Cache.__getitem__` reads one without moving it in the LRU order (a scan by
        an operator must not decide which route is dropped next)."""
        for key in routes:
            yield key, Cache.__getitem__(routes, key)

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
                self._digests[key.channel][key.digest()] = key  # findable by digest (agent signals)
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

    async def get(self, key: ConversationKey, now: float) -> Route | None:
        _NOW.set(now)
        return self._routes[key.channel].get(key)

    async def put(self, key: ConversationKey, route: Route, now: float) -> None:
        _NOW.set(now)
        self._routes[key.channel][key] = route
        self._digests[key.channel][key.digest()] = key

    async def find(self, channel: str, digest: str, now: float) -> Route | None:
        key = self._digests[channel].get(digest)
        return None if key is None else await self.get(key, now)

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

    async def delete(self, key: ConversationKey, now: float) -> None:
        _NOW.set(now)
        self._routes[key.channel].pop(key, None)

    async def count(self, channel: str, now: float) -> int:
        _NOW.set(now)
        routes = self._routes[channel]
        routes.expire()
        return len(routes)

    async def scan(self, channel: str, now: float, *, agent: str | None = None,
                   limit: int | None = None) -> list[tuple[str, Route]]:
        _NOW.set(now)
        live = [(key, route) for key, route in self._peek(self._routes[channel])
                if agent is None or route.agent == agent]
        return [(key.hashed(), route) for key, route in most_recent(live, limit)]  # hash only what is returned

    async def census(self, channel: str, now: float) -> dict[str, int]:
        _NOW.set(now)
        return dict(Counter(route.agent for _key, route in self._peek(self._routes[channel])))

    async def prune(self, channel: str, keep: Collection[str], now: float) -> int:
        _NOW.set(now)
        routes = self._routes[channel]
        doomed = [key for key, route in self._peek(routes) if route.agent not in keep]
        for key in doomed:
            routes.pop(key, None)
        return len(doomed)

    async def aclose(self) -> None:
        return None
