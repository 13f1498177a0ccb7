"""The items of one request decided in lanes: in body order within a lane (one conversation),
lanes concurrently, so a classifier wait of one conversation never holds another's.

    await run_lanes(count, lane_of, run)     run(i) for every i in range(count)

At most PARALLEL_LANES lanes run at once (a batch of thousands of senders must not open as many
state-backend calls at once); each worker yields to the event loop between items (`Breather`).
One item: awaited right here, no task made (a Telegram update).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Hashable

from stickyroute.forwarding.offload import Breather

__all__ = ["PARALLEL_LANES", "run_lanes"]

PARALLEL_LANES = 16
"""Lanes of one request decided at the same time (each holds at most one classifier call)."""


async def run_lanes(count: int, lane_of: Callable[[int], Hashable], run: Callable[[int], Awaitable[None]]) -> None:
    """`run(i)` for each item index, in index order within a lane (`lane_of(i)`); a failure or a
    cancellation stops every lane."""
    if count == 1:
        await run(0)
        return
    lanes: dict[Hashable, list[int]] = {}
    for index in range(count):
        lanes.setdefault(lane_of(index), []).append(index)
    queue = iter(lanes.values())

    async def worker() -> None:
        breathe = Breather()
        for indices in queue:  # shared by the workers: each lane is taken by one of them
            for index in indices:
                await breathe()
                await run(index)

    workers = min(PARALLEL_LANES, len(lanes))
    if workers == 1:
        await worker()
        return
    async with asyncio.TaskGroup() as group:
        for _ in range(workers):
            group.create_task(worker())
