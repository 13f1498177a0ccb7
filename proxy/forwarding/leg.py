"""The forwarding leg: the inbound bytes to an agent over aiohttp, the agent's reply back.

    Leg.forward(inbound, agent, channel, reason, part=None) -> Reply

The leg builds the upstream URL (the agent's base URL + the inbound path and query as received,
or the agent's exact per-channel URL) and the request headers (`headers.upstream_request_headers`:
hop-by-hop stripped, X-Forwarded-* extended for trusted peers, our markers added), sends the same
body bytes (or a split batch's part), and reads the reply raw (still `Content-Encoding`-encoded)
and capped. aiohttp was chosen by measurement (README "Performance": about 300 µs of CPU per
forward against 540 µs for httpx's client over an aiohttp transport).

Sent as given: the URL is never requoted (`yarl.URL(..., encoded=True)`), header order and
duplicates are kept even when their case differs, nothing is added but `Host` and
`Content-Length` (no User-Agent, Accept, Accept-Encoding, Content-Type, cookies), no
decompression, no redirects followed, no proxy from the environment. One pooled session per
agent (`upstream.max_connections` each), so one slow agent cannot starve the others. Every
response is released on every path, cancellation included (field report T34).

Errors, translated in one place (`translate`; statuses in proxy/errors.py):

    cannot connect (refused, DNS, connect timeout)      -> UpstreamConnectError (502)
    no reply in time (read, pool wait, total deadline)  -> UpstreamTimeout      (504)
    a reply over `max_reply_bytes`                      -> UpstreamTooLarge     (502)
    any other client error, invalid URL                 -> UpstreamError        (502)
"""

from __future__ import annotations

import asyncio
import functools
from typing import Protocol

import aiohttp
import yarl

from proxy.channels.base import BodyPart
from proxy.config.model import MIB, Agent, ServerSettings, UpstreamSettings
from proxy.errors import UpstreamConnectError, UpstreamError, UpstreamTimeout, UpstreamTooLarge
from proxy.forwarding.body import BodyTooLarge, read_capped
from proxy.forwarding.headers import TrustedProxies, relay_response_headers, upstream_request_headers
from proxy.forwarding.inbound import Inbound
from proxy.reply import Reply

__all__ = ["Forwarding", "Leg", "translate", "upstream_url"]

_NO_AUTO_HEADERS = ("User-Agent", "Accept", "Accept-Encoding", "Content-Type")
_BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})
MAX_REPLY_BYTES = 5 * MIB
"""Default cap of a buffered agent reply (bytes)."""


class Forwarding(Protocol):
    """What the dispatcher needs of a leg (the aiohttp `Leg`, or a fake in unit tests)."""

    async def forward(self, inbound: Inbound, agent: Agent, channel: str, reason: str,
                      part: BodyPart | None = None) -> Reply:
        """Send the request (or `part`) to `agent`; the agent's reply. Raises UpstreamError."""
        ...

    async def aclose(self) -> None:
        """Close every pool."""
        ...


def upstream_url(base: str, raw_path: str | bytes, query: bytes | str) -> str:
    """Agent base URL + the inbound path and query exactly as received.

    `raw_path` is the ASGI `raw_path` (bytes are read as latin-1, byte for byte), `query` the ASGI
    `query_string` (no `?`; empty means none). No re-encoding, no reordering. With a path, a
    trailing `/` of `base` is dropped (`http://a:1/` + `/telegram` is `http://a:1/telegram`);
    with an empty path `base` is an exact target (a per-channel URL) kept as written, and a query
    of its own is joined with `&`.
    """
    path = raw_path.decode("latin-1") if isinstance(raw_path, bytes) else raw_path
    query_text = query.decode("latin-1") if isinstance(query, bytes) else query
    url = base.rstrip("/") + path if path else base
    if not query_text:
        return url
    return f"{url}{'&' if '?' in url else '?'}{query_text}"


