"""`python -m tests.proxy.hogged serve ...`: the `stickyroute` command with a CPU-bound task on
the server's event loop (tests only: the production code has no such hook).

The task holds the loop `HOG_BUSY_S` seconds (env, default 0.05), then lets it run `HOG_GAP_S`
(default 0.05), for as long as the service runs: every Redis reply then waits up to one busy
stretch before the loop reads it, as on a saturated process. Started with the service
(`Service.start`), so each worker of `--workers N` gets one.
"""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any

from stickyroute.cli import main
from stickyroute.server import core

BUSY_S = float(os.environ.get("HOG_BUSY_S", "0.05"))
GAP_S = float(os.environ.get("HOG_GAP_S", "0.05"))
_TASKS: set[asyncio.Task[None]] = set()
_start = core.ServiceCore.start


async def _hog() -> None:
    loop = asyncio.get_running_loop()
    while True:
        end = loop.time() + BUSY_S
        while loop.time() < end:  # CPU-bound: nothing else runs on this loop meanwhile
            pass
        await asyncio.sleep(GAP_S)


async def _start_hogged(self: core.ServiceCore) -> Any:
    dispatcher = await _start(self)
    if not _TASKS:
        _TASKS.add(asyncio.get_running_loop().create_task(_hog()))
    return dispatcher


core.ServiceCore.start = _start_hogged  # type: ignore[method-assign]

if __name__ == "__main__":
    sys.exit(main())
