"""The Redis operation deadline counts the event loop's free time only: a reply that arrived while
the loop was busy (a CPU-bound task) is not late; a reply that never comes still is."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager

import pytest

from stickyroute.state.lag import lag_of, loop_deadline

TIMEOUT_S = 0.1
BUSY_S = 0.3
"""Three timeouts of CPU-bound work on the loop: a plain asyncio.timeout would expire."""


def _hog(loop: asyncio.AbstractEventLoop) -> None:
    end = loop.time() + BUSY_S
    while loop.time() < end:  # CPU-bound, holding the loop
        pass


async def _reply_after_a_busy_loop(deadline: Callable[[float], AbstractAsyncContextManager[object]]) -> str:
    """The loop is busy for BUSY_S at once; the reply is due at 2 x TIMEOUT_S (so it is ready,
    with the deadline's timer, when the loop comes back)."""
    loop = asyncio.get_running_loop()
    reply: asyncio.Future[str] = loop.create_future()
    loop.call_soon(_hog, loop)
    loop.call_later(TIMEOUT_S * 2, reply.set_result, "OK")
    try:
        async with deadline(TIMEOUT_S):
            return await reply
    finally:
        reply.cancel()


async def test_a_reply_that_waited_for_a_busy_loop_is_not_late() -> None:
    lag = lag_of(asyncio.get_running_loop())
    before = lag.total
    assert await _reply_after_a_busy_loop(loop_deadline) == "OK"
    assert lag.total - before > TIMEOUT_S  # the busy time was seen as lag


async def test_a_plain_timeout_would_have_called_it_late() -> None:
    with pytest.raises(TimeoutError):
        await _reply_after_a_busy_loop(asyncio.timeout)


async def test_a_reply_that_never_comes_is_late_even_after_a_busy_loop() -> None:
    loop = asyncio.get_running_loop()
    never: asyncio.Future[str] = loop.create_future()
    loop.call_soon(_hog, loop)
    with pytest.raises(TimeoutError):
        async with loop_deadline(TIMEOUT_S):
            await never


async def test_the_tick_runs_only_while_a_deadline_is_pending() -> None:
    lag = lag_of(asyncio.get_running_loop())
    async with loop_deadline(TIMEOUT_S):
        during = lag.ticking
    async with asyncio.timeout(10.0):  # hang guard: the tick stops at its next run
        while lag.ticking:  # noqa: ASYNC110 (a bounded poll of the loop's own timer)
            await asyncio.sleep(0.001)
    assert (during, lag.ticking) == (True, False)