@functools.lru_cache(maxsize=4096)
def _url(url: str) -> yarl.URL:
    """The upstream URL exactly as built from the inbound request (no requoting); ValueError
    for a URL that is not ASCII http(s) with a host."""
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


class Leg:
    """Pooled forwarding over aiohttp, one session per agent, made on first use in the loop.

    Timeouts (seconds, `[upstream]`): `connect_timeout_s` to connect a socket, `timeout_s`
    between reads of the reply and for a free pooled connection, and `connect_timeout_s +
    timeout_s` for the whole exchange (an agent dripping its reply cannot hold the webhook).
    `server.trusted_proxies` decides whose X-Forwarded-* are extended. `max_reply_bytes` caps a
    buffered reply.
    """

    def __init__(self, upstream: UpstreamSettings, server: ServerSettings,
                 max_reply_bytes: int = MAX_REPLY_BYTES) -> None:
        self.max_reply_bytes = max_reply_bytes
        self._limit = upstream.max_connections
        self._trusted = TrustedProxies.from_cidrs(server.trusted_proxies)
        self._timeout = aiohttp.ClientTimeout(
            total=upstream.connect_timeout_s + upstream.timeout_s,
            sock_connect=upstream.connect_timeout_s, sock_read=upstream.timeout_s, connect=upstream.timeout_s,
        )
        self._sessions: dict[str, aiohttp.ClientSession] = {}

    def _session(self, agent: str) -> aiohttp.ClientSession:
        session = self._sessions.get(agent)
        if session is None:
            session = self._sessions[agent] = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=self._limit or 0),
                skip_auto_headers=_NO_AUTO_HEADERS,
                auto_decompress=False,
                cookie_jar=aiohttp.DummyCookieJar(),
                trust_env=False,
            )
        return session

    async def forward(self, inbound: Inbound, agent: Agent, channel: str, reason: str,
                      part: BodyPart | None = None) -> Reply:
        """Send the inbound request (or a batch `part`) to `agent`; its reply, buffered raw.

        Raises UpstreamConnectError, UpstreamTimeout or UpstreamError (module docstring).
        """
        exact = agent.channel_urls.get(channel)
        if exact:
            url = upstream_url(exact, b"", inbound.query)
        else:
            url = upstream_url(agent.url, inbound.raw_path, inbound.query)
        headers = upstream_request_headers(
            inbound.headers, client_ip=inbound.client_ip, scheme=inbound.scheme, host=inbound.host,
            peer_trusted=inbound.client_ip in self._trusted, agent=agent.name, reason=reason,
        )
        body = inbound.body
        if part is not None:
            body = part.body
            headers = [h for h in headers if h[0].lower() not in part.drop] + part.add
        return await self._send(agent.name, inbound.method, url, headers, body)

    async def _send(self, agent: str, method: str, url: str, headers: list[tuple[bytes, bytes]], body: bytes) -> Reply:
        try:
            target = _url(url)
        except ValueError as exc:
            raise UpstreamError(f"invalid upstream URL {url!r}") from exc
        spelling: dict[str, str] = {}  # aiohttp would merge duplicates whose name case differs
        framing = [("Content-Length", str(len(body)))] if body or method in _BODY_METHODS else []
        wire = framing + [
            (spelling.setdefault(name.decode("latin-1").lower(), name.decode("latin-1")), value.decode("latin-1"))
            for name, value in headers  # Host and Content-Length are never among them
        ]
        try:
            async with self._session(agent).request(method, target, headers=wire, data=body or None,
                                                    allow_redirects=False, timeout=self._timeout) as response:
                data = await read_capped(response.content.iter_any(), self.max_reply_bytes)
                return Reply(response.status, relay_response_headers(list(response.raw_headers)), data)
        except BodyTooLarge as exc:
            raise UpstreamTooLarge(f"reply too large: over {exc.limit} bytes") from exc
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise translate(exc) from exc

    async def aclose(self) -> None:
        """Close every pool."""
        sessions, self._sessions = list(self._sessions.values()), {}
        for session in sessions:
            await session.close()
