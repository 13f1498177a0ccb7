"""The production forwarding leg: one pooled `aiohttp.ClientSession`, no httpx in between.

Chosen by measurement (README "Performance"): CPU per forwarded request against the same loopback
stub, in one process, was about 540 µs through httpx's client API over an aiohttp transport and
about 300 µs with aiohttp alone; httpx over its own httpcore transport was slower still under
concurrency. The issue allows aiohttp on this leg when no httpx transport approaches the target;
Groq keeps httpx, and tests may still substitute an httpx transport (`proxy.forwarding.forwarder`).

Same guarantees as the httpx leg: the URL is sent as given (`yarl.URL(..., encoded=True)`, never
requoted), headers as given (order kept, duplicates kept even when their case differs), nothing
added but `Host` and `Content-Length` (no User-Agent, Accept, Accept-Encoding, Content-Type, no
cookies, no decompression, no redirects, no proxy from the environment), the reply read raw and
capped, and every response released on every path, cancellation included (T34).
"""

from __future__ import annotations

import asyncio
import functools

import aiohttp
import yarl

from proxy.config.model import UpstreamSettings
from proxy.errors import UpstreamConnectError, UpstreamError, UpstreamTimeout
from proxy.forwarding.headers import RawHeaders, relay_response_headers, strip_hop_by_hop
from proxy.forwarding.replies import UpstreamReply

_NO_AUTO_HEADERS = ("User-Agent", "Accept", "Accept-Encoding", "Content-Type")
_BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})


@functools.lru_cache(maxsize=4096)
def _url(url: str) -> yarl.URL:
    """The upstream URL exactly as built from the inbound request (no requoting)."""
    if not url.isascii() or any(ord(ch) < 0x21 or ord(ch) == 0x7F for ch in url):
        raise ValueError(f"not an encoded URL: {url!r}")
    parsed = yarl.URL(url, encoded=True)
    if parsed.scheme not in ("http", "https") or not parsed.host:
        raise ValueError(f"not an http(s) URL: {url!r}")
    return parsed


def translate(exc: BaseException) -> UpstreamError:
    """aiohttp / asyncio failures -> the error tree: unreachable 502, too slow 504, else 502."""
    text = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, (aiohttp.ClientConnectorError, aiohttp.ConnectionTimeoutError)):
        return UpstreamConnectError(f"upstream unreachable ({text})")
    if isinstance(exc, (aiohttp.SocketTimeoutError, TimeoutError, asyncio.TimeoutError)):
        return UpstreamTimeout(f"upstream timed out ({text})")
    return UpstreamError(f"upstream failed ({text})")


class AiohttpLeg:
    """Pooled forwarding over aiohttp; the session is made on first use inside the running loop.

    Timeouts (seconds): `connect_timeout_s` to connect a socket, `timeout_s` between reads of the
    reply and for a free pooled connection, and `connect_timeout_s + timeout_s` for the whole
    exchange (an agent dripping its reply byte by byte cannot hold the webhook open).
    `max_connections` bounds the pool.
    """

    def __init__(self, settings: UpstreamSettings, max_reply_bytes: int) -> None:
        self.max_reply_bytes = max_reply_bytes
        self._settings = settings
        self._timeout = aiohttp.ClientTimeout(
            total=settings.connect_timeout_s + settings.timeout_s,
            sock_connect=settings.connect_timeout_s, sock_read=settings.timeout_s, connect=settings.timeout_s,
        )
        self._session: aiohttp.ClientSession | None = None

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None:
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=self._settings.max_connections or 0),
                skip_auto_headers=_NO_AUTO_HEADERS,
                auto_decompress=False,
                cookie_jar=aiohttp.DummyCookieJar(),
                trust_env=False,
            )
        return self._session

    async def forward(self, method: str, url: str, headers: RawHeaders, body: bytes) -> UpstreamReply:
        """Send `body` to `url`; the reply buffered raw up to `max_reply_bytes`.

        Raises UpstreamConnectError, UpstreamTimeout or UpstreamError.
        """
        try:
            target = _url(url)
        except ValueError as exc:
            raise UpstreamError(f"invalid upstream URL {url!r}") from exc
        spelling: dict[str, str] = {}  # aiohttp would merge duplicates whose name case differs
        framing = [("Content-Length", str(len(body)))] if body or method in _BODY_METHODS else []
        wire = framing + [
            (spelling.setdefault(name.decode("latin-1").lower(), name.decode("latin-1")), value.decode("latin-1"))
            for name, value in strip_hop_by_hop(headers)
            if name.lower() not in (b"host", b"content-length")
        ]
        try:
            async with self._client().request(method, target, headers=wire, data=body or None,
                                              allow_redirects=False, timeout=self._timeout) as response:
                chunks: list[bytes] = []
                size = 0
                async for chunk in response.content.iter_any():
                    size += len(chunk)
                    if size > self.max_reply_bytes:
                        raise UpstreamError(f"reply too large: over {self.max_reply_bytes} bytes")
                    chunks.append(chunk)
                return UpstreamReply(response.status, relay_response_headers(list(response.raw_headers)),
                                     b"".join(chunks))
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise translate(exc) from exc

    async def aclose(self) -> None:
        """Close the pool."""
        if self._session is not None:
            await self._session.close()
