"""The proxy's own listeners (`stickyroute.server.run.listener_configs`: `EdgeProtocol` under
the config's edge limits) on a real uvicorn at 127.0.0.1, in a thread, and raw-socket clients.

    with serving(service) as (public, admin):      # (host, port) of each listener
        sock = connect(public)
        sock.sendall(b"GET /x HTTP/1.1\\r\\n")      # half a request
        closed_after(sock)                          # seconds until the server closed it (hang-guarded)
"""

from __future__ import annotations

import asyncio
import contextlib
import select
import socket
import threading
import time
from collections.abc import Iterator

import uvicorn

from stickyroute.server.run import listener_configs
from stickyroute.server.service import Service

HANG_GUARD_S = 15.0
"""Bound on every wait here: a server that never closes fails the test instead of hanging it."""

Address = tuple[str, int]


class ListenerThread:
    """One uvicorn server on `config` in a daemon thread with its own loop, on an ephemeral port."""

    def __init__(self, config: uvicorn.Config) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.address: Address = ("127.0.0.1", self.sock.getsockname()[1])
        self.server = uvicorn.Server(config)
        self.server.capture_signals = contextlib.nullcontext  # type: ignore[method-assign]
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"listener-{self.address[1]}", daemon=True)

    def _run(self) -> None:
        try:
            asyncio.run(self.server.serve(sockets=[self.sock]))
        finally:
            self._done.set()

    @property
    def open_connections(self) -> int:
        """Connections the server holds now (its `server_state`)."""
        return len(self.server.server_state.connections)

    def start(self) -> None:
        self._thread.start()
        deadline = time.monotonic() + HANG_GUARD_S
        while not self.server.started:
            if self._done.wait(0.005) or time.monotonic() > deadline:
                raise RuntimeError("uvicorn did not start")

    def stop(self) -> None:
        self.server.should_exit = True
        self._thread.join(HANG_GUARD_S)
        self.sock.close()
        if self._thread.is_alive():
            raise RuntimeError("uvicorn did not stop")


@contextlib.contextmanager
def serving(service: Service) -> Iterator[tuple[ListenerThread, ListenerThread]]:
    """Both listeners of `service` as `serve` builds them (the webhook listener with its lifespan)."""
    public_config, admin_config = listener_configs(service)
    public, admin = ListenerThread(public_config), ListenerThread(admin_config)
    public.start()
    try:
        admin.start()
        try:
            yield public, admin
        finally:
            admin.stop()
    finally:
        public.stop()


def connect(address: Address) -> socket.socket:
    sock = socket.create_connection(address, timeout=HANG_GUARD_S)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def read_until_closed(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection (hang-guarded; a reset ends it too)."""
    chunks = []
    deadline = time.monotonic() + HANG_GUARD_S
    while time.monotonic() < deadline:
        sock.settimeout(max(0.01, deadline - time.monotonic()))
        try:
            data = sock.recv(65536)
        except ConnectionResetError:
            break
        if not data:
            break
        chunks.append(data)
    else:
        raise AssertionError(f"the server kept the connection open for {HANG_GUARD_S} s")
    return b"".join(chunks)


def closed_after(sock: socket.socket, started: float, trickle: bytes | None = None) -> float:
    """Seconds from `started` (time.monotonic) until the server closes `sock`; with `trickle`,
    send it again whenever the socket stays quiet for a tenth of a second (a slow client)."""
    deadline = started + HANG_GUARD_S
    while time.monotonic() < deadline:
        readable, _, _ = select.select([sock], [], [], 0.1)
        if readable:
            try:
                if not sock.recv(65536):
                    return time.monotonic() - started
            except ConnectionResetError:
                return time.monotonic() - started
        elif trickle is not None:
            try:
                sock.sendall(trickle)
            except (BrokenPipeError, ConnectionResetError):
                return time.monotonic() - started
    raise AssertionError(f"the server kept the connection open for {HANG_GUARD_S} s")


def exchange(sock: socket.socket, request: bytes) -> bytes:
    """Send `request` and read one whole response (framed by its Content-Length) off `sock`."""
    sock.sendall(request)
    data = b""
    deadline = time.monotonic() + HANG_GUARD_S
    while time.monotonic() < deadline:
        head, sep, body = data.partition(b"\r\n\r\n")
        if sep:
            length = next((int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")[1:]
                           if line.lower().startswith(b"content-length:")), 0)
            if len(body) >= length:
                return data
        sock.settimeout(max(0.01, deadline - time.monotonic()))
        chunk = sock.recv(65536)
        if not chunk:
            return data
        data += chunk
    raise AssertionError(f"no whole response in {HANG_GUARD_S} s: {data[:200]!r}")


def is_open(sock: socket.socket) -> bool:
    """True when the server has neither closed nor written to `sock` (checked without waiting)."""
    readable, _, _ = select.select([sock], [], [], 0)
    return not readable
