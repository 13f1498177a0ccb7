"""The public ASGI app across reloads and shutdowns: lifespan, the current runtime, the drain.

    app = PublicApp(service, on_start=None, on_stop=None)    what uvicorn serves
    app.cut()                                                 the drain deadline: cancel what still runs

Each request runs on the runtime current when it arrived (`Runtime.enter/leave`), so a reload
swaps the config between requests and never under one. The app keeps the tasks of the requests
in flight; at the drain deadline (`[server] drain_s` after SIGTERM) `cut()` cancels them, and a
request cancelled before its response started is answered **503** (the platform retries it; the
dispatcher has already failed its delivery claims, so the retry is forwarded again): nothing
is acknowledged with a 2xx that did not reach an agent with a 2xx. Any other cancellation of a
request (uvicorn's own shutdown timeout, in worker processes) ends the same way.

The lifespan starts the service (and `on_start`), and on shutdown runs `on_stop` and closes the
service (pools, classifier, state) once uvicorn has drained the connections.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Protocol

from starlette.types import Message, Receive, Scope, Send

from stickyroute.server.runtime import Runtime

__all__ = ["PublicApp"]

log = logging.getLogger("stickyroute")
_RETRY_BODY = b"stickyroute is shutting down; retry (nothing was lost)\n"
_RETRY = [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(_RETRY_BODY)).encode()),
          (b"retry-after", b"1")]


class _Service(Protocol):
    runtime: Runtime
    started: bool

    async def start(self) -> object: ...

    async def aclose(self) -> None: ...


class PublicApp:
    """The webhook listener's ASGI app (see the module docstring)."""

    def __init__(self, service: _Service, on_start: Callable[[], Awaitable[None]] | None = None,
                 on_stop: Callable[[], Awaitable[None]] | None = None) -> None:
        self.service = service
        self._on_start = on_start
        self._on_stop = on_stop
        self._tasks: set[asyncio.Task[object]] = set()
        self._cut: set[asyncio.Task[object]] = set()

    @property
    def in_flight(self) -> int:
        """Requests running now."""
        return len(self._tasks)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            await self._request(scope, receive, send)
        elif scope["type"] == "lifespan":
            await self._lifespan(receive, send)
        else:  # a websocket: the runtime's app refuses it
            await self.service.runtime.app(scope, receive, send)

    async def _request(self, scope: Scope, receive: Receive, send: Send) -> None:
        service = self.service
        if not service.started:
            await service.start()
        runtime = service.runtime
        task = asyncio.current_task()
        assert task is not None
        runtime.enter()
        self._tasks.add(task)
        started = False

        async def tracked(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await runtime.app(scope, receive, tracked)
        except asyncio.CancelledError:
            if started:
                raise
            task.uncancel()
            log.warning("answered 503 to %s %s: still running at the drain deadline (the platform retries it)",
                        scope.get("method"), scope.get("path"))
            await send({"type": "http.response.start", "status": 503, "headers": _RETRY})
            await send({"type": "http.response.body", "body": _RETRY_BODY})
        finally:
            self._tasks.discard(task)
            self._cut.discard(task)
            runtime.leave()

    def cut(self) -> int:
        """Cancel every request still running (the drain deadline); how many were cut."""
        cut = [t for t in self._tasks if t not in self._cut and not t.done()]
        for task in cut:
            self._cut.add(task)
            task.cancel()
        return len(cut)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                try:
                    await self.service.start()
                    if self._on_start is not None:
                        await self._on_start()
                except Exception as exc:
                    log.exception("start-up failed")
                    await send({"type": "lifespan.startup.failed", "message": f"{type(exc).__name__}: {exc}"})
                    return
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                try:
                    if self._on_stop is not None:
                        await self._on_stop()
                finally:
                    await self.service.aclose()
                await send({"type": "lifespan.shutdown.complete"})
                return
