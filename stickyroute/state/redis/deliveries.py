"""`DeliveryLog` on Redis: one hash per delivery, shared by every replica.

    fields   t, tu   the attempt in flight: its random token and until when the claim holds
                     (a lease of `claim_ttl_s`, `[state] claim_lease_s`, renewed by `renew` every
                     third of it while the forward runs, so a dead holder frees it within one)
             a, au   the stored answer (codec.reply_blob) and until when it is answered from Redis
             m, mu   the first decision (kept `ttl_s` after it was made)
             ft, fr  the last failed attempt's token and answer ('' = died without one)
             n       attempts claimed so far (`Claim.attempt`, `X-Stickyroute-Attempt`)

    claim     CLAIM script per key (a batch: one pipeline, one round trip): DONE with the answer,
              IN_FLIGHT (the holder's token is noted for `settle`), or FIRST (claim taken)
    settle    SETTLE polls (2 ms doubling to 50 ms, until `timeout_s`): DONE, FAILED with the
              awaited attempt's answer, FIRST when it died without one (the poll claims it;
              one waiter wins, the others wait for the winner), IN_FLIGHT at the deadline
    complete  COMPLETE script: store the answer, end the claim, keep the first decision
    fail      FAIL script: end our claim (not a newer holder's), note (token, answer) for waiters
    note      MEMO script per key: keep the first decision before the forward
    renew     RENEW script per key: extend our claim (and the conversation lock held with it)

A delivery that `RedisDeliverySteps.begin` claimed lives under its conversation's hash tag
(`KeyLayout.delivery(key, digest)`): the log remembers the digest per key (`place`), so every
later call on the key names the same hash.

Answers larger than `max_reply_bytes` are kept only for the claim's time (the waiters of that
attempt still get them; a later redelivery is forwarded again, like the memory backend). The
hash's PEXPIRE never shortens (the longest of claim, answer and decision wins). `size` SCANs
every delivery: O(remembered deliveries), for tests and diagnostics, never per request.
"""

from __future__ import annotations

import asyncio
import math
import os
from collections.abc import Mapping, Sequence

from cachetools import LRUCache

from stickyroute.core.delivery import DecisionMemo, DeliveryKey
from stickyroute.reply import Reply
from stickyroute.state.base import Claim, ClaimState, Lease
from stickyroute.state.redis.client import Call, RedisStore
from stickyroute.state.redis.codec import memo_blob, memo_from, reply_blob, reply_from
from stickyroute.state.redis.scripts import CLAIM, COMPLETE, FAIL, SETTLE
from stickyroute.state.redis.step_scripts import MEMO, RENEW

POLL_FIRST_S = 0.002
POLL_MAX_S = 0.05
DELIVERY_TTL_S = 24 * 3600.0
MAX_REPLY_BYTES = 1024 * 1024
_TOKENS = 65536
"""Bound of the tokens remembered per process (claims held, holders seen); far above what is in
flight at once."""
_STATES = {b"done": ClaimState.DONE, b"busy": ClaimState.IN_FLIGHT, b"first": ClaimState.FIRST,
           b"failed": ClaimState.FAILED}


