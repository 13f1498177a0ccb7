"""The classifier budget: calls per minute per channel, a token bucket, shared by whatever shares
the backend (one process for `MemoryBudget`, every replica for `RedisBudget`).

    budget.take(channel, now) -> True when a call may be made (a token was spent)

A bucket refills `rate_per_minute` tokens per minute up to a capacity of one minute's worth (at
least 1; 0 per minute means never call) and starts full. `now` is seconds on the caller's clock:
monotonic for one process, the wall clock when replicas share the bucket (their monotonic clocks
do not agree); a clock going back refills nothing.
"""

from __future__ import annotations

from typing import Protocol


class ClassifierBudget(Protocol):
    """Per-channel classifier call budget."""

    async def take(self, channel: str, now: float) -> bool:
        """Spend one call of `channel`'s budget at `now`; False (nothing spent) when it is empty."""
        ...

    async def aclose(self) -> None:
        """Release the backend's resources."""
        ...


def capacity_for(rate_per_minute: float) -> float:
    """Burst capacity of a bucket: one minute's worth, at least 1; 0 when the rate is 0."""
    return max(1.0, rate_per_minute) if rate_per_minute > 0 else 0.0


class TokenBucket:
    """Token bucket: refills `rate_per_minute` tokens per minute up to `capacity`; starts full.

    `now` is seconds on any monotonic scale; a clock going backwards refills nothing.
    """

    __slots__ = ("_capacity", "_rate_per_s", "_tokens", "_updated")

    def __init__(self, rate_per_minute: float, capacity: float, now: float) -> None:
        self._rate_per_s = rate_per_minute / 60.0
        self._capacity = capacity
        self._tokens = capacity
        self._updated = now

    def tokens(self, now: float) -> float:
        """Tokens available at `now` (after refilling)."""
        elapsed = max(0.0, now - self._updated)
        self._tokens = min(self._capacity, self._tokens + elapsed * self._rate_per_s)
        self._updated = max(self._updated, now)
        return self._tokens

    def take(self, now: float) -> bool:
        """Spend one token if there is one; False (nothing spent) when the bucket is empty."""
        if self.tokens(now) < 1.0:
            return False
        self._tokens -= 1.0
        return True


class MemoryBudget:
    """`ClassifierBudget` in this process: one TokenBucket per channel, made on first use."""

    def __init__(self, rate_per_minute: float) -> None:
        self._rate = rate_per_minute
        self._buckets: dict[str, TokenBucket] = {}

    async def take(self, channel: str, now: float) -> bool:
        bucket = self._buckets.get(channel)
        if bucket is None:
            bucket = self._buckets[channel] = TokenBucket(self._rate, capacity_for(self._rate), now)
        return bucket.take(now)

    async def aclose(self) -> None:
        return None
