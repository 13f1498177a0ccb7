"""The embedded state backend: one process, bounded cachetools caches, asyncio waiting.

Routes live in one `cachetools.TLRUCache` per channel (at most `max_conversations`, least
recently used dropped first, each route expiring `ttl_s` after its `last_active`); recent texts in
a `TTLCache` per channel; stored answers in one `TTLCache` bounded by their total size in bytes
(`max_reply_bytes`, least recently used dropped); first decisions in a `TTLCache` bounded by count.

Time: the caches' timer reads `_NOW`, a `ContextVar` that every method sets to its `now` argument
right before touching a cache. A context variable belongs to the calling task, so a decision
awaiting the classifier can never see a time set by another conversation's task.

One decision per conversation at a time: an `asyncio.Lock` per held key (made on first use,
dropped when its last user leaves). Not thread-safe: one event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
from collections import Counter
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence

from cachetools import Cache, TLRUCache, TTLCache

from proxy.reply import Reply
from proxy.state.base import (
    Claim,
    ClaimState,
    ConversationLimits,
    DecisionMemo,
    DeliveryKey,
    Lease,
    LeaseTimeout,
    most_recent,
)
from proxy.state.route import ConversationKey, Route

_NOW: contextvars.ContextVar[float] = contextvars.ContextVar("stickyroute_state_now", default=0.0)

DELIVERY_TTL_S = 24 * 3600.0
"""How long an answered delivery is remembered (Telegram retries an update for about a day)."""
MAX_REPLY_BYTES = 64 * 1024 * 1024
"""Default bound of the stored answers' total size in memory (bytes)."""
MAX_MEMOS = 100_000
"""Default bound of remembered first decisions (count)."""


def _timer() -> float:
    return _NOW.get()


_Answer = tuple[Reply, DecisionMemo | None]
"""A stored answer and the first decision it came from."""


def _answer_size(answer: _Answer) -> int:
    return answer[0].size()


def _idle_expiry(ttl_s: float) -> Callable[[ConversationKey, Route, float], float]:
    """The TLRUCache time-to-use of a route: `ttl_s` seconds after its `last_active`."""

    def expires_at(_key: ConversationKey, route: Route, _now: float) -> float:
        return route.last_active + ttl_s

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


class MemoryDeliveryLog:
    """`DeliveryLog` in this process (see the module docstring).

    `ttl_s` is how long answers and first decisions are kept (seconds); `max_reply_bytes` bounds
    the stored answers' total size (an answer larger than the whole bound is handed to waiters
    but not stored: its redelivery is forwarded again); `max_memos` bounds the first decisions.
    """

    def __init__(self, ttl_s: float = DELIVERY_TTL_S, max_reply_bytes: int = MAX_REPLY_BYTES,
                 max_memos: int = MAX_MEMOS) -> None:
        self.ttl_s = ttl_s
        self.max_reply_bytes = max_reply_bytes
        self._done: TTLCache[DeliveryKey, _Answer] = TTLCache(
            maxsize=max_reply_bytes, ttl=ttl_s, timer=_timer, getsizeof=_answer_size)
        self._memos: TTLCache[DeliveryKey, DecisionMemo] = TTLCache(maxsize=max_memos, ttl=ttl_s, timer=_timer)
        """First decisions of deliveries whose attempts failed (answered ones keep theirs in `_done`)."""
        self._in_flight: dict[DeliveryKey, asyncio.Future[Claim | None] | None] = {}

    async def claim(self, keys: Sequence[DeliveryKey], now: float) -> list[Claim]:
        _NOW.set(now)
        return [self._claim(key) for key in keys]

    def _claim(self, key: DeliveryKey) -> Claim:
        stored = self._done.get(key)
        if stored is not None:
            return Claim(ClaimState.DONE, *stored)
        if key in self._in_flight:
            return Claim(ClaimState.IN_FLIGHT)
        self._in_flight[key] = None  # the waiters' future is made only when someone waits
        return Claim(ClaimState.FIRST, memo=self._memos.get(key))

    async def settle(self, key: DeliveryKey, now: float, timeout_s: float) -> Claim:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while True:
            _NOW.set(now)
            if key not in self._in_flight:
                return self._claim(key)
            pending = self._in_flight[key]
            if pending is None:
                pending = self._in_flight[key] = loop.create_future()
            try:
                async with asyncio.timeout_at(deadline):
                    ended = await asyncio.shield(pending)
            except TimeoutError:
                return Claim(ClaimState.IN_FLIGHT)
            if ended is not None:
                return ended
            # the attempt died without an answer: claim again (one waiter wins, the others wait)

    async def complete(self, keys: Sequence[DeliveryKey], reply: Reply, now: float,
                       memos: Mapping[DeliveryKey, DecisionMemo] | None = None) -> None:
        _NOW.set(now)
        for key in keys:
            memo = self._memos.pop(key, None) or (memos.get(key) if memos else None)  # the first decision wins
            with contextlib.suppress(ValueError):  # cachetools: larger than the whole size bound
                self._done[key] = (reply, memo)
            pending = self._in_flight.pop(key, None)
            if pending is not None and not pending.done():  # someone waits: hand the answer over
                pending.set_result(Claim(ClaimState.DONE, reply, memo))

    async def fail(self, keys: Sequence[DeliveryKey], reply: Reply | None, now: float,
                   memos: Mapping[DeliveryKey, DecisionMemo] | None = None) -> None:
        _NOW.set(now)
        for key in keys:
            if memos and key in memos:
                self._memos.setdefault(key, memos[key])  # the first decision wins
            pending = self._in_flight.pop(key, None)
            if pending is not None and not pending.done():
                pending.set_result(Claim(ClaimState.FAILED, reply) if reply is not None else None)

    async def size(self, now: float) -> int:
        _NOW.set(now)
        self._done.expire()
        return len(self._done)

    async def stored_bytes(self, now: float) -> int:
        """Bytes the stored answers hold at `now` (`Reply.size` each; bound: `max_reply_bytes`)."""
        _NOW.set(now)
        self._done.expire()
        return int(self._done.currsize)

    async def aclose(self) -> None:
        return None
