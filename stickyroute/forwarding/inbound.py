"""Inbound: one webhook request as the ASGI shell read it (body read once, capped)."""

from __future__ import annotations

from dataclasses import dataclass

from stickyroute.reply import RawHeaders


@dataclass(frozen=True, slots=True)
class Inbound:
    """One inbound request: method, decoded `path`, `raw_path` and `query` as received (bytes,
    no `?`), raw headers (order and duplicates kept), the whole body (bytes), the peer's address,
    the connection's scheme (http/https) and the `Host` header."""

    method: str
    path: str
    raw_path: bytes
    query: bytes
    headers: RawHeaders
    body: bytes
    client_ip: str
    scheme: str
    host: str
