"""Real Redis for tests: the shared test server, private key prefixes, and a server of our own.

    url = require_redis()                  STICKYROUTE_TEST_REDIS_URL or redis://127.0.0.1:6379/0;
                                           unreachable: a loud skip, or a failure when CI is set
    prefix = private_prefix()              "stickyroute-test:<random>:" (one per test)
    await flush_prefix(url, prefix)        delete only that prefix's keys
    with OwnRedis() as server: ...         redis-server on a free port (outage tests): stop(), start()

Tests never mock Redis: every test here talks to a real server.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import time
import uuid

import pytest
from redis import Redis
from redis.asyncio import Redis as AsyncRedis
from redis.exceptions import RedisError

DEFAULT_URL = "redis://127.0.0.1:6379/0"
HANG_GUARD_S = 10.0
_reachable: dict[str, str | None] = {}


def redis_url() -> str:
    return os.environ.get("STICKYROUTE_TEST_REDIS_URL") or DEFAULT_URL


def _problem(url: str) -> str | None:
    if url not in _reachable:
        try:
            with Redis.from_url(url, socket_connect_timeout=1.0, socket_timeout=2.0) as client:
                client.ping()
            _reachable[url] = None
        except (RedisError, OSError) as exc:
            _reachable[url] = f"{type(exc).__name__}: {exc}"
    return _reachable[url]


def require_redis() -> str:
    """The test Redis URL; skip loudly when it does not answer (fail when `CI` is set)."""
    url = redis_url()
    problem = _problem(url)
    if problem is not None:
        message = (f"NO REDIS AT {url} ({problem}): the Redis tests did NOT run. Start redis-server "
                   "(`redis-server --daemonize yes`) or set STICKYROUTE_TEST_REDIS_URL.")
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return url


def private_prefix() -> str:
    """A key prefix no other test uses."""
    return f"stickyroute-test:{uuid.uuid4().hex[:12]}:"


async def flush_prefix(url: str, prefix: str) -> int:
    """Delete every key under `prefix` (and nothing else); returns how many."""
    client = AsyncRedis.from_url(url)
    try:
        names = [name async for name in client.scan_iter(match=prefix + "*", count=1000)]
        if names:
            await client.delete(*names)
        return len(names)
    finally:
        await client.aclose()


_HANDED_OUT: set[int] = set()


def free_port() -> int:
    """A loopback port nobody listens on now and that this test process has not handed out
    before: two calls in a row (a proxy's webhook and admin ports, an agent's) never return the
    same port, although the kernel's port 0 may pick a just-closed probe's port again."""
    while True:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = int(probe.getsockname()[1])
        if port not in _HANDED_OUT:
            _HANDED_OUT.add(port)
            return port


class OwnRedis:
    """A redis-server of the test's own on a free loopback port, no persistence (context manager).

    `stop()` kills it (SIGKILL: like a crash), `start()` starts it again, empty, on the same port.
    Skips (fails under CI) when redis-server is not installed.
    """

    def __init__(self) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            message = "redis-server is not installed: the Redis outage tests did NOT run"
            if os.environ.get("CI"):
                pytest.fail(message)
            pytest.skip(message)
        self.binary = binary
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(
            [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + HANG_GUARD_S
        while time.monotonic() < deadline:
            with contextlib.suppress(RedisError, OSError), Redis(port=self.port, socket_connect_timeout=0.2) as client:
                if client.ping():
                    return
            time.sleep(0.02)
        raise RuntimeError(f"redis-server did not answer on port {self.port}")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(HANG_GUARD_S)
        self.process = None

    def __enter__(self) -> OwnRedis:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

