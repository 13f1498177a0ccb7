"""Claim leases kept alive while their attempt runs: every third of `[state] claim_lease_s`.

    keeper = Keeper(deliveries, clock, lease_s)      lease_s None: nothing to renew (memory)
    stop = keeper.hold(keys, lease)                  from the claim to its completion
    stop()                                           (idempotent)

Every hold is renewed a period after it starts, then every period, until stopped: an attempt
shorter than a third of the lease sends nothing. The holds share one timer: they are kept in the
order they are due (one period for all, so the order they started in), the timer set for the
first; a hold costs a dict entry, no timer of its own to set and cancel per request. Each
renewal is one `DeliveryLog.renew` (one round trip for the keys, the conversation lease held with
them included); a failed renewal is logged by the state backend's health and tried again at the
next period.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import Callable, Sequence

from stickyroute.core.delivery import DeliveryKey
from stickyroute.state.base import DeliveryLog, Lease, StateUnavailable

__all__ = ["Keeper"]


def _nothing() -> None:
    return None


class _Hold:
    """One hold: its keys, its conversation lease, and when it is next renewed (loop seconds)."""

    __slots__ = ("due", "keys", "lease")

    def __init__(self, keys: list[DeliveryKey], lease: Lease | None, due: float) -> None:
        self.keys = keys
        self.lease = lease
        self.due = due


class Keeper:
    """Renews held claims; `clock()` is wall seconds (the claims' clock)."""

    def __init__(self, deliveries: DeliveryLog, clock: Callable[[], float], lease_s: float | None) -> None:
        self.deliveries = deliveries
        self.clock = clock
        self.period_s = lease_s / 3 if lease_s else None
        self.renewals = 0
        """Renewals sent (one per hold and period)."""
        self._tasks: set[asyncio.Task[None]] = set()
        self._holds: dict[_Hold, None] = {}
        """The holds in the order they are due (insertion order)."""
        self._timer: asyncio.TimerHandle | None = None

    def hold(self, keys: Sequence[DeliveryKey], lease: Lease | None = None) -> Callable[[], None]:
        """Renew `keys` (and `lease`) every period until the returned function is called."""
        period = self.period_s
        if period is None or not keys:
            return _nothing
        loop = asyncio.get_running_loop()
        held = _Hold(list(keys), lease, loop.time() + period)
        self._holds[held] = None
        if self._timer is None:
            self._timer = loop.call_at(held.due, self._due)
        return functools.partial(self._holds.pop, held, None)

    def _due(self) -> None:
        """Renew the holds that are due (each due again one period later), then wait for the next."""
        self._timer = None
        if not self._holds:
            return
        loop = asyncio.get_running_loop()
        now, period = loop.time(), self.period_s
        assert period is not None
        for held in list(self._holds):
            if held.due > now:
                break
            del self._holds[held]
            held.due = now + period
            self._holds[held] = None  # due last
            task = loop.create_task(self._renew(held.keys, held.lease))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        if self._holds:
            self._timer = loop.call_at(next(iter(self._holds)).due, self._due)

    async def _renew(self, keys: list[DeliveryKey], lease: Lease | None) -> None:
        self.renewals += 1
        with contextlib.suppress(StateUnavailable):  # the next period tries again
            await self.deliveries.renew(keys, self.clock(), lease)

    async def aclose(self) -> None:
        """Wait for the renewals in flight."""
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
