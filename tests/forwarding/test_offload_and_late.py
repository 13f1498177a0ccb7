"""Huge bodies off the event loop (stickyroute/forwarding/offload.py) and late answers kept for the retry
(stickyroute/forwarding/late.py), as units (issue #10)."""

from __future__ import annotations

import asyncio
import threading

import pytest

from stickyroute import clock
from stickyroute.core.delivery import DecisionMemo
from stickyroute.errors import UpstreamTimeout
from stickyroute.forwarding import offload as offload_module
from stickyroute.forwarding.late import LateAnswers
from stickyroute.forwarding.offload import BREATH_S, CHUNK, OFFLOAD_BYTES, Breather, chunks, offload
from stickyroute.reply import Reply
from stickyroute.state.base import ClaimState
from stickyroute.state.memory import MemoryDeliveryLog

KEY = ("telegram", "7")


@pytest.mark.parametrize(("size", "in_worker"), [(OFFLOAD_BYTES, False), (OFFLOAD_BYTES + 1, True)])
async def test_bodies_above_the_threshold_are_handled_in_a_worker_thread(size: int, in_worker: bool) -> None:
    name = await offload(size, lambda: threading.current_thread().name)
    assert (name != threading.main_thread().name) is in_worker


async def test_chunks_yield_to_the_loop_between_slices() -> None:
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0)

    task = asyncio.ensure_future(ticker())
    await asyncio.sleep(0)
    seen = []
    async for part in chunks(list(range(CHUNK * 3 + 1))):
        seen.append((len(part), ticks))
    task.cancel()
    assert [n for n, _t in seen] == [CHUNK, CHUNK, CHUNK, 1]
    assert seen[0][1] < seen[1][1] < seen[2][1] < seen[3][1]


async def test_the_breather_yields_only_after_its_breath(monkeypatch: pytest.MonkeyPatch) -> None:
    now = [100.0]
    monkeypatch.setattr(clock, "monotonic", lambda: now[0])
    yields = []
    real_sleep = asyncio.sleep

    async def sleep(delay: float) -> None:
        yields.append(delay)
        await real_sleep(delay)

    monkeypatch.setattr(offload_module.asyncio, "sleep", sleep)
    breathe = Breather()
    await breathe()
    now[0] += BREATH_S / 2
    await breathe()
    now[0] += BREATH_S / 2
    await breathe()
    await breathe()
    assert yields == [0]


async def test_a_late_2xx_completes_the_delivery_and_a_waiting_retry_gets_it() -> None:
    log = MemoryDeliveryLog()
    (claim,) = await log.claim([KEY], 1.0)
    exchange: asyncio.Future[Reply] = asyncio.get_running_loop().create_future()
    late = LateAnswers(log, lambda: 2.0)
    late.watch(exchange, [KEY], {KEY: DecisionMemo("coder", "classified")})
    retry = asyncio.ensure_future(log.settle(KEY, 2.0, 10.0))
    await asyncio.sleep(0)
    exchange.set_result(Reply(200, [], b"late"))
    settled = await asyncio.wait_for(retry, 10.0)
    assert (claim.state, settled.state, settled.reply.body, settled.memo, dict(late.outcomes), late.pending) == (
        ClaimState.FIRST, ClaimState.DONE, b"late", DecisionMemo("coder", "classified"), {"answered": 1}, 0)


@pytest.mark.parametrize(("outcome", "counted"), [(Reply(500), "failed"), (UpstreamTimeout("late deadline"), "lost")])
async def test_a_late_failure_releases_the_delivery(outcome: object, counted: str) -> None:
    log = MemoryDeliveryLog()
    await log.claim([KEY], 1.0)
    exchange: asyncio.Future[Reply] = asyncio.get_running_loop().create_future()
    late = LateAnswers(log, lambda: 2.0)
    late.watch(exchange, [KEY], {KEY: DecisionMemo("coder", "classified")})
    if isinstance(outcome, Reply):
        exchange.set_result(outcome)
    else:
        exchange.set_exception(outcome)  # type: ignore[arg-type]
    for _ in range(5):
        await asyncio.sleep(0)
    (again,) = await log.claim([KEY], 3.0)
    assert (again.state, again.memo, dict(late.outcomes)) == (ClaimState.FIRST, DecisionMemo("coder", "classified"),
                                                              {counted: 1})


async def test_shutdown_releases_the_deliveries_still_awaited() -> None:
    log = MemoryDeliveryLog()
    await log.claim([KEY], 1.0)
    exchange: asyncio.Future[Reply] = asyncio.get_running_loop().create_future()
    late = LateAnswers(log, lambda: 2.0)
    late.watch(exchange, [KEY], {})
    await asyncio.sleep(0)
    await late.aclose()
    (again,) = await log.claim([KEY], 3.0)
    assert (again.state, exchange.cancelled(), dict(late.outcomes)) == (ClaimState.FIRST, True, {"lost": 1})
