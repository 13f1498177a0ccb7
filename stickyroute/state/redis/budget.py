"""Budgets on Redis: `ClassifierBudget` is one token bucket hash per channel
(`<prefix>b:{<channel>}`), `SwitchBudget` one per sender and channel
(`<prefix>s:{<channel>:<digest>}`); each is spent by one TAKE script call (one round trip) with
the same arithmetic as `TokenBucket`, so every replica draws from one budget. A hash expires once
it would have refilled to full (an absent bucket is a full one). `now` must be a clock the
replicas share (the wall clock).
"""

from __future__ import annotations

import math

from stickyroute.state.budget import capacity_for, refill_s
from stickyroute.state.redis.client import RedisStore
from stickyroute.state.redis.scripts import TAKE

_IDLE_MS = 60_000
"""Expiry of a bucket that never refills (0 calls per minute)."""


class RedisBudget:
    """Per-channel token buckets in Redis at `rate_per_minute` (see the module docstring)."""

    def __init__(self, store: RedisStore, rate_per_minute: float) -> None:
        self._store = store
        self._rate_per_s = rate_per_minute / 60.0
        self._capacity = capacity_for(rate_per_minute)
        self._keep_ms = (math.ceil(self._capacity / self._rate_per_s * 1000) + store.margin_ms
                         if self._rate_per_s > 0 else _IDLE_MS)

    async def take(self, channel: str, now: float) -> bool:
        spent = await self._store.run("budget", TAKE, [self._store.keys.budget(channel)],
                                      [repr(now), repr(self._rate_per_s), repr(self._capacity), self._keep_ms])
        return bool(spent == 1)

    async def aclose(self) -> None:
        await self._store.aclose()


class RedisSwitchBudget:
    """Per-sender explicit-switch buckets in Redis (see the module docstring)."""

    def __init__(self, store: RedisStore) -> None:
        self._store = store

    async def take(self, channel: str, sender: str, rate_per_minute: float, now: float) -> bool:
        full_s = refill_s(rate_per_minute)
        keep_ms = math.ceil(full_s * 1000) + self._store.margin_ms if math.isfinite(full_s) else _IDLE_MS
        spent = await self._store.run("switches", TAKE, [self._store.keys.switches(channel, sender)],
                                      [repr(now), repr(rate_per_minute / 60.0), repr(capacity_for(rate_per_minute)),
                                       keep_ms])
        return bool(spent == 1)

    async def aclose(self) -> None:
        await self._store.aclose()
