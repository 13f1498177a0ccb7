"""`DeliveryLog` and `DeliverySteps` in this process: stored answers in one `TTLCache` bounded by their total size in
bytes (`max_reply_bytes`, least recently used dropped); first decisions in a `TTLCache` bounded
by count; asyncio futures for the attempts waited on. Not thread-safe: one event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping, Sequence

from cachetools import TTLCache

from stickyroute.core.delivery import DecisionMemo, DeliveryKey
from stickyroute.core.route import ConversationKey
from stickyroute.reply import Reply
from stickyroute.state._now import NOW, timer
from stickyroute.state.base import Claim, ClaimState, ConversationState, Lease, LeaseTimeout
from stickyroute.state.steps import Begun, Writes

DELIVERY_TTL_S = 24 * 3600.0
"""How long an answered delivery is remembered (Telegram retries an update for about a day)."""
MAX_REPLY_BYTES = 64 * 1024 * 1024
"""Default bound of the stored answers' total size in memory (bytes)."""
MAX_MEMOS = 100_000
"""Default bound of remembered first decisions (count)."""

_Answer = tuple[Reply, DecisionMemo | None]
"""A stored answer and the first decision it came from."""


def _answer_size(answer: _Answer) -> int:
    return answer[0].size()


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
            maxsize=max_reply_bytes, ttl=ttl_s, timer=timer, getsizeof=_answer_size)
        self._memos: TTLCache[DeliveryKey, DecisionMemo] = TTLCache(maxsize=max_memos, ttl=ttl_s, timer=timer)
        """First decisions of deliveries whose attempts failed (answered ones keep theirs in `_done`)."""
        self._in_flight: dict[DeliveryKey, asyncio.Future[Claim | None] | None] = {}
        self._attempts: TTLCache[DeliveryKey, int] = TTLCache(maxsize=max_memos, ttl=ttl_s, timer=timer)
        """Attempts claimed per delivery (bounded like the first decisions)."""

    async def claim(self, keys: Sequence[DeliveryKey], now: float) -> list[Claim]:
        NOW.set(now)
        return [self._claim(key) for key in keys]

    def _claim(self, key: DeliveryKey) -> Claim:
        stored = self._done.get(key)
        if stored is not None:
            return Claim(ClaimState.DONE, *stored)
        if key in self._in_flight:
            return Claim(ClaimState.IN_FLIGHT)
        self._in_flight[key] = None  # the waiters' future is made only when someone waits
        attempt = self._attempts[key] = self._attempts.get(key, 0) + 1
        return Claim(ClaimState.FIRST, memo=self._memos.get(key), attempt=attempt)

    async def settle(self, key: DeliveryKey, now: float, timeout_s: float) -> Claim:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while True:
            NOW.set(now)
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
        NOW.set(now)
        for key in keys:
            memo = self._memos.pop(key, None) or (memos.get(key) if memos else None)  # the first decision wins
            self._attempts.pop(key, None)
            with contextlib.suppress(ValueError):  # cachetools: larger than the whole size bound
                self._done[key] = (reply, memo)
            pending = self._in_flight.pop(key, None)
            if pending is not None and not pending.done():  # someone waits: hand the answer over
                pending.set_result(Claim(ClaimState.DONE, reply, memo))

    async def fail(self, keys: Sequence[DeliveryKey], reply: Reply | None, now: float,
                   memos: Mapping[DeliveryKey, DecisionMemo] | None = None) -> None:
        NOW.set(now)
        for key in keys:
            if memos and key in memos:
                self._memos.setdefault(key, memos[key])  # the first decision wins
            pending = self._in_flight.pop(key, None)
            if pending is not None and not pending.done():
                pending.set_result(Claim(ClaimState.FAILED, reply) if reply is not None else None)

    async def note(self, memos: Mapping[DeliveryKey, DecisionMemo], now: float) -> None:
        NOW.set(now)
        for key, memo in memos.items():
            self._memos.setdefault(key, memo)  # the first decision wins

    async def renew(self, keys: Sequence[DeliveryKey], now: float, lease: Lease | None = None) -> None:
        """Nothing to renew: a claim in memory lives as long as this process."""
        return None

    async def size(self, now: float) -> int:
        NOW.set(now)
        self._done.expire()
        return len(self._done)

    async def stored_bytes(self, now: float) -> int:
        """Bytes the stored answers hold at `now` (`Reply.size` each; bound: `max_reply_bytes`)."""
        NOW.set(now)
        self._done.expire()
        return int(self._done.currsize)

    async def aclose(self) -> None:
        return None


class MemoryDeliverySteps:
    """`DeliverySteps` over a conversation state and a delivery log of this process (the same
    steps as on Redis: the conversation is held from `begin` to `finish`)."""

    def __init__(self, conversations: ConversationState, deliveries: MemoryDeliveryLog) -> None:
        self.conversations = conversations
        self.deliveries = deliveries

    async def begin(self, key: DeliveryKey, conversation: ConversationKey, now: float, *, hold: bool) -> Begun:
        [claim] = await self.deliveries.claim([key], now)
        if claim.state is not ClaimState.FIRST or claim.memo is not None or not hold:
            return Begun(claim)
        try:
            return Begun(claim, await self.conversations.acquire(conversation, now, wait_s=0.0))
        except LeaseTimeout:
            return Begun(claim)

    async def note(self, key: DeliveryKey, lease: Lease, writes: Writes, memo: DecisionMemo, now: float) -> None:
        await self.conversations.commit(lease, now, store=writes.store, forget=writes.forget, text=writes.text)

    async def finish(self, key: DeliveryKey, lease: Lease, writes: Writes, reply: Reply | None,
                     memo: DecisionMemo | None, now: float, *, keep: bool = False) -> None:
        await self.conversations.commit(lease, now, store=writes.store, forget=writes.forget, text=writes.text)
        if keep:
            return
        if reply is not None and reply.ok:
            await self.deliveries.complete([key], reply, now, {key: memo} if memo is not None else None)
        else:
            await self.deliveries.fail([key], reply, now, {key: memo} if memo is not None else None)
