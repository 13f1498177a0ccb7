"""Keeping the event loop free while one request carries a huge body (issue #10: a WhatsApp batch
of 20,000 messages held both listeners for minutes).

    await offload(len(body), fn, *args)        fn(*args), in a worker thread above OFFLOAD_BYTES
    breather = Breather(); await breather()    yield to the loop once BREATH_S passed since the last yield
    async for part in chunks(items): ...       slices of CHUNK items, yielding between them

Pure-Python work in a worker thread gives the loop the GIL every switch interval (5 ms); a
single C call (the JSON parser) keeps it for its own duration, about 1 ms per 100 KB here.
Measured by `bench/batch_bench.py` (time and the longest loop stall against the batch size).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Generic, ParamSpec, TypeVar

from stickyroute import clock

__all__ = ["BREATH_S", "CHUNK", "OFFLOAD_BYTES", "Breather", "chunks", "offload"]

OFFLOAD_BYTES = 64 * 1024
"""Bodies larger than this (bytes) are parsed, authenticated and split in a worker thread."""
CHUNK = 128
"""Items decided, claimed or completed between two yields to the event loop."""

P = ParamSpec("P")
T = TypeVar("T")
Item = TypeVar("Item")


async def offload(size: int, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """`fn(*args)`, run in a worker thread when `size` (bytes of the body it reads) is above
    OFFLOAD_BYTES, else right here."""
    if size > OFFLOAD_BYTES:
        return await asyncio.to_thread(fn, *args, **kwargs)
    return fn(*args, **kwargs)


BREATH_S = 0.002
"""Longest a loop over the items of one request runs before it yields to the event loop (seconds)."""


class Breather:
    """`await breather()` in a loop: yields to the event loop when BREATH_S passed since the last
    yield (monotonic clock), so other requests run between the items of a huge batch."""

    __slots__ = ("_since",)

    def __init__(self) -> None:
        self._since = clock.monotonic()

    async def __call__(self) -> None:
        now = clock.monotonic()
        if now - self._since >= BREATH_S:
            await asyncio.sleep(0)
            self._since = clock.monotonic()


class chunks(Generic[Item]):  # lower case: used as `async for part in chunks(items)`
    """`items` in slices of at most CHUNK, yielding to the event loop between two slices. A
    class, not an async generator: it runs a few times per request, and an async generator is
    registered with the loop (its first-iteration hook) each time."""

    __slots__ = ("_items", "_start")

    def __init__(self, items: Sequence[Item]) -> None:
        self._items = items
        self._start = 0

    def __aiter__(self) -> chunks[Item]:
        return self

    async def __anext__(self) -> Sequence[Item]:
        start = self._start
        if start >= len(self._items):
            raise StopAsyncIteration
        if start:
            await asyncio.sleep(0)
        self._start = start + CHUNK
        return self._items[start:start + CHUNK]
