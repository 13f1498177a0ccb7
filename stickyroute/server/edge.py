"""The edge of both listeners: what a client may hold of the process before the app sees it.

uvicorn bounds neither how long a request's headers and body may take nor how many connections
are open (its `limit_concurrency` answers 503 only to a complete request, and a connection that
never finishes its headers is kept forever; httptools buffers headers without a bound). So each
listener serves `EdgeProtocol`, uvicorn's httptools protocol with:

    max_connections      the listener's open connections (per process); one more is answered
                         503 (`Connection: close`, `Retry-After: 1`) and closed at once,
                         before anything of it is read
    header_timeout_s     from a connection's opening (or the first byte of its next request)
                         until the request's headers are complete; then the connection is closed
    max_header_bytes     headers still incomplete after this many bytes: 431, connection closed
    body_timeout_s       from the end of the headers until the body is complete; then closed
    keepalive_timeout_s  idle after a response (uvicorn's `timeout_keep_alive`); then closed

The connection reports its own loss to the webhook endpoint (`forwarding.hangup.Hangups`, in the
scope's extensions), so a request needs no task watching for the platform's hang-up. And one rule
of h11's: a response sent before its request's body arrived closes the connection
(a 413 reads no further). Websockets are off on both listeners (`ws="none"`), so every
connection stays under these rules. What was refused or cut is logged at most once every
`REPORT_EVERY_S` seconds per listener, with counts. Timers run on the event loop's clock.

`EdgeConfig` is the `uvicorn.Config` of one listener carrying its `EdgeLimits`; it is pickled
to the worker processes of `serve --workers N` with them. `raise_descriptor_limit` lifts the
process's soft RLIMIT_NOFILE towards what the limits may hold open (docs/security.md).
"""

from __future__ import annotations

import asyncio
import logging
import resource
from dataclasses import dataclass
from typing import Any

import uvicorn
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from uvicorn.server import ServerState

from stickyroute.config.listeners import AdminSettings, ServerSettings
from stickyroute.config.model import Config
from stickyroute.forwarding.hangup import HANGUP_EXTENSION, Hangups

__all__ = ["EDGE_KEYS", "REPORT_EVERY_S", "EdgeConfig", "EdgeLimits", "EdgeProtocol", "descriptors_needed",
           "raise_descriptor_limit"]

log = logging.getLogger("stickyroute")
REPORT_EVERY_S = 10.0
"""At most one log line per listener in this many seconds for refused or cut connections."""
SPARE_DESCRIPTORS = 256
"""Descriptors besides the listeners' and the agent pools' (Redis, Groq, logs, the Python runtime)."""

EDGE_KEYS = ("header_timeout_s", "body_timeout_s", "keepalive_timeout_s", "max_connections", "max_header_bytes")
"""The keys of `[server]` and `[admin]` this module applies (read at start: a reload does not change them)."""
_IDLE, _HEAD, _BODY = 0, 1, 2


def _answer(status: bytes, text: bytes) -> bytes:
    return (b"HTTP/1.1 " + status + b"\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: "
            + str(len(text)).encode() + b"\r\nconnection: close\r\nretry-after: 1\r\n\r\n" + text)


_REFUSED = _answer(b"503 Service Unavailable", b"too many open connections; retry\n")
_TOO_LARGE = _answer(b"431 Request Header Fields Too Large", b"request headers too large\n")


@dataclass(frozen=True, slots=True)
class EdgeLimits:
    """One listener's limits (seconds, connections, bytes); `listener` names it in logs."""

    listener: str
    max_connections: int
    header_timeout_s: float
    body_timeout_s: float
    keepalive_timeout_s: float
    max_header_bytes: int

    @classmethod
    def of(cls, listener: str, settings: ServerSettings | AdminSettings) -> EdgeLimits:
        """The limits of `[server]` or `[admin]`."""
        return cls(listener, settings.max_connections, settings.header_timeout_s, settings.body_timeout_s,
                   settings.keepalive_timeout_s, settings.max_header_bytes)


class _Report:
    """Counts of refused and cut connections, logged at most once per `REPORT_EVERY_S`."""

    def __init__(self, limits: EdgeLimits) -> None:
        self.limits = limits
        self.counts: dict[str, int] = {}
        self._logged_at: float | None = None

    def count(self, what: str, now: float) -> None:
        self.counts[what] = self.counts.get(what, 0) + 1
        if self._logged_at is not None and now - self._logged_at < REPORT_EVERY_S:
            return
        self._logged_at = now
        limits = self.limits
        what_text = ", ".join(f"{n} {k}" for k, n in sorted(self.counts.items()))
        log.warning("%s listener: %s so far (max_connections %d, header_timeout_s %g, body_timeout_s %g, "
                    "max_header_bytes %d)", limits.listener, what_text, limits.max_connections,
                    limits.header_timeout_s, limits.body_timeout_s, limits.max_header_bytes)


