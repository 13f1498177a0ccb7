"""The platform's hang-up, as a signal the forwarding leg can watch (issue #10).

    async with Watching(receive, scope) as gone: ...   the ASGI endpoint, around the dispatcher
    HANGUP.get()                                       the leg: a future that resolves when the
                                                       platform disconnects (None outside a
                                                       webhook request)

Served by the proxy's own listener (`stickyroute.server.edge.EdgeProtocol`), the connection itself
reports the hang-up: the scope's `extensions["stickyroute.hangup"]` is the connection's `Hangups`,
which resolves every watched future in `connection_lost` (no task per request). Under any other
ASGI server a watcher task reads `receive` for `http.disconnect`.

Only the upstream request is cancelled on a hang-up (its pooled connection is freed at once); the
dispatcher itself runs to its end, so every delivery it claimed is completed or released (a
cancelled dispatcher could leave a claimed update "in flight" forever: lost).
"""

from __future__ import annotations

import asyncio
import contextvars

from starlette.types import Receive, Scope

__all__ = ["HANGUP", "HANGUP_EXTENSION", "Hangups", "Watching"]

HANGUP_EXTENSION = "stickyroute.hangup"
"""The scope extension holding the connection's `Hangups` (set by the proxy's own listener)."""

HANGUP: contextvars.ContextVar[asyncio.Future[None] | None] = contextvars.ContextVar("stickyroute_hangup",
                                                                                    default=None)


async def _disconnect(receive: Receive, gone: asyncio.Future[None]) -> None:
    """Resolve `gone` when the client disconnects (the body has been read: only that can come)."""
    while (await receive())["type"] != "http.disconnect":
        pass
    if not gone.done():
        gone.set_result(None)


class Hangups:
    """One connection's hang-up futures: `watch` one while a request runs, `unwatch` it after;
    `hung_up()` (from the protocol's `connection_lost`) resolves every watched one."""

    __slots__ = ("_watched",)

    def __init__(self) -> None:
        self._watched: set[asyncio.Future[None]] = set()

    def watch(self, gone: asyncio.Future[None]) -> None:
        self._watched.add(gone)

    def unwatch(self, gone: asyncio.Future[None]) -> None:
        self._watched.discard(gone)

    def hung_up(self) -> None:
        """The connection was lost: resolve every watched future."""
        watched, self._watched = self._watched, set()
        for gone in watched:
            if not gone.done():
                gone.set_result(None)


class Watching:
    """`async with Watching(receive, scope) as gone:` watch for the platform's hang-up while the
    block runs: through the connection's `Hangups` when the scope has them, else a task reading
    `receive` for `http.disconnect`; yields the hang-up future (also in HANGUP for what the
    block runs). A class rather than `contextlib.asynccontextmanager`: it runs once per webhook
    request."""

    __slots__ = ("_gone", "_hangups", "_receive", "_token", "_watcher")

    def __init__(self, receive: Receive, scope: Scope | None = None) -> None:
        self._receive = receive
        extensions = scope.get("extensions") if scope is not None else None
        self._hangups: Hangups | None = extensions.get(HANGUP_EXTENSION) if extensions else None

    async def __aenter__(self) -> asyncio.Future[None]:
        self._gone = gone = asyncio.get_running_loop().create_future()
        self._token = HANGUP.set(gone)
        if self._hangups is not None:
            self._watcher = None
            self._hangups.watch(gone)
        else:
            self._watcher = asyncio.ensure_future(_disconnect(self._receive, gone))
        return gone

    async def __aexit__(self, *_exc: object) -> None:
        if self._watcher is not None:
            self._watcher.cancel()
        else:
            assert self._hangups is not None
            self._hangups.unwatch(self._gone)
        HANGUP.reset(self._token)
