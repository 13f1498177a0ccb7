"""The two listeners' settings: `[server]` (the webhook listener) and `[admin]`.

Both carry the same edge limits (`header_timeout_s`, `body_timeout_s`, `keepalive_timeout_s`,
`max_connections`, `max_header_bytes`), applied by `stickyroute.server.edge`; the defaults and
why they are what they are: docs/security.md.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["MIB", "AdminSettings", "ServerSettings"]

MIB = 1024 * 1024


@dataclass(frozen=True, slots=True)
class ServerSettings:
    """`[server]`: the public webhook listener."""

    host: str = "0.0.0.0"
    port: int = 8080
    max_body_bytes: int = 5 * MIB
    """Largest accepted request body in bytes; larger bodies get 413."""
    trusted_proxies: tuple[str, ...] = ("127.0.0.0/8", "::1/128")
    """CIDRs whose X-Forwarded-* headers are extended rather than replaced."""
    ssl_certfile: str | None = None
    ssl_keyfile: str | None = None
    drain_s: float = 25.0
    """Graceful shutdown (SIGTERM): how long in-flight webhooks may still finish (seconds); a
    request still running then is answered 503 so the platform retries it."""
    header_timeout_s: float = 10.0
    """From a connection's opening (or the first byte of its next request) until the request's
    headers are complete (seconds); then the connection is closed."""
    body_timeout_s: float = 30.0
    """From the end of a request's headers until its body is complete (seconds); then the
    connection is closed."""
    keepalive_timeout_s: float = 5.0
    """How long a connection may stay idle after a response before it is closed (seconds)."""
    max_connections: int = 256
    """Open connections of this listener (per worker process); one more is answered 503 and
    closed at once, before anything of it is read."""
    max_header_bytes: int = 32 * 1024
    """A request whose headers are still not complete after this many bytes gets 431 and the
    connection is closed."""
    log_format: str = "text"
    """`text` or `json` lines on stderr, every logger of every process (`stickyroute.server.logs`)."""
    log_level: str = "info"
    """The least severe records written: `debug`, `info`, `warning` or `error`."""


@dataclass(frozen=True, slots=True)
class AdminSettings:
    """`[admin]`: the separate listener: /healthz, /readyz, /metrics for everyone; /stats and
    the admin API under /v1/ with `Authorization: Bearer <token>` (no token: those answer 401)."""

    host: str = "127.0.0.1"
    port: int = 9090
    token: str | None = field(default=None, repr=False)
    max_body_bytes: int = 64 * 1024
    """Largest request body in bytes, on every route (the open ones too): 413 before any handler
    reads it, the connection closed."""
    header_timeout_s: float = 10.0
    """As `[server] header_timeout_s`, for the admin listener."""
    body_timeout_s: float = 10.0
    """As `[server] body_timeout_s`, for the admin listener."""
    keepalive_timeout_s: float = 5.0
    """As `[server] keepalive_timeout_s`, for the admin listener."""
    max_connections: int = 50
    """As `[server] max_connections`, for the admin listener (a dashboard holds one or two)."""
    max_header_bytes: int = 32 * 1024
    """As `[server] max_header_bytes`, for the admin listener."""
    auth_failures: int = 10
    """Failed authentications (a wrong admin token, sign-in or agent token) a client address may
    make in `auth_window_s`; past them every authenticated route answers it 429."""
    auth_window_s: float = 60.0
    """The throttle's window (seconds), from a client's first failure; a success resets it."""
    trusted_proxies: tuple[str, ...] = ()
    """CIDRs of reverse proxies in front of the admin listener: from them the client address the
    throttle counts is the last `X-Forwarded-For` entry outside these networks."""
    session_max_age_s: float = 8 * 3600.0
    """How long a browser session (`POST /v1/session`) lasts (seconds; the cookie's Max-Age)."""
    behind_tls: bool = False
    """True when browsers reach the admin listener over HTTPS (its own certificate or a TLS
    proxy in front): the session cookie is then marked `Secure`."""