class EdgeConfig(uvicorn.Config):
    """`uvicorn.Config` of one listener served by `EdgeProtocol` under `limits` (other keyword
    arguments as uvicorn's)."""

    def __init__(self, app: Any, limits: EdgeLimits, **kwargs: Any) -> None:
        super().__init__(app, http=EdgeProtocol, ws="none", **kwargs)
        # uvicorn schedules it with loop.call_later: any number of seconds works
        self.timeout_keep_alive = limits.keepalive_timeout_s  # type: ignore[assignment]
        self.edge = limits
        self.edge_report = _Report(limits)


class EdgeProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol under a listener's `EdgeLimits` (see the module docstring)."""

    def __init__(self, config: EdgeConfig, server_state: ServerState, app_state: dict[str, Any],
                 _loop: asyncio.AbstractEventLoop | None = None) -> None:
        super().__init__(config, server_state, app_state, _loop)
        self.limits = config.edge
        self.report = config.edge_report
        self._phase = _HEAD
        self._since = 0.0
        """Loop time when the current phase (headers or body) began."""
        self._head_bytes = 0
        self._timer: asyncio.TimerHandle | None = None
        self._refused = False
        self.hangups = Hangups()
        """The hang-up futures of the requests running on this connection (resolved when it is lost)."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        if len(self.connections) >= self.limits.max_connections:
            self._refused = True
            self.transport = transport
            transport.write(_REFUSED)
            transport.close()
            self.report.count("refused (max_connections)", self.loop.time())
            return
        super().connection_made(transport)
        self._since = self.loop.time()
        self._arm(self.limits.header_timeout_s, "header timeouts")

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        if self._refused:  # in connection_made: nothing was served
            return
        super().connection_lost(exc)
        self.hangups.hung_up()

    def data_received(self, data: bytes) -> None:
        if self._phase != _BODY:
            self._head_bytes += len(data)
        super().data_received(data)
        if self.transport.is_closing():
            return
        if self._phase == _HEAD:
            if self._head_bytes > self.limits.max_header_bytes:
                self._disarm()
                self.transport.write(_TOO_LARGE)
                self.transport.close()
                self.report.count("headers too large (max_header_bytes)", self.loop.time())
            elif self._timer is None:
                self._arm(self.limits.header_timeout_s, "header timeouts")
        elif self._phase == _BODY and self._timer is None:
            self._arm(self.limits.body_timeout_s, "body timeouts")

    def on_message_begin(self) -> None:
        if self._phase == _IDLE:  # the next request on this connection
            self._phase = _HEAD
            self._since = self.loop.time()
        super().on_message_begin()

    def on_headers_complete(self) -> None:
        self._disarm()
        self._phase = _BODY
        self._since = self.loop.time()
        self._head_bytes = 0
        self.scope["extensions"] = {HANGUP_EXTENSION: self.hangups}  # type: ignore[dict-item]
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        self._disarm()
        self._phase = _IDLE
        super().on_message_complete()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if self._phase == _BODY and not self.transport.is_closing():
            self.transport.close()  # answered before its body arrived (a 413): read no further

    def _arm(self, timeout_s: float, what: str) -> None:
        self._timer = self.loop.call_at(self._since + timeout_s, self._expired, what)

    def _disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _expired(self, what: str) -> None:
        self._timer = None
        if not self.transport.is_closing():
            self.report.count(what, self.loop.time())
            self.transport.close()


def descriptors_needed(config: Config) -> int:
    """File descriptors the running config may hold at once: both listeners' `max_connections`,
    every agent pool's connections, and `SPARE_DESCRIPTORS`."""
    pools = sum(a.max_connections or config.upstream.max_connections for a in config.agents.values())
    return config.server.max_connections + config.admin.max_connections + pools + SPARE_DESCRIPTORS


def raise_descriptor_limit(config: Config) -> tuple[int, int]:
    """Lift the soft RLIMIT_NOFILE to `descriptors_needed(config)` (never above the hard limit,
    never lowered); warn when the hard limit is below the need. Returns (soft limit now, need)."""
    need = descriptors_needed(config)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    unlimited = resource.RLIM_INFINITY
    target = need if hard == unlimited else min(need, hard)
    if soft != unlimited and soft < target:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError) as exc:
            log.warning("cannot raise the open-files limit from %d to %d: %s", soft, target, exc)
    if soft != unlimited and soft < need:
        log.warning("open-files limit %d is below the %d descriptors the listeners' max_connections and the "
                    "agent pools may hold (raise it, e.g. LimitNOFILE=%d, or lower max_connections)", soft, need,
                    need)
    return soft, need
