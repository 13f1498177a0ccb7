"""Budgets as token buckets, shared by whatever shares the backend (one process for the memory
ones, every replica for the Redis ones):

    budget.take(channel, now) -> True when a classifier call may be made (a token was spent)
    switches.take(channel, sender, rate_per_minute, now) -> True when the sender may switch
                                explicitly (issue #11: `explicit_switches_per_minute`)

A bucket refills `rate_per_minute` tokens per minute up to a capacity of one minute's worth (at
least 1; 0 per minute means never call) and starts full. `now` is seconds on the caller's clock:
monotonic for one process, the wall clock when replicas share the bucket (their monotonic clocks
do not agree); a clock going back refills nothing.
"""

from __future__ import annotations

from typing import Protocol

from cachetools import TLRUCache


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

    __slots__ = ("_capacity", "_rate_per_s", "_tokens", "_updated", "rate_per_minute")

    def __init__(self, rate_per_minute: float, capacity: float, now: float) -> None:
        self.rate_per_minute = rate_per_minute
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


class SwitchBudget(Protocol):
    """Explicit switches per sender and channel (`explicit_switches_per_minute`)."""

    async def take(self, channel: str, sender: str, rate_per_minute: float, now: float) -> bool:
        """Spend one switch of `sender` on `channel` at `now`, the bucket refilling
        `rate_per_minute` a minute; False (nothing spent) when it is empty."""
        ...

    async def aclose(self) -> None:
        """Release the backend's resources."""
        ...


MAX_SENDERS = 100_000
"""Default bound of the senders whose switch buckets a process keeps (least recently used
dropped: a dropped sender starts again with a full bucket)."""


def refill_s(rate_per_minute: float) -> float:
    """Seconds an empty bucket takes to fill (then it is as good as absent); inf at rate 0."""
    return capacity_for(rate_per_minute) / rate_per_minute * 60.0 if rate_per_minute > 0 else float("inf")


class MemorySwitchBudget:
    """`SwitchBudget` in this process: one TokenBucket per (channel, sender), dropped once it
    would have refilled (an absent bucket is a full one), at most `max_senders` kept."""

    def __init__(self, max_senders: int = MAX_SENDERS) -> None:
        self._now = 0.0
        self._buckets: TLRUCache[tuple[str, str], tuple[TokenBucket, float]] = TLRUCache(
            maxsize=max_senders, ttu=lambda _key, value, now: now + value[1], timer=lambda: self._now)

    async def take(self, channel: str, sender: str, rate_per_minute: float, now: float) -> bool:
        self._now = now
        key = (channel, sender)
        found = self._buckets.get(key)
        if found is None or found[0].rate_per_minute != rate_per_minute:  # a reload changed the rate
            found = (TokenBucket(rate_per_minute, capacity_for(rate_per_minute), now), refill_s(rate_per_minute))
        ok = found[0].take(now)
        self._buckets[key] = found  # refreshes its expiry
        return ok

    async def aclose(self) -> None:
        return None
