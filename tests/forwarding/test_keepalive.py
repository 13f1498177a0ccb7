"""Claim leases kept alive by `Keeper`: each hold renewed every period until stopped; the holds
share one timer."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any, cast

from stickyroute.core.delivery import DeliveryKey
from stickyroute.forwarding.keepalive import Keeper
from stickyroute.state.base import DeliveryLog, Lease

LEASE_S = 0.03
"""A period of 10 ms."""
GUARD_S = 10.0
"""Hang guard only: nothing here asserts how long anything took."""


class _Renewals:
    """A DeliveryLog that records its renewals (keys of each call) and wakes a waiter on each."""

    def __init__(self) -> None:
        self.calls: list[tuple[DeliveryKey, ...]] = []
        self.changed = asyncio.Event()

    async def renew(self, keys: Sequence[DeliveryKey], now: float, lease: Lease | None = None) -> None:
        self.calls.append(tuple(keys))
        self.changed.set()

    async def until(self, count: int) -> None:
        async with asyncio.timeout(GUARD_S):
            while len(self.calls) < count:
                self.changed.clear()
                await self.changed.wait()


def _keeper(log: _Renewals) -> Keeper:
    return Keeper(cast(DeliveryLog, cast(Any, log)), lambda: 0.0, LEASE_S)


async def test_a_hold_is_renewed_every_period_until_stopped() -> None:
    log = _Renewals()
    keeper = _keeper(log)
    stop = keeper.hold([("telegram", "1")])
    await log.until(3)
    stop()
    stop()  # idempotent
    await asyncio.sleep(0)  # a renewal begun before the stop has run
    seen = len(log.calls)
    other = _Renewals()
    probe = _keeper(other)
    probe_stop = probe.hold([("telegram", "probe")])
    await other.until(2)  # two periods later: the stopped hold was not renewed again
    probe_stop()
    await keeper.aclose()
    await probe.aclose()
    assert log.calls == [(("telegram", "1"),)] * seen


async def test_holds_share_the_timer_and_each_keeps_its_own_keys() -> None:
    log = _Renewals()
    keeper = _keeper(log)
    stop_a = keeper.hold([("telegram", "a")])
    stop_b = keeper.hold([("telegram", "b"), ("telegram", "c")])
    await log.until(2)
    stop_a()
    await asyncio.sleep(0)  # a renewal begun before the stop has run
    count = len(log.calls)
    await log.until(count + 2)  # only b's from now on
    stop_b()
    await keeper.aclose()
    assert set(log.calls[:2]) == {(("telegram", "a"),), (("telegram", "b"), ("telegram", "c"))}
    assert set(log.calls[count:]) == {(("telegram", "b"), ("telegram", "c"))}


async def test_without_a_lease_a_hold_costs_nothing() -> None:
    log = _Renewals()
    keeper = Keeper(cast(DeliveryLog, cast(Any, log)), lambda: 0.0, None)
    keeper.hold([("telegram", "1")])()
    assert keeper.period_s is None and log.calls == []
