"""The words of the configuration reference for both listeners' edge limits, the admin body
cap, the failed-authentication throttle and the sessions (`stickyroute.config.listeners`; merged
into `key_docs.DESCRIPTIONS`)."""

from __future__ import annotations

__all__ = ["EDGE_DESCRIPTIONS"]

EDGE_DESCRIPTIONS: dict[str, str] = {
    "server.header_timeout_s": "From a connection's opening (or the first byte of its next request) until the "
                               "request's headers are complete (seconds); then the connection is closed (see "
                               "[Security and limits](security.md#limits-and-their-defaults)).",
    "server.body_timeout_s": "From the end of a request's headers until its body is complete (seconds); then the "
                             "connection is closed.",
    "server.keepalive_timeout_s": "How long a connection may stay idle after a response (seconds); then it is closed.",
    "server.max_connections": "Open connections of the listener, per worker process; one more is answered 503 "
                              "(`Connection: close`, `Retry-After: 1`) and closed before anything of it is read.",
    "server.max_header_bytes": "Headers still incomplete after this many bytes: 431, the connection closed.",
    "admin.max_body_bytes": "Largest request body on every admin route, the open ones too (bytes): a larger one is "
                            "answered 413 before any route reads it, the connection closed.",
    "admin.header_timeout_s": "As `server.header_timeout_s`, for the admin listener.",
    "admin.body_timeout_s": "As `server.body_timeout_s`, for the admin listener.",
    "admin.keepalive_timeout_s": "As `server.keepalive_timeout_s`, for the admin listener.",
    "admin.max_connections": "As `server.max_connections`, for the admin listener (a dashboard holds two).",
    "admin.max_header_bytes": "As `server.max_header_bytes`, for the admin listener.",
    "admin.auth_failures": "Failed authentications (a wrong admin token, sign-in token or agent token) one client "
                           "address may make within `auth_window_s`; past them it is answered 429 with `Retry-After` "
                           "wherever it presents a token (see [Token guessing](security.md#token-guessing)).",
    "admin.auth_window_s": "The throttle's window (seconds), from an address's first failure; a success resets it.",
    "admin.trusted_proxies": "CIDRs of reverse proxies in front of the admin listener: from them the address the "
                             "throttle counts is the last `X-Forwarded-For` entry outside these networks.",
    "admin.session_max_age_s": "How long a browser session (`POST /v1/session`) lasts (seconds; the cookie's "
                               "`Max-Age`).",
    "admin.behind_tls": "`true` when browsers reach the admin listener over HTTPS (a TLS proxy in front): the session "
                        "cookie is then marked `Secure`.",
}
