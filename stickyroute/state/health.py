"""Health of the shared state backend: up or degraded, one log line per change, a gauge, and a
background ping that brings it back.

    health = BackendHealth("redis", "redis://127.0.0.1:6379/0", store.ping, registry)
    await health.start()      ping once: unreachable at startup is a warning, never a crash
    health.failed(exc)        an operation failed: degrade (logged once) and ping every interval_s
    health.up                 False while degraded (/readyz answers 503 "degraded")

Metric: `stickyroute_state_backend_up{backend}` 1 while the backend answers, 0 while the
process serves on its memory fallback. The memory backend is always up.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable

from prometheus_client import CollectorRegistry, Gauge

from stickyroute.state.base import SlotUnavailable, StateUnavailable

log = logging.getLogger("stickyroute.state")

PING_INTERVAL_S = 1.0
PROBE_PATIENCE_S = 1.0


class BackendHealth:
    """Up/degraded state of one backend named `backend` at `url` (already masked); `ping(timeout_s)`
    raises StateUnavailable when it does not answer in time (None: nothing to check, always up)."""

    def __init__(self, backend: str, url: str, ping: Callable[[float], Awaitable[None]] | None,
                 registry: CollectorRegistry | None = None, interval_s: float = PING_INTERVAL_S) -> None:
        self.backend = backend
        self.url = url
        self.up = True
        self._ping = ping
        self._interval_s = interval_s
        self._watcher: asyncio.Task[None] | None = None
        self._probe: asyncio.Task[None] | None = None
        self._gauge = Gauge("stickyroute_state_backend_up",
                            "1 while the shared state backend answers; 0 while serving on the per-process "
                            "memory fallback.", ("backend",), registry=registry).labels(backend)
        self._gauge.set(1)

    async def start(self) -> None:
        """Ping once; when it fails, log the exact error and start degraded."""
        if self._ping is None:
            return
        try:
            await self._ping(PROBE_PATIENCE_S)
        except StateUnavailable as exc:
            self._degrade(exc)

    def failed(self, exc: StateUnavailable) -> None:
        """An operation failed: degrade (one warning line) and start pinging until it answers;
        a slow one (its cause a TimeoutError) or one cluster slot's (SlotUnavailable) only when a
        probe ping fails too."""
        if not self.up:
            return
        partial = isinstance(exc, SlotUnavailable) or isinstance(exc.__cause__, TimeoutError)  # asyncio's or redis-py's
        if partial and self._ping is not None:
            if self._probe is None or self._probe.done():
                self._probe = asyncio.get_running_loop().create_task(self._probe_after(exc))
            return
        self._degrade(exc)

    async def _probe_after(self, slow: StateUnavailable) -> None:
        assert self._ping is not None
        try:
            await self._ping(PROBE_PATIENCE_S)
        except StateUnavailable as exc:
            self._degrade(StateUnavailable(f"{slow}, then {exc}"))

    def _degrade(self, exc: StateUnavailable) -> None:
        if not self.up:
            return
        self.up = False
        self._gauge.set(0)
        log.warning("state: %s at %s unavailable (%s); serving on the per-process memory fallback until it "
                    "answers again", self.backend, self.url, exc)
        if self._ping is not None and (self._watcher is None or self._watcher.done()):
            self._watcher = asyncio.get_running_loop().create_task(self._watch())

    async def _watch(self) -> None:
        assert self._ping is not None
        while not self.up:
            await asyncio.sleep(self._interval_s)
            try:
                await self._ping(PROBE_PATIENCE_S)
            except StateUnavailable:
                continue
            self.up = True
            self._gauge.set(1)
            log.warning("state: %s at %s answers again; back on it (what this process wrote during the outage "
                        "stays in its memory only)", self.backend, self.url)

    async def aclose(self) -> None:
        """Stop pinging."""
        for task in (self._watcher, self._probe):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
