"""Real HTTP servers on 127.0.0.1 for tests: a recording upstream, and any ASGI app on uvicorn.

    with serve_app(app) as base_url: ...            # any ASGI app on a real uvicorn (httptools)
    with RecordingUpstream() as up:                 # an agent endpoint that records every request
        up.url                                      # "http://127.0.0.1:<ephemeral port>"
        up.respond(status=307, headers=[(b"location", b"/x")], body=b"")
        up.requests                                 # [RecordedRequest(method, raw_path, ...)]
        await up.until_requests(4)                  # hang-guarded wait, from async tests
        up.release()                                # let `hang=True` requests answer

Each server runs in its own thread with its own event loop, so it works with pytest-asyncio's
function-scoped loops and from sync tests alike. Servers bind port 0 (ephemeral) and stop on
exit (hanging requests are released first). A handler that waits (`delay_s`, `hang`) also ends
when its client disconnects, so the server sees aborted clients as closed connections.
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import socket
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

RawHeaders = list[tuple[bytes, bytes]]
ASGIApp = Callable[..., Awaitable[None]]
HANG_GUARD_S = 10.0
"""Generous bound on every wait in these helpers: a hang fails the test instead of blocking."""


class _ServerThread:
    """uvicorn serving `app` on 127.0.0.1:<ephemeral> in a daemon thread with its own loop."""

    def __init__(self, app: ASGIApp, *, lifespan: str, on_connections: Callable[[int], None] | None) -> None:
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", 0))
        self.port: int = self._sock.getsockname()[1]
        self.loop: asyncio.AbstractEventLoop | None = None
        self._ready = threading.Event()
        config = uvicorn.Config(
            app,
            http=_tracking_protocol(lambda: self.server.server_state, on_connections),
            ws="none",
            interface="asgi3",
            proxy_headers=False,  # the app itself decides which X-Forwarded-* to trust
            lifespan=lifespan,
            log_config=None,
            log_level="warning",
            access_log=False,
            timeout_graceful_shutdown=5,
        )
        self.server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._run, name=f"uvicorn-{self.port}", daemon=True)

    def _run(self) -> None:
        self.loop = asyncio.new_event_loop()
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_until_complete(self._serve())
        finally:
            pending = asyncio.all_tasks(self.loop)
            for task in pending:
                task.cancel()
            self.loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            self.loop.run_until_complete(self.loop.shutdown_asyncgens())
            self.loop.close()

    async def _serve(self) -> None:
        try:
            await self.server.serve(sockets=[self._sock])
        finally:
            self._ready.set()

    def start(self) -> None:
        self._thread.start()
        deadline = time.monotonic() + HANG_GUARD_S
        while not self.server.started:
            if self._ready.wait(0.005) or time.monotonic() > deadline:
                raise RuntimeError("uvicorn did not start")

    def stop(self) -> None:
        self.server.should_exit = True
        self._thread.join(HANG_GUARD_S)
        self._sock.close()
        if self._thread.is_alive():
            raise RuntimeError("uvicorn did not stop")

    def call_soon(self, callback: Callable[[], Any]) -> None:
        """Run `callback` in the server's loop (thread-safe)."""
        if self.loop is not None and not self.loop.is_closed():
            self.loop.call_soon_threadsafe(callback)


def _tracking_protocol(state: Callable[[], Any], on_connections: Callable[[int], None] | None) -> type:
    """uvicorn's httptools protocol, reporting the open-connection count after each change."""

    class _TrackingProtocol(HttpToolsProtocol):
        def connection_made(self, transport: Any) -> None:  # type: ignore[override]
            super().connection_made(transport)
            if on_connections is not None:
                on_connections(len(state().connections))

        def connection_lost(self, exc: Exception | None) -> None:
            super().connection_lost(exc)
            if on_connections is not None:
                on_connections(len(state().connections))

    return _TrackingProtocol