class RedisDeliveryLog:
    """`DeliveryLog` on Redis (see the module docstring); times in seconds on the caller's clock."""

    def __init__(self, store: RedisStore, ttl_s: float = DELIVERY_TTL_S, claim_ttl_s: float = 5.0,
                 max_reply_bytes: int = MAX_REPLY_BYTES) -> None:
        self._store = store
        self._keys = store.keys
        self._ttl_s = ttl_s
        self._claim_ttl_s = claim_ttl_s
        self._ttl_ms = math.ceil(ttl_s * 1000)
        self._claim_ms = math.ceil(claim_ttl_s * 1000)
        self._max_reply_bytes = max_reply_bytes
        self._held: LRUCache[DeliveryKey, str] = LRUCache(_TOKENS)
        self._seen: LRUCache[DeliveryKey, str] = LRUCache(_TOKENS)
        self._where: LRUCache[DeliveryKey, str] = LRUCache(_TOKENS)
        """The conversation digest of the keys kept under their conversation's hash tag."""

    @property
    def store(self) -> RedisStore:
        """The Redis connection this log uses."""
        return self._store

    @property
    def ttl_s(self) -> float:
        """How long answers and first decisions are kept, in seconds."""
        return self._ttl_s

    @property
    def ttl_ms(self) -> int:
        """How long answers and first decisions are kept, in milliseconds."""
        return self._ttl_ms

    @property
    def claim_ms(self) -> int:
        """The claim lease in milliseconds."""
        return self._claim_ms

    @property
    def lock_ms(self) -> int:
        """How long a conversation lock taken with a claim lives without renewal (ms): a third of
        the lease (at most a second) shorter than the claim, so a dead holder's lock is free by
        the time its claim is (Redis counts the lock, the proxies' clocks the claim)."""
        return self._claim_ms - min(1000, self._claim_ms // 3)

    def place(self, key: DeliveryKey, digest: str) -> str:
        """Keep `key` under the hash tag of the conversation whose digest is `digest`; its name."""
        self._where[key] = digest
        return self._keys.delivery(key, digest)

    def name(self, key: DeliveryKey) -> str:
        """The hash of `key` (under its conversation's tag when `place`d)."""
        return self._keys.delivery(key, self._where.get(key))

    def claim_args(self, now: float) -> tuple[str, str]:
        """A new claim's (token, until)."""
        return os.urandom(8).hex(), repr(now + self._claim_ttl_s)  # secrets.token_hex(8), one call

    def memo_args(self, memo: DecisionMemo | None, now: float) -> list[str]:
        """A first decision's (blob, until) arguments ('' none)."""
        return [memo_blob(memo) if memo is not None else "", repr(now + self._ttl_s)]

    def answer_args(self, reply: Reply) -> tuple[bytes, float, int]:
        """A 2xx's (blob, seconds it is stored, keep_ms): a reply larger than `max_reply_bytes` is
        kept only for the claim's time."""
        blob = reply_blob(reply)
        if len(blob) <= self._max_reply_bytes:
            return blob, self._ttl_s, self._ttl_ms
        return blob, self._claim_ttl_s, self._claim_ms

    def failed_blob(self, reply: Reply | None) -> bytes:
        """What waiters of a failed attempt get ('' died without an answer)."""
        blob = reply_blob(reply) if reply is not None else b""
        if len(blob) > self._max_reply_bytes:
            blob = reply_blob(Reply(reply.status if reply is not None else 502, [], b"(answer too large to keep)"))
        return blob

    def holder(self, key: DeliveryKey) -> str:
        """Forget and return this process's token on `key` ('' none)."""
        return self._held.pop(key, "")

    def _claim_args(self, now: float) -> tuple[str, str]:
        return self.claim_args(now)

    async def claim(self, keys: Sequence[DeliveryKey], now: float) -> list[Claim]:
        calls: list[Call] = []
        tokens = []
        for key in keys:
            token, until = self._claim_args(now)
            tokens.append(token)
            calls.append((CLAIM, [self.name(key)], [repr(now), token, until, self._claim_ms]))
        results = await self._store.run_many("claim", calls)
        return [self._outcome(key, token, result) for key, token, result in zip(keys, tokens, results, strict=True)]

    def outcome(self, key: DeliveryKey, token: str, result: list[bytes | None]) -> Claim:
        """The Claim of a CLAIM / SETTLE / BEGIN answer taken with `token`."""
        return self._outcome(key, token, result)

    def _outcome(self, key: DeliveryKey, token: str, result: list[bytes | None]) -> Claim:
        state = _STATES[result[0] or b""]
        memo = memo_from(result[1])
        if state is ClaimState.FIRST:
            self._held[key] = token
            return Claim(state, memo=memo, attempt=int(result[2]) if len(result) > 2 and result[2] else 1)
        if state is ClaimState.IN_FLIGHT:
            self._seen[key] = (result[2] or b"").decode()
            return Claim(state)
        reply = reply_from(result[2] or b"")
        return Claim(state, reply, memo if state is ClaimState.DONE else None)

    async def settle(self, key: DeliveryKey, now: float, timeout_s: float) -> Claim:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        awaited = self._seen.pop(key, "")
        delay = POLL_FIRST_S
        name = [self.name(key)]
        while True:
            token, until = self._claim_args(now)
            result = await self._store.run("settle", SETTLE, name,
                                           [repr(now), awaited, token, until, self._claim_ms])
            if result[0] != b"busy":
                return self._outcome(key, token, result)
            awaited = (result[2] or b"").decode()
            left = deadline - loop.time()
            if left <= 0:
                return Claim(ClaimState.IN_FLIGHT)
            await asyncio.sleep(min(delay, left))
            delay = min(delay * 2, POLL_MAX_S)

    async def complete(self, keys: Sequence[DeliveryKey], reply: Reply, now: float,
                       memos: Mapping[DeliveryKey, DecisionMemo] | None = None) -> None:
        blob, stored_s, keep_ms = self.answer_args(reply)
        calls: list[Call] = []
        for key in keys:
            self._held.pop(key, None)
            memo = (memos or {}).get(key)
            args = [repr(now), blob, repr(now + stored_s), *self.memo_args(memo, now),
                    self._ttl_ms if memo else keep_ms]
            calls.append((COMPLETE, [self.name(key)], args))
        if calls:
            await self._store.run_many("complete", calls)

    async def fail(self, keys: Sequence[DeliveryKey], reply: Reply | None, now: float,
                   memos: Mapping[DeliveryKey, DecisionMemo] | None = None) -> None:
        blob = self.failed_blob(reply)
        calls: list[Call] = []
        for key in keys:
            token = self._held.pop(key, "")
            memo = (memos or {}).get(key)
            args = [repr(now), token, blob, *self.memo_args(memo, now), self._ttl_ms if memo else self._claim_ms]
            calls.append((FAIL, [self.name(key)], args))
        if calls:
            await self._store.run_many("fail", calls)

    async def note(self, memos: Mapping[DeliveryKey, DecisionMemo], now: float) -> None:
        calls: list[Call] = [(MEMO, [self.name(key)], [repr(now), *self.memo_args(memo, now), self._ttl_ms])
                             for key, memo in memos.items()]
        if calls:
            await self._store.run_many("note", calls)

    async def renew(self, keys: Sequence[DeliveryKey], now: float, lease: Lease | None = None) -> None:
        until = repr(now + self._claim_ttl_s)
        calls: list[Call] = []
        for key in keys:
            token = self._held.get(key)
            if token is None:
                continue
            if lease is not None:
                calls.append((RENEW, [self.name(key), self._keys.lock(lease.key)],
                              [token, until, self._claim_ms, lease.token, self.lock_ms]))
            else:
                calls.append((RENEW, [self.name(key)], [token, until, self._claim_ms]))
        if calls:
            await self._store.run_many("renew", calls)

    async def size(self, now: float) -> int:
        stored = 0
        async for _name, (answer, until) in self._store.scan_fields("size", self._keys.deliveries_pattern(),
                                                                     ["a", "au"]):
            stored += bool(answer is not None and until and float(until) > now)
        return stored

    async def stored_bytes(self, now: float) -> int | None:
        """None: summing `MEMORY USAGE` per key is too costly for `/stats` (README capacity note)."""
        return None

    async def aclose(self) -> None:
        await self._store.aclose()
