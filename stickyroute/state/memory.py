"""The embedded state backend: one process, bounded cachetools caches, asyncio waiting.

Routes live in one `cachetools.TLRUCache` per channel (at most `max_conversations`, least
recently used dropped first, each route expiring `ttl_s` after its `last_active`, or later while a
human desk holds it: `Route.expires_at`); recent texts in a `TTLCache` per channel. Both are keyed
by the conversation's `ConversationKey.digest()` (32 hex, the name agent signals and the catalogue
use, issue #12), not by the key: the store keeps no raw ids and no key objects (the request's key
is dropped with the request; about 200 bytes a conversation saved). The delivery log lives in
`stickyroute.state.memory_deliveries` (re-exported here).

Time: the caches' timer reads `_NOW`, a `ContextVar` that every method sets to its `now` argument
right before touching a cache. A context variable belongs to the calling task, so a decision
awaiting the classifier can never see a time set by another conversation's task.

One decision per conversation at a time: an `asyncio.Lock` per held conversation (made on first
use, dropped when its last user leaves). Not thread-safe: one event loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator, Mapping

from cachetools import Cache, TLRUCache, TTLCache

from stickyroute.core.route import ConversationKey, Route
from stickyroute.state._now import NOW as _NOW
from stickyroute.state._now import timer as _timer
from stickyroute.state.base import ConversationLimits, Lease, LeaseTimeout
from stickyroute.state.memory_deliveries import (
    DELIVERY_TTL_S,
    MAX_MEMOS,
    MAX_REPLY_BYTES,
    MemoryDeliveryLog,
    MemoryDeliverySteps,
)

__all__ = ["DELIVERY_TTL_S", "MAX_MEMOS", "MAX_REPLY_BYTES", "MemoryConversationState", "MemoryDeliveryLog",
           "MemoryDeliverySteps"]


def _idle_expiry(ttl_s: float) -> Callable[[str, Route, float], float]:
    """The TLRUCache time-to-use of a route: `ttl_s` seconds after its `last_active` (a desk's
    hold: its end when later, `Route.expires_at`)."""

    def expires_at(_digest: str, route: Route, _now: float) -> float:
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
        self._routes: dict[str, TLRUCache[str, Route]] = {}
        self._recent: dict[str, TTLCache[str, tuple[str, ...]]] = {}
        self._locks: dict[str, tuple[asyncio.Lock, int]] = {}
        self._tokens = 0
        self.configure(limits, recent_messages)

    def configure(self, limits: Mapping[str, ConversationLimits], recent_messages: int) -> None:
        for channel, limit in limits.items():
            if self._limits.get(channel) == limit and (recent_messages > 0) == (channel in self._recent):
                continue
            size = max(1, limit.max_conversations)
            routes: TLRUCache[str, Route] = TLRUCache(maxsize=size, ttu=_idle_expiry(limit.ttl_s), timer=_timer)
            for digest, route in self._snapshot(channel):  # oldest first: a smaller bound keeps the newest
                routes[digest] = route
            self._routes[channel] = routes
            self._recent.pop(channel, None)
            if recent_messages > 0:  # recent texts are only context: a changed bound starts them afresh
                self._recent[channel] = TTLCache(maxsize=size, ttl=limit.ttl_s, timer=_timer)
            self._limits[channel] = limit
        self._recent_messages = recent_messages  # a removed channel keeps its caches for requests in flight

    def _snapshot(self, channel: str) -> list[tuple[str, Route]]:
        """The channel's live routes, least recently active first, without touching their LRU order."""
        return sorted(self._peek(channel), key=lambda item: item[1].last_active)

    def _peek(self, channel: str) -> Iterator[tuple[str, Route]]:
        """Every live (digest, route) of a channel at the current `_NOW` (`Route.expires_at`), on a
        snapshot of its keys. `Cache.__getitem__` reads a route without moving it in the LRU
        order (a scan by an operator must not decide which route is dropped next)."""
        routes, limit = self._routes.get(channel), self._limits.get(channel)
        if routes is None or limit is None:
            return
        ttl_s, now = limit.ttl_s, _NOW.get()
        for digest in list(Cache.__iter__(routes)):
            try:
                route = Cache.__getitem__(routes, digest)
            except KeyError:
                continue
            if route.expires_at(ttl_s) > now:
                yield digest, route

    async def acquire(self, key: ConversationKey, now: float, wait_s: float | None = None) -> Lease:
        digest = key.digest()
        lock, users = self._locks.get(digest, (None, 0))
        if lock is None:
            lock = asyncio.Lock()
        self._locks[digest] = (lock, users + 1)
        try:
            if lock.locked():  # held by another decision: wait, at most wait_s
                async with asyncio.timeout(wait_s):
                    await lock.acquire()
            else:  # free: taken without suspending
                await lock.acquire()
        except TimeoutError:
            self._leave(digest)
            raise LeaseTimeout(f"conversation {key.hashed()} still held after {wait_s} s") from None
        except BaseException:
            self._leave(digest)
            raise
        _NOW.set(now)
        recent = self._recent.get(key.channel)
        self._tokens += 1
        return Lease(key, self._routes[key.channel].get(digest), recent.get(digest, ()) if recent is not None else (),
                     self._tokens)

    async def commit(self, lease: Lease, now: float, *, store: Route | None = None, forget: bool = False,
                     text: str | None = None) -> None:
        key = lease.key
        digest = key.digest()
        _NOW.set(now)
        try:
            routes = self._routes[key.channel]
            if forget:
                routes.pop(digest, None)
            elif store is not None:
                routes[digest] = store
            recent = self._recent.get(key.channel)
            if recent is not None and text:
                recent[digest] = (*recent.get(digest, ()), text)[-self._recent_messages:]
        finally:
            await self.release(lease)

    async def release(self, lease: Lease) -> None:
        digest = lease.key.digest()
        lock, _users = self._locks[digest]
        lock.release()
        self._leave(digest)

    def _leave(self, digest: str) -> None:
        lock, users = self._locks[digest]
        if users <= 1:
            del self._locks[digest]
        else:
            self._locks[digest] = (lock, users - 1)

    async def routes(self, channel: str, now: float) -> list[tuple[str, Route]]:
        _NOW.set(now)
        return list(self._peek(channel))

    async def size(self, channel: str, now: float) -> int:
        _NOW.set(now)
        routes = self._routes[channel]
        routes.expire()
        return len(routes)

    async def read(self, channel: str, digest: str, now: float) -> Route | None:
        _NOW.set(now)
        return self._routes[channel].get(digest)

    async def swap(self, channel: str, digest: str, expected: Route, new: Route | None, now: float, *,
                   while_held: bool = False) -> bool:
        if digest in self._locks and not while_held:  # a decision holds (or awaits) it
            return False
        _NOW.set(now)
        routes = self._routes[channel]
        if routes.get(digest) != expected:
            return False
        if new is None:
            del routes[digest]
        else:
            routes[digest] = new
        return True

    async def aclose(self) -> None:
        return None