@contextlib.contextmanager
def serve_app(app: ASGIApp, *, lifespan: str = "auto") -> Iterator[str]:
    """Serve any ASGI `app` on a real uvicorn at 127.0.0.1:<ephemeral>; yields the base URL."""
    server = _ServerThread(app, lifespan=lifespan, on_connections=None)
    server.start()
    try:
        yield f"http://127.0.0.1:{server.port}"
    finally:
        server.stop()


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    """One request as the upstream received it: raw path and query bytes, raw headers, body."""

    method: str
    raw_path: bytes
    query_string: bytes
    headers: RawHeaders
    body: bytes
    received_at: float
    """time.monotonic() seconds when the body was complete."""

    @property
    def target(self) -> bytes:
        """Path plus `?query` as sent on the request line."""
        return self.raw_path + (b"?" + self.query_string if self.query_string else b"")

    def header_values(self, name: bytes) -> list[bytes]:
        """Every value of header `name` (case-insensitive), in order."""
        return [value for key, value in self.headers if key.lower() == name.lower()]

    @property
    def header_names(self) -> list[bytes]:
        """Lower-case header names, in order."""
        return [key.lower() for key, _ in self.headers]


@dataclass(frozen=True, slots=True)
class Behaviour:
    """How the upstream answers: status, headers, body; optionally after `delay_s` seconds or
    only once released (`hang`); `gzip` compresses the body and says so; `chunks` > 1 sends the
    body chunked (no Content-Length). `stall_mid_body` applies the wait after the headers and
    the first half of the body instead of before the response starts."""

    status: int = 200
    headers: tuple[tuple[bytes, bytes], ...] = ((b"content-type", b"application/json"),)
    body: bytes = b'{"ok":true}'
    delay_s: float = 0.0
    hang: bool = False
    gzip: bool = False
    chunks: int = 1
    stall_mid_body: bool = False


@dataclass
class _Waiter:
    ready: Callable[[], bool]
    loop: asyncio.AbstractEventLoop
    future: asyncio.Future[None]


