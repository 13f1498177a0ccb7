"""The forwarding leg: one pooled upstream client sending the inbound bytes to an agent.

    Forwarder.forward(method, url, headers, body) -> UpstreamReply(status, headers, body)

Same bytes out (`content=body`, never `json=`), the inbound path and query byte-identical (sent
as the request target, never re-encoded), no header added beyond `Host` and `Content-Length`,
redirects never followed, the reply read raw (still `Content-Encoding`-encoded) and buffered up
to `max_reply_bytes`. Every response is closed on every path, cancellation included (field
report T34: an aborted client must never leak a pooled connection).

Errors (each leg translates its client's exceptions in one function: `_translate` here for
httpx, `forward_aiohttp.translate` for aiohttp; statuses in proxy/errors.py):

    cannot connect (refused, DNS, connect timeout)    -> UpstreamConnectError (502)
    no reply in time (read, pool, total deadline)     -> UpstreamTimeout      (504)
    any other client error                            -> UpstreamError        (502)
    reply over max_reply_bytes, invalid URL           -> UpstreamError        (502)

Without a transport the production leg is aiohttp directly (`proxy.forwarding.leg`): per
forwarded request about 300 µs of CPU against 540 µs for httpx's client API over an aiohttp
transport and more for httpx's own httpcore transport, which also slows as concurrency grows
(README "Performance"). Tests may pass an httpx transport (`httpx.AsyncHTTPTransport`, or respx's
router in an `httpx.MockTransport`): the same contract then runs through httpx.
"""

from __future__ import annotations

import functools
from http.cookiejar import CookieJar
from urllib.parse import urlsplit

import httpx

from proxy.config.model import MIB, UpstreamSettings
from proxy.errors import UpstreamConnectError, UpstreamError, UpstreamTimeout
from proxy.forwarding.leg import AiohttpLeg
from proxy.forwarding.headers import RawHeaders, relay_response_headers, strip_hop_by_hop
from proxy.forwarding.replies import UpstreamReply

__all__ = ["Forwarder", "UpstreamReply", "upstream_url", "upstream_limits", "upstream_timeout"]

_SET_BY_HTTPX = (b"host", b"content-length")


def upstream_url(base: str, raw_path: str | bytes, query: bytes | str) -> str:
    """Agent base URL + the inbound path and query exactly as received.

    `raw_path` is the ASGI `raw_path` (bytes are read as latin-1, byte for byte), `query` the ASGI
    `query_string` (no `?`; empty means none). No re-encoding, no reordering. With a path, a
    trailing `/` of `base` is dropped (`http://a:1/` + `/telegram` is `http://a:1/telegram`);
    with an empty path `base` is an exact target (a per-channel override) kept as written, and
    a query of its own is joined with `&`.
    """
    path = raw_path.decode("latin-1") if isinstance(raw_path, bytes) else raw_path
    query_text = query.decode("latin-1") if isinstance(query, bytes) else query
    url = base.rstrip("/") + path if path else base
    if not query_text:
        return url
    return f"{url}{'&' if '?' in url else '?'}{query_text}"


@functools.lru_cache(maxsize=1024)
def _parse(url: str) -> tuple[httpx.URL, bytes]:
    """`url` parsed by httpx (for Host and the pool key) and its request target as written.

    httpx normalises the path (dot segments, quoting), so the target sent on the wire is taken
    from the string itself: path (or `/`) plus `?query` when present. Cached: webhook URLs repeat.
    """
    parts = urlsplit(url)
    target = parts.path or "/"
    if parts.query:
        target += "?" + parts.query
    return httpx.URL(url), target.encode("latin-1")


def upstream_limits(settings: UpstreamSettings) -> httpx.Limits:
    """Pool limits: `max_connections` open connections, all of them kept alive when idle."""
    return httpx.Limits(
        max_connections=settings.max_connections,
        max_keepalive_connections=settings.max_connections,
    )


def upstream_timeout(settings: UpstreamSettings) -> httpx.Timeout:
    """`connect_timeout_s` to connect; `timeout_s` for each read, write and pool wait."""
    return httpx.Timeout(
        connect=settings.connect_timeout_s,
        read=settings.timeout_s,
        write=settings.timeout_s,
        pool=settings.timeout_s,
    )


