"""Where a forward goes: an upstream URL as host, port, TLS, request-target and `Host` field, and
the request head written there.

    target = target_of(url)                        # cached per URL; ValueError for an unusable one
    head = target.head(method, fields, length)     # bytes: request line, Host, Content-Length, fields

The URL is the one the leg built from the inbound request (`leg.upstream_url`): never requoted.
`Host` is the URL's host (`[v6]` for IPv6) with `:port` unless it is the scheme's default; a
`user:password@` in the URL becomes `Authorization: Basic ...` unless the request carries its own
`Authorization` (a platform's signature header always reaches the agent).
"""

from __future__ import annotations

import base64
import functools
from dataclasses import dataclass

import yarl

__all__ = ["Target", "target_of"]


@dataclass(frozen=True, slots=True)
class Target:
    """Where an exchange goes: `host`, `port`, `tls`; the request-target and `Host` field as bytes."""

    host: str
    port: int
    tls: bool
    path: bytes
    """Path and query exactly as built (never requoted)."""
    authority: bytes
    """The `Host` field: host, `[v6]`, `:port` unless the scheme's default."""
    credentials: bytes | None = None
    """`Basic <base64>` of the URL's `user:password` (None without them)."""

    def head(self, method: str, fields: list[tuple[bytes, bytes]], length: int | None) -> bytes:
        """The request head: request line, `Host`, `Content-Length: length` (None: none), then
        `fields` in order as given (never `Host` or `Content-Length`), the blank line."""
        lines = [method.encode("latin-1"), b" ", self.path, b" HTTP/1.1\r\nHost: ", self.authority, b"\r\n"]
        if length is not None:
            lines += (b"Content-Length: ", str(length).encode(), b"\r\n")
        for name, value in fields:
            lines += (name, b": ", value, b"\r\n")
        if self.credentials is not None and not any(name.lower() == b"authorization" for name, _v in fields):
            lines += (b"Authorization: ", self.credentials, b"\r\n")
        lines.append(b"\r\n")
        return b"".join(lines)



@functools.lru_cache(maxsize=4096)
def target_of(url: str) -> Target:
    """The upstream URL exactly as built from the inbound request (no requoting) as a `Target`;
    ValueError for a URL that is not ASCII http(s) with a host."""
    if not url.isascii() or any(ord(ch) < 0x21 or ord(ch) == 0x7F for ch in url):
        raise ValueError(f"not an encoded URL: {url!r}")
    parsed = yarl.URL(url, encoded=True)
    if parsed.scheme not in ("http", "https") or not parsed.host or parsed.port is None:
        raise ValueError(f"not an http(s) URL: {url!r}")
    path = parsed.raw_path_qs or "/"
    credentials = None
    if parsed.user is not None:  # HTTP Basic from the URL (RFC 7617), as aiohttp's client sent it
        pair = f"{parsed.user}:{parsed.password or ''}".encode("latin-1")
        credentials = b"Basic " + base64.b64encode(pair)
    return Target(parsed.raw_host or parsed.host, parsed.port, parsed.scheme == "https", path.encode("ascii"),
                  parsed.host_port_subcomponent.encode("ascii") if parsed.host_port_subcomponent else b"",
                  credentials)
