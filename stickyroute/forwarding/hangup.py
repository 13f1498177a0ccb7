"""The platform's hang-up, as a signal the forwarding leg can watch (issue #10).

    async with Watching(receive) as gone: ...   the ASGI endpoint, around the dispatcher
    HANGUP.get()                                the leg: a future that resolves when the platform
                                                disconnects (None outside a webhook request)

Only the upstream request is cancelled on a hang-up (its pooled connection is freed at once); the
dispatcher itself runs to its end, so every delivery it claimed is completed or released (a
cancelled dispatcher could leave a claimed update "in flight" forever: lost).
"""

from __future__ import annotations

import asyncio
import contextvars

from starlette.types import Receive

__all__ = ["HANGUP", "Watching"]

HANGUP: contextvars.ContextVar[asyncio.Future[None] | None] = contextvars.ContextVar("stickyroute_hangup",
                                                                                    default=None)


async def _disconnect(receive: Receive, gone: asyncio.Future[None]) -> None:
    """Resolve `gone` when the client disconnects (the body has been read: only that can come)."""
    while (await receive())["type"] != "http.disconnect":
        pass
    if not gone.done():
        gone.set_result(None)


class Watching:
    """`async with Watching(receive) as gone:` watch `receive` for `http.disconnect` while the
    block runs; yields the hang-up future (also in HANGUP for the tasks the block starts). A
    class rather than `contextlib.asynccontextmanager`: it runs once per webhook request."""

    __slots__ = ("_gone", "_receive", "_token", "_watcher")

    def __init__(self, receive: Receive) -> None:
        self._receive = receive

    async def __aenter__(self) -> asyncio.Future[None]:
        self._gone = gone = asyncio.get_running_loop().create_future()
        self._token = HANGUP.set(gone)
        self._watcher = asyncio.ensure_future(_disconnect(self._receive, gone))
        return gone

    async def __aexit__(self, *_exc: object) -> None:
        self._watcher.cancel()
        HANGUP.reset(self._token)