@dataclass
class RecordingUpstream:
    """An agent endpoint on a real uvicorn that records requests and answers per `Behaviour`."""

    behaviour: Behaviour = field(default_factory=Behaviour)
    _requests: list[RecordedRequest] = field(default_factory=list)
    _open_connections: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _waiters: list[_Waiter] = field(default_factory=list)
    _gate: asyncio.Event = field(default_factory=asyncio.Event)
    _server: _ServerThread | None = None

    def __enter__(self) -> RecordingUpstream:
        self._server = _ServerThread(self._app, lifespan="off", on_connections=self._on_connections)
        self._server.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        assert self._server is not None
        self.release()
        self._server.stop()

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.port}"

    @property
    def host(self) -> str:
        """`127.0.0.1:<port>`, the Host an httpx client sends to this upstream."""
        assert self._server is not None
        return f"127.0.0.1:{self._server.port}"

    @property
    def requests(self) -> list[RecordedRequest]:
        """A copy of the requests received so far, in arrival order."""
        with self._lock:
            return list(self._requests)

    @property
    def open_connections(self) -> int:
        """TCP connections the server holds open right now."""
        with self._lock:
            return self._open_connections

    def reset(self) -> None:
        """Forget recorded requests, answer per the default `Behaviour`, release hanging requests
        (lets one server serve a whole test module)."""
        self.release()
        with self._lock:
            self._requests.clear()
        self.behaviour = Behaviour()

    def respond(self, **kwargs: Any) -> None:
        """Answer later requests per `Behaviour(**kwargs)` (headers as a list of byte pairs)."""
        if "headers" in kwargs:
            kwargs["headers"] = tuple(kwargs["headers"])
        self.behaviour = Behaviour(**kwargs)

    def release(self) -> None:
        """Let every request waiting under `hang=True` answer; later ones hang again."""
        if self._server is not None:
            self._server.call_soon(self._open_gate)

    def _open_gate(self) -> None:
        gate, self._gate = self._gate, asyncio.Event()
        gate.set()

    async def until_requests(self, count: int) -> list[RecordedRequest]:
        """Wait (hang guard HANG_GUARD_S) until at least `count` requests were received."""
        await self._until(lambda: len(self._requests) >= count)
        return self.requests

    async def until_open_connections_at_most(self, count: int) -> int:
        """Wait (hang guard HANG_GUARD_S) until the server holds at most `count` connections."""
        await self._until(lambda: self._open_connections <= count)
        return self.open_connections

    async def _until(self, ready: Callable[[], bool]) -> None:
        loop = asyncio.get_running_loop()
        waiter = _Waiter(ready, loop, loop.create_future())
        with self._lock:
            if ready():
                return
            self._waiters.append(waiter)
        try:
            await asyncio.wait_for(waiter.future, HANG_GUARD_S)
        finally:
            with self._lock:
                if waiter in self._waiters:
                    self._waiters.remove(waiter)

    def _notify(self) -> None:
        """Wake the waiters whose condition holds (caller holds the lock)."""
        for waiter in list(self._waiters):
            if waiter.ready():
                self._waiters.remove(waiter)
                with contextlib.suppress(RuntimeError):  # the test's loop is already closed
                    waiter.loop.call_soon_threadsafe(_resolve, waiter.future)

    def _on_connections(self, count: int) -> None:
        with self._lock:
            self._open_connections = count
            self._notify()

    async def _app(self, scope: dict[str, Any], receive: Callable[..., Any], send: Callable[..., Any]) -> None:
        assert scope["type"] == "http"
        chunks = []
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                break
        behaviour, gate = self.behaviour, self._gate
        recorded = RecordedRequest(
            method=scope["method"],
            raw_path=scope["raw_path"],
            query_string=scope["query_string"],
            headers=[(bytes(name), bytes(value)) for name, value in scope["headers"]],
            body=b"".join(chunks),
            received_at=time.monotonic(),
        )
        with self._lock:
            self._requests.append(recorded)
            self._notify()
        async def stall() -> bool:
            """Wait per the behaviour; False when the client disconnected meanwhile."""
            if not (behaviour.hang or behaviour.delay_s):
                return True
            wait = gate.wait() if behaviour.hang else asyncio.sleep(behaviour.delay_s)
            return await _unless_disconnected(wait, receive)

        if not behaviour.stall_mid_body and not await stall():
            return
        await _answer(behaviour, send, stall if behaviour.stall_mid_body else None)


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


async def _unless_disconnected(wait: Awaitable[Any], receive: Callable[..., Any]) -> bool:
    """Await `wait` unless the client disconnects first; True when `wait` finished."""
    waited = asyncio.ensure_future(wait)
    disconnect = asyncio.ensure_future(receive())
    done, pending = await asyncio.wait({waited, disconnect}, return_when=asyncio.FIRST_COMPLETED)
    for task in pending:
        task.cancel()
    await asyncio.gather(*pending, return_exceptions=True)
    return waited in done


async def _answer(
    behaviour: Behaviour, send: Callable[..., Any], stall: Callable[[], Awaitable[bool]] | None
) -> None:
    """Send the reply; with `stall`, wait after the headers and the first half of the body."""
    body = gzip.compress(behaviour.body, mtime=0) if behaviour.gzip else behaviour.body
    headers = list(behaviour.headers)
    if behaviour.gzip:
        headers.append((b"content-encoding", b"gzip"))
    if behaviour.chunks <= 1:
        headers.append((b"content-length", str(len(body)).encode()))
    await send({"type": "http.response.start", "status": behaviour.status, "headers": headers})
    pieces = max(behaviour.chunks, 2 if stall else 1)
    step = max(1, -(-len(body) // pieces))
    parts = [body[start : start + step] for start in range(0, len(body), step)] or [b""]
    for index, part in enumerate(parts):
        await send({"type": "http.response.body", "body": part, "more_body": True})
        if stall is not None and index == 0 and not await stall():
            return
    await send({"type": "http.response.body", "body": b""})
