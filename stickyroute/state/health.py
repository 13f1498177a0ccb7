"""Health of the shared state backend: up or in a declared outage, one log line per change, a
gauge, a background ping that brings it back, and the count of every operation it did not serve.

    health = BackendHealth("redis", "redis://127.0.0.1:6379/0", store.ping, registry)
    await health.start()      ping once: unreachable at startup is a warning, never a crash
    health.failed(exc)        an operation failed: an error (refused, reset) declares the outage at
                              once; a slow reply only when a probe ping fails too
    health.up                 False during an outage (/readyz answers 503 "degraded")
    health.refuse             `[state] when_unavailable = "refuse"`: during an outage deliveries
                              answer 503 instead of being served from per-process memory
    health.fell_back(operation, cause)   one operation not served by the backend (see below)

Metrics: `stickyroute_state_backend_up{backend}` 1 while the backend answers, 0 during an outage
(the memory backend is always up); `stickyroute_state_fallbacks_total{operation, cause}`, cause
one of:

    timeout   the backend is up but this operation's reply did not come within `op_timeout_ms`:
              a claim answers 503 (`state_unavailable`), a routing decision uses the last route
              this process saw, a write is lost (never raised)
    outage    served from this process's memory during a declared outage (`when_unavailable =
              "memory"`)
    refused   a delivery answered 503 during a declared outage (`when_unavailable = "refuse"`)

and `operation="outage"` counts the declared outages themselves (cause `error` or `timeout`).
The same counts are in `counts` (for `/stats`) and in one warning line per `SUMMARY_S` seconds
at most (`log_summary`), never one per request.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
from collections.abc import Awaitable, Callable

from prometheus_client import CollectorRegistry, Counter, Gauge

from stickyroute.state.base import SlotUnavailable, StateUnavailable

log = logging.getLogger("stickyroute.state")

PING_INTERVAL_S = 1.0
PROBE_PATIENCE_S = 1.0
SUMMARY_S = 10.0
"""At most one summary line of the fallbacks per this many seconds."""
WHEN_UNAVAILABLE = ("memory", "refuse")
Tally = collections.Counter[tuple[str, str]]


def cause_of(exc: StateUnavailable) -> str:
    """`timeout` when the operation's foreign error is a timeout (asyncio's or redis-py's), else
    `error`."""
    cause = exc.__cause__
    return "timeout" if isinstance(cause, TimeoutError) or type(cause).__name__ == "TimeoutError" else "error"


class BackendHealth:
    """Up/degraded state of one backend named `backend` at `url` (already masked); `ping(timeout_s)`
    raises StateUnavailable when it does not answer in time (None: nothing to check, always up)."""

    def __init__(self, backend: str, url: str, ping: Callable[[float], Awaitable[None]] | None,
                 registry: CollectorRegistry | None = None, interval_s: float = PING_INTERVAL_S,
                 when_unavailable: str = "memory", summary_s: float = SUMMARY_S) -> None:
        self.backend = backend
        self.url = url
        self.up = True
        self.refuse = when_unavailable == "refuse"
        self.counts: Tally = collections.Counter()
        """Every fallback since start, by (operation, cause)."""
        self._unlogged: Tally = collections.Counter()
        self._summary_s = summary_s
        self._summary: asyncio.TimerHandle | None = None
        self._ping = ping
        self._interval_s = interval_s
        self._watcher: asyncio.Task[None] | None = None
        self._probe: asyncio.Task[None] | None = None
        self._gauge = Gauge("stickyroute_state_backend_up",
                            "1 while the shared state backend answers; 0 while serving on the per-process "
                            "memory fallback.", ("backend",), registry=registry).labels(backend)
        self._gauge.set(1)
        self._fallbacks = Counter("stickyroute_state_fallbacks_total",
                                  "State operations the shared backend did not serve, by operation and cause "
                                  "(timeout: answered without it while it is up; outage: served from process "
                                  "memory; refused: answered 503); operation=outage counts declared outages.",
                                  ("operation", "cause"), registry=registry)

    def fell_back(self, operation: str, cause: str) -> None:
        """Count one operation the backend did not serve (see the module docstring); the summary
        line follows within `summary_s` seconds."""
        self._fallbacks.labels(operation, cause).inc()
        self.counts[(operation, cause)] += 1
        self._unlogged[(operation, cause)] += 1
        if self._summary is None:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:  # no loop (a synchronous caller): the next log_summary() logs it
                return
            self._summary = loop.call_later(self._summary_s, self.log_summary)

    def snapshot(self) -> dict[str, object]:
        """For `/stats`: {"backend", "up", "when_unavailable", "fallbacks": {"<operation>/<cause>": n}}."""
        return {"backend": self.backend, "up": self.up, "when_unavailable": "refuse" if self.refuse else "memory",
                "fallbacks": {f"{op}/{cause}": n for (op, cause), n in sorted(self.counts.items())}}

    def log_summary(self) -> None:
        """Log the fallbacks counted since the last summary in one warning line (none: nothing)."""
        if self._summary is not None:
            self._summary.cancel()
            self._summary = None
        if not self._unlogged:
            return
        total = sum(self._unlogged.values())
        parts = ", ".join(f"{op}/{cause} {n}" for (op, cause), n in sorted(self._unlogged.items()))
        self._unlogged.clear()
        log.warning("state: %d operation(s) not served by %s at %s since the last summary (%s); %s", total,
                    self.backend, self.url, parts,
                    "it answers" if self.up else "outage: " + ("refusing deliveries (503)" if self.refuse
                                                               else "serving from per-process memory"))

    async def start(self) -> None:
        """Ping once; when it fails, log the exact error and start degraded."""
        if self._ping is None:
            return
        try:
            await self._ping(PROBE_PATIENCE_S)
        except StateUnavailable as exc:
            self._degrade(exc)

    def failed(self, exc: StateUnavailable) -> None:
        """An operation failed: declare an outage (one warning line) and start pinging until it
        answers; a slow one (its cause a TimeoutError) or one cluster slot's (SlotUnavailable)
        only when a probe ping fails too."""
        if not self.up:
            return
        partial = isinstance(exc, SlotUnavailable) or cause_of(exc) == "timeout"
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
            self._degrade(StateUnavailable(f"{slow}, then {exc}"), "timeout")

    def _degrade(self, exc: StateUnavailable, cause: str | None = None) -> None:
        if not self.up:
            return
        self.up = False
        self._gauge.set(0)
        self.fell_back("outage", cause or cause_of(exc))
        log.warning("state: %s at %s unavailable (%s); %s until it answers again", self.backend, self.url, exc,
                    "answering deliveries 503 (when_unavailable = refuse)" if self.refuse
                    else "serving on the per-process memory fallback")
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
        """Stop pinging; log what the last summary did not."""
        self.log_summary()
        for task in (self._watcher, self._probe):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