def _translate(exc: BaseException) -> UpstreamError:
    """httpx exceptions -> the error tree (the aiohttp leg has its own, `forward_aiohttp.translate`)."""
    text = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, (httpx.ConnectError, httpx.ConnectTimeout)):
        return UpstreamConnectError(f"upstream unreachable ({text})")
    if isinstance(exc, (httpx.TimeoutException, TimeoutError)):
        return UpstreamTimeout(f"upstream timed out ({text})")
    return UpstreamError(f"upstream failed ({text})")


class _NeverStoreCookies(CookieJar):
    """httpx's client cookie jar, never storing: one agent's Set-Cookie must not reach the next request."""

    def extract_cookies(self, response: object, request: object) -> None:  # type: ignore[override]
        return None


def _wire_headers(built: httpx.Headers, headers: RawHeaders) -> httpx.Headers:
    """httpx's `Host` / `Content-Length` followed by the caller's headers, and nothing else.

    Drops what the client would add on its own (User-Agent, Accept, Accept-Encoding,
    Connection, cookies); hop-by-hop fields of `headers` are stripped once more (T31).
    """
    own = [(name, value) for name, value in built.raw if name.lower() in _SET_BY_HTTPX]
    rest = [(name, value) for name, value in strip_hop_by_hop(headers) if name.lower() not in _SET_BY_HTTPX]
    return httpx.Headers(own + rest)


class Forwarder:
    """One pooled upstream client for the whole process (build in the app's lifespan).

    `settings` gives the timeouts (seconds) and pool size. Without `transport` the production
    leg is used: aiohttp directly (`proxy.forwarding.leg.AiohttpLeg`, chosen by measurement).
    With a `transport` (tests: `httpx.AsyncHTTPTransport`, or respx's router in an
    `httpx.MockTransport`) the same contract runs through httpx's client API over it.
    `max_reply_bytes` caps a buffered reply.
    """

    def __init__(
        self,
        settings: UpstreamSettings,
        transport: httpx.AsyncBaseTransport | None = None,
        max_reply_bytes: int = 5 * MIB,
    ) -> None:
        self.max_reply_bytes = max_reply_bytes
        self._leg: AiohttpLeg | None = None
        self._client: httpx.AsyncClient | None = None
        if transport is None:
            self._leg = AiohttpLeg(settings, max_reply_bytes)
        else:
            self._client = httpx.AsyncClient(
                transport=transport,
                limits=upstream_limits(settings),
                timeout=upstream_timeout(settings),
                follow_redirects=False,
                trust_env=False,
                cookies=_NeverStoreCookies(),
            )

    async def forward(self, method: str, url: str, headers: RawHeaders, body: bytes) -> UpstreamReply:
        """Send `body` to `url` with `headers` (from `upstream_request_headers`); buffer the reply.

        Raises UpstreamConnectError, UpstreamTimeout or UpstreamError (see module docstring).
        """
        if self._leg is not None:
            return await self._leg.forward(method, url, headers, body)
        assert self._client is not None
        try:
            parsed, target = _parse(url)
        except (httpx.InvalidURL, ValueError) as exc:
            raise UpstreamError(f"invalid upstream URL {url!r}") from exc
        request = self._client.build_request(method, parsed, content=body, extensions={"target": target})
        request.headers = _wire_headers(request.headers, headers)
        try:
            response = await self._client.send(request, stream=True)
            try:
                reply = await self._read_capped(response)
            finally:
                await response.aclose()
        except (httpx.HTTPError, TimeoutError) as exc:
            raise _translate(exc) from exc
        return reply

    async def _read_capped(self, response: httpx.Response) -> UpstreamReply:
        chunks: list[bytes] = []
        size = 0
        # A response built pre-read (httpx.MockTransport, respx) refuses aiter_raw(); its
        # ByteStream re-iterates the raw bytes.
        raw = response.stream if response.is_stream_consumed else response.aiter_raw()
        async for chunk in raw:  # type: ignore[union-attr]
            size += len(chunk)
            if size > self.max_reply_bytes:
                raise UpstreamError(f"reply too large: over {self.max_reply_bytes} bytes")
            chunks.append(chunk)
        return UpstreamReply(response.status_code, relay_response_headers(list(response.headers.raw)), b"".join(chunks))

    async def aclose(self) -> None:
        """Close the pool (every idle connection); the forwarder is unusable afterwards."""
        if self._leg is not None:
            await self._leg.aclose()
        if self._client is not None:
            await self._client.aclose()
