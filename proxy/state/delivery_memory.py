"""Memory of delivered webhook ids, so a platform retry is answered without forwarding twice.

Keys are `(channel, delivery_id)`: Telegram `update_id`, WhatsApp message `wamid` (a status is
keyed by the caller, e.g. `"<id>:<status>"`). Platforms are at-least-once and retry (Telegram
per `update_id` for up to 24 h, Meta per `wamid` for up to 7 days; platforms.md 2.5).

A delivery moves through three states, told by `begin`:

    FIRST      nobody holds it: the caller forwards, then calls `complete(key, outcome)` after a
               2xx or `fail(key, outcome_or_exception)` otherwise (always one of the two: use
               try/except BaseException so a cancelled attempt is released too).
    IN_FLIGHT  an earlier attempt is still running: `await claim.wait()` returns that attempt's
               outcome (or raises its exception), whether it succeeded or not.
    DONE       a 2xx was stored: answer with `claim.outcome`, do not forward.

A failed attempt is forgotten, so the next redelivery forwards again. Completed outcomes live in
a `cachetools.TTLCache` (bounded `max_entries`, expiry `ttl_s` seconds after completion, LRU
eviction when full); in-flight attempts live in a plain dict until completed or failed.
`outcome` is whatever the caller stores (the dispatcher keeps the `UpstreamReply` and the
routing decision).

WhatsApp batches use the `*_many` forms: one claim per message id, so a retried POST forwards
only the ids that did not get a 2xx, and `all_delivered` says when the whole POST is a
redelivery. Not thread-safe: one event loop.
"""

from __future__ import annotations

import asyncio
import enum
import time
from dataclasses import dataclass
from typing import Callable, Generic, Iterable, TypeVar

from cachetools import TTLCache

T = TypeVar("T")
DeliveryKey = tuple[str, str]
"""(channel name, delivery id as a string)."""
_MISSING = object()


class ClaimState(enum.Enum):
    """What the caller of `begin` must do with a delivery."""

    FIRST = "first"
    IN_FLIGHT = "in_flight"
    DONE = "done"


@dataclass(frozen=True, slots=True)
class Claim(Generic[T]):
    """The answer of `DeliveryMemory.begin` for one key.

    `outcome` is set for DONE; `_pending` is the first attempt's future for IN_FLIGHT.
    """

    state: ClaimState
    outcome: T | None = None
    _pending: asyncio.Future[T] | None = None

    async def wait(self) -> T:
        """IN_FLIGHT: the first attempt's outcome (raises its exception). DONE: `outcome`.

        Shielded: cancelling one waiter never cancels the shared attempt result.
        """
        if self.state is ClaimState.DONE:
            return self.outcome  # type: ignore[return-value]
        if self._pending is None:
            raise RuntimeError("a FIRST claim has nothing to wait for: forward the delivery")
        return await asyncio.shield(self._pending)


class DeliveryMemory(Generic[T]):
    """Per-channel memory of delivery ids: completed outcomes (TTL, bounded) and attempts in flight.

    `max_entries` bounds the completed entries; `ttl_s` is their lifetime in seconds (24 h
    default, Telegram's retention); `timer` returns seconds (tests pass a fake clock). With
    `max_bytes` and `sizeof(outcome) -> bytes` the bound is the outcomes' total size instead
    (least recently used dropped first).
    """

    def __init__(
        self,
        max_entries: int = 100_000,
        ttl_s: float = 24 * 3600.0,
        timer: Callable[[], float] = time.monotonic,
        max_bytes: int | None = None,
        sizeof: Callable[[T], int] | None = None,
    ) -> None:
        if max_bytes is not None and sizeof is not None:  # bound the memory by size, not count
            self._done: TTLCache[DeliveryKey, T] = TTLCache(maxsize=max_bytes, ttl=ttl_s, timer=timer, getsizeof=sizeof)
        else:
            self._done = TTLCache(maxsize=max_entries, ttl=ttl_s, timer=timer)
        self._in_flight: dict[DeliveryKey, asyncio.Future[T] | None] = {}

    def __len__(self) -> int:
        """Number of remembered completed deliveries (expired ones excluded)."""
        self._done.expire()
        return len(self._done)

    def begin(self, key: DeliveryKey) -> Claim[T]:
        """Claim `key`: DONE (stored outcome), IN_FLIGHT (wait for the first attempt) or FIRST."""
        stored = self._done.get(key, _MISSING)
        if stored is not _MISSING:
            return Claim(ClaimState.DONE, outcome=stored)
        if key in self._in_flight:
            pending = self._in_flight[key]
            if pending is None:
                pending = asyncio.get_running_loop().create_future()
                self._in_flight[key] = pending
            return Claim(ClaimState.IN_FLIGHT, _pending=pending)
        self._in_flight[key] = None  # the waiters' future is made only when someone waits
        return Claim(ClaimState.FIRST)

    def complete(self, key: DeliveryKey, outcome: T) -> None:
        """The FIRST attempt of `key` got a 2xx: remember `outcome` and hand it to the waiters.

        An outcome larger than the whole `max_bytes` budget is handed to the waiters but not
        remembered (a later redelivery is forwarded again).
        """
        try:
            self._done[key] = outcome
        except ValueError:  # cachetools: "value too large" for the size budget
            pass
        self._release(key, outcome)

    def fail(self, key: DeliveryKey, outcome: T | BaseException) -> None:
        """The FIRST attempt of `key` failed: forget it (the next redelivery forwards again).

        Waiters get `outcome`: a value is returned by `Claim.wait`, an exception is raised there.
        """
        self._release(key, outcome)

    def _release(self, key: DeliveryKey, outcome: T | BaseException) -> None:
        pending = self._in_flight.pop(key, None)
        if pending is None or pending.done():
            return
        if isinstance(outcome, BaseException):
            pending.set_exception(outcome)
            pending.exception()  # retrieved: no "never retrieved" log when every waiter left
        else:
            pending.set_result(outcome)

    def delivered(self, key: DeliveryKey) -> bool:
        """True when `key` got a 2xx within the last `ttl_s` seconds."""
        return key in self._done

    def all_delivered(self, channel: str, ids: Iterable[str]) -> bool:
        """True when every id of one POST was delivered already (a pure redelivery).

        False for an empty `ids`: a POST without ids is never a redelivery.
        """
        keys = [(channel, delivery_id) for delivery_id in ids]
        return bool(keys) and all(key in self._done for key in keys)

    def begin_many(self, channel: str, ids: Iterable[str]) -> dict[str, Claim[T]]:
        """`begin` for each id of one batch POST (duplicates claimed once), in order."""
        return {delivery_id: self.begin((channel, delivery_id)) for delivery_id in dict.fromkeys(ids)}

    def complete_many(self, channel: str, ids: Iterable[str], outcome: T) -> None:
        """`complete` for each id of the part of a batch that got a 2xx."""
        for delivery_id in ids:
            self.complete((channel, delivery_id), outcome)

    def fail_many(self, channel: str, ids: Iterable[str], outcome: T | BaseException) -> None:
        """`fail` for each id of the part of a batch that did not get a 2xx."""
        for delivery_id in ids:
            self.fail((channel, delivery_id), outcome)
