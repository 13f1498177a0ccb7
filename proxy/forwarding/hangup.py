"""The platform's hang-up, as a signal the forwarding leg can watch (issue #10).

    async with watching(receive) as gone: ...   the ASGI endpoint, around the dispatcher
    HANGUP.get()                                the leg: a future that resolves when the platform
                                                disconnects (None outside a webhook request)

Only the upstream request is cancelled on a hang-up (its pooled connection is freed at once); the
dispatcher itself runs to its end, so every delivery it claimed is completed or released (a
cancelled dispatcher could leave a claimed update "in flight" forever: lost).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
from collections.abc import AsyncIterator

from starlette.types import Receive

__all__ = ["HANGUP", "watching"]

HANGUP: contextvars.ContextVar[asyncio.Future[None] | None] = contextvars.ContextVar("stickyroute_hangup",
                                                                                    default=None)


async def _disconnect(receive: Receive, gone: asyncio.Future[None]) -> None:
    """Resolve `gone` when the client disconnects (the body has been read: only that can come)."""
    while (await receive())["type"] != "http.disconnect":
        pass
    if not gone.done():
        gone.set_result(None)


@contextlib.asynccontextmanager
async def watching(receive: Receive) -> AsyncIterator[asyncio.Future[None]]:
    """Watch `receive` for `http.disconnect` while the block runs; yields the hang-up future
    (also in HANGUP for the tasks the block starts)."""
    gone: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    token = HANGUP.set(gone)
    watcher = asyncio.ensure_future(_disconnect(receive, gone))
    try:
        yield gone
    finally:
        watcher.cancel()
        HANGUP.reset(token)
