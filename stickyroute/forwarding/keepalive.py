"""Claim leases kept alive while their attempt runs: every third of `[state] claim_lease_s`.

    keeper = Keeper(deliveries, clock, lease_s)      lease_s None: nothing to renew (memory)
    stop = keeper.hold(keys, lease)                  from the claim to its completion
    stop()                                           (idempotent)

A hold costs one timer (`loop.call_later`) until it first fires: an attempt shorter than a third
of the lease sends nothing. Each renewal is one `DeliveryLog.renew` (one round trip for the
keys, the conversation lease held with them included); a failed renewal is logged by the state
backend's health and tried again at the next period.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Sequence

from stickyroute.core.delivery import DeliveryKey
from stickyroute.state.base import DeliveryLog, Lease, StateUnavailable

__all__ = ["Keeper"]


def _nothing() -> None:
    return None


class Keeper:
    """Renews held claims; `clock()` is wall seconds (the claims' clock)."""

    def __init__(self, deliveries: DeliveryLog, clock: Callable[[], float], lease_s: float | None) -> None:
        self.deliveries = deliveries
        self.clock = clock
        self.period_s = lease_s / 3 if lease_s else None
        self.renewals = 0
        """Renewals sent (one per hold and period)."""
        self._tasks: set[asyncio.Task[None]] = set()

    def hold(self, keys: Sequence[DeliveryKey], lease: Lease | None = None) -> Callable[[], None]:
        """Renew `keys` (and `lease`) every period until the returned function is called."""
        period = self.period_s
        if period is None or not keys:
            return _nothing
        loop = asyncio.get_running_loop()
        held = list(keys)
        state: dict[str, asyncio.TimerHandle | None] = {}

        def tick() -> None:
            task = loop.create_task(self._renew(held, lease))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
            state["timer"] = loop.call_later(period, tick)

        def stop() -> None:
            timer = state.pop("timer", None)
            if timer is not None:
                timer.cancel()

        state["timer"] = loop.call_later(period, tick)
        return stop

    async def _renew(self, keys: list[DeliveryKey], lease: Lease | None) -> None:
        self.renewals += 1
        with contextlib.suppress(StateUnavailable):  # the next period tries again
            await self.deliveries.renew(keys, self.clock(), lease)

    async def aclose(self) -> None:
        """Wait for the renewals in flight."""
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
