"""The forwarding leg: the inbound bytes to an agent over aiohttp, the agent's reply back.

    Leg.forward(inbound, agent, channel, reason, part=None, extra=()) -> Reply

The leg builds the upstream URL (the agent's base URL + the inbound path and query as received,
or the agent's exact per-channel URL) and the request headers (`headers.upstream_request_headers`:
hop-by-hop stripped, X-Forwarded-* extended for trusted peers, our markers added), sends the same
body bytes (or a split batch's part), and reads the reply raw (still `Content-Encoding`-encoded).
aiohttp was chosen by measurement (README "Performance": about 300 µs of CPU per forward against
540 µs for httpx's client over an aiohttp transport).

Sent as given: the URL is never requoted (`yarl.URL(..., encoded=True)`), header order and
duplicates are kept even when their case differs, nothing is added but `Host` and
`Content-Length` (no User-Agent, Accept, Accept-Encoding, Content-Type, cookies), no
decompression, no redirects followed, no proxy from the environment. One bounded pool per agent
(`stickyroute.forwarding.pools`), so one slow agent cannot starve the others. Every response is
released on every path, cancellation included (field report T34): a platform that hangs up
(`hangup.HANGUP`) cancels the request to the agent (`PlatformGone`, kind `platform_gone`).

A reply body over `upstream.max_reply_bytes` is not an error (the agent has handled the update: a
502 would make the platform deliver it twice): its status and headers are relayed with an empty
body, `X-Stickyroute-Reply-Dropped` added, counted as `reply_too_large`.

Late answers (`upstream.late_answer_s` > 0): the platform gets 504 `connect_timeout_s +
timeout_s` after forwarding started, and the exchange goes on for up to `late_answer_s` more;
`UpstreamTimeout.late` carries it so the caller can keep the late answer for the retry.

Errors, translated in one place (`translate`; statuses in stickyroute/errors.py); `failures` counts
them per (agent, kind):

    cannot connect (refused, DNS, connect timeout)      -> UpstreamConnectError  (502) refused
    every pooled connection busy past connect_timeout_s -> UpstreamPoolExhausted (503) pool_exhausted
    no reply in time (read, total deadline)             -> UpstreamTimeout       (504) timeout
    any other client error, invalid URL                 -> UpstreamError         (502) error
    a reply over `max_reply_bytes`: relayed without its body (kind too_large; see `Leg.forward`)
"""

from __future__ import annotations

import asyncio
import functools
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import aiohttp
import yarl

from stickyroute.channels.base import BodyPart
from stickyroute.config.listeners import ServerSettings
from stickyroute.config.model import Agent, UpstreamSettings
from stickyroute.errors import PlatformGone, UpstreamConnectError, UpstreamError, UpstreamTimeout
from stickyroute.forwarding.body import BodyTooLarge, read_capped
from stickyroute.forwarding.deadlines import Deadlines
from stickyroute.forwarding.hangup import HANGUP
from stickyroute.forwarding.headers import TrustedProxies, relay_response_headers, upstream_request_headers
from stickyroute.forwarding.inbound import Inbound
from stickyroute.forwarding.pools import Pools
from stickyroute.reply import Reply

__all__ = ["Forwarding", "Leg", "translate", "upstream_url"]

_BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})
_DROPPED_WITH_BODY = frozenset({b"content-type", b"content-encoding", b"content-md5", b"digest", b"etag"})
REPLY_DROPPED = b"x-stickyroute-reply-dropped"


class Forwarding(Protocol):
    """What the dispatcher needs of a leg (the aiohttp `Leg`, or a fake in unit tests)."""

    async def forward(self, inbound: Inbound, agent: Agent, channel: str, reason: str,
                      part: BodyPart | None = None, extra: Sequence[tuple[bytes, bytes]] = ()) -> Reply:
        """Send the request (or `part`) to `agent`, with the `extra` header fields added; the
        agent's reply. Raises UpstreamError."""
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
    """Pooled forwarding over aiohttp, one bounded pool per agent, made on first use in the loop.

    Timeouts (seconds, `[upstream]`, or a channel's own `[channels.<name>.upstream]` given in
    `channels`): `connect_timeout_s` to connect a socket and to wait for a free connection of the
    agent's pool; the platform's answer comes at most `connect_timeout_s +
    timeout_s` after forwarding started. Without late answers the exchange is bounded the same way
    (and by `timeout_s` between reads); with them it may go on `late_answer_s` longer.
    `server.trusted_proxies` decides whose X-Forwarded-* are extended. `max_reply_bytes`
    (default `upstream.max_reply_bytes`) caps a relayed reply body.
    """

    def __init__(self, upstream: UpstreamSettings, server: ServerSettings,
                 max_reply_bytes: int | None = None, channels: Mapping[str, UpstreamSettings] | None = None) -> None:
        self.max_reply_bytes = max_reply_bytes if max_reply_bytes is not None else upstream.max_reply_bytes
        self.pools = Pools(upstream.max_connections, upstream.connect_timeout_s)
        self.failures: Counter[tuple[str, str]] = Counter()
        """Failed or degraded forwards by (agent, kind): unreachable, pool_exhausted, timeout,
        error, reply_too_large; `late_<kind>` when an exchange that already gave its 504 fails
        later (for /stats; issue #11 exports them)."""
        self._late: set[asyncio.Future[Reply]] = set()
        self._trusted = TrustedProxies.from_cidrs(server.trusted_proxies)
        self._default = Deadlines.of(upstream)
        self._deadlines = {name: Deadlines.of(settings) for name, settings in (channels or {}).items()}
        """A channel's own deadlines (`[channels.<name>.upstream]`), else `_default`."""

    async def forward(self, inbound: Inbound, agent: Agent, channel: str, reason: str,
                      part: BodyPart | None = None, extra: Sequence[tuple[bytes, bytes]] = ()) -> Reply:
        """Send the inbound request (or a batch `part`) to `agent` with the `extra` header fields
        appended (the agent's conversation token); its reply, buffered raw.

        Raises UpstreamConnectError, UpstreamPoolExhausted, UpstreamTimeout (with `late` when
        late answers are on) or UpstreamError (module docstring).
        """
        exact = agent.channel_urls.get(channel)
        if exact:
            url = upstream_url(exact, b"", inbound.query)
        else:
            url = upstream_url(agent.url, inbound.raw_path, inbound.query)
        deadlines = self._deadlines.get(channel, self._default)
        headers = upstream_request_headers(
            inbound.headers, client_ip=inbound.client_ip, scheme=inbound.scheme, host=inbound.host,
            peer_trusted=inbound.client_ip in self._trusted, agent=agent.name, reason=reason,
        )
        if extra:
            headers = [*headers, *extra]
        body = inbound.body
        if part is not None:
            body = part.body
            headers = [h for h in headers if h[0].lower() not in part.drop] + part.add
        gone = HANGUP.get()
        if deadlines.late_answer_s <= 0:
            if gone is None:
                return await self._send(agent, inbound.method, url, headers, body, deadlines)
            return await self._send_until_gone(agent, inbound.method, url, headers, body, gone, deadlines)
        exchange = asyncio.ensure_future(self._send(agent, inbound.method, url, headers, body, deadlines))
        waiting: set[asyncio.Future[Any]] = {exchange} if gone is None else {exchange, gone}
        try:
            done, _pending = await asyncio.wait(waiting, timeout=deadlines.answer_s,
                                                return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            exchange.cancel()
            raise
        if exchange in done:
            return exchange.result()
        if gone is not None and gone.done():
            exchange.cancel()  # the platform went away: free the connection now
            exchange.add_done_callback(_retrieved)
            self.failures[(agent.name, "platform_gone")] += 1
            raise PlatformGone("the platform hung up before the agent answered: request cancelled")
        self.failures[(agent.name, "timeout")] += 1
        self._late.add(exchange)
        exchange.add_done_callback(self._late.discard)
        exchange.add_done_callback(_retrieved)
        raise UpstreamTimeout(f"upstream timed out (no answer in {deadlines.answer_s} s; its late answer is "
                              f"awaited for {deadlines.late_answer_s} s more)", late=exchange)

    async def _send_until_gone(self, agent: Agent, method: str, url: str, headers: list[tuple[bytes, bytes]],
                               body: bytes, gone: asyncio.Future[None], deadlines: Deadlines) -> Reply:
        """`_send` in this task, cancelled if the platform hangs up first (no extra task: the
        hang-up cancels this one, and the cancellation it caused becomes PlatformGone; any other
        cancellation, the drain deadline's, goes on as it came)."""
        task = asyncio.current_task()
        assert task is not None
        hung_up = False

        def cancel(_gone: asyncio.Future[None]) -> None:
            nonlocal hung_up
            if active:
                hung_up = True
                task.cancel()

        active = True
        gone.add_done_callback(cancel)
        try:
            reply = await self._send(agent, method, url, headers, body, deadlines)
            if hung_up:  # the client library swallowed the cancellation: forget it all the same
                task.uncancel()
            return reply
        except asyncio.CancelledError:
            if not hung_up or task.uncancel() > 0:
                raise
            self.failures[(agent.name, "platform_gone")] += 1
            raise PlatformGone("the platform hung up before the agent answered: request cancelled") from None
        finally:
            active = False
            gone.remove_done_callback(cancel)

    async def _send(self, agent: Agent, method: str, url: str, headers: list[tuple[bytes, bytes]],
                    body: bytes, deadlines: Deadlines) -> Reply:
        try:
            target = _url(url)
        except ValueError as exc:
            self.failures[(agent.name, "error")] += 1
            raise UpstreamError(f"invalid upstream URL {url!r}") from exc
        spelling: dict[str, str] = {}  # aiohttp would merge duplicates whose name case differs
        framing = [("Content-Length", str(len(body)))] if body or method in _BODY_METHODS else []
        wire = framing + [
            (spelling.setdefault(name.decode("latin-1").lower(), name.decode("latin-1")), value.decode("latin-1"))
            for name, value in headers  # Host and Content-Length are never among them
        ]
        try:
            async with self.pools.slot(agent, deadlines.wait_s) as session, session.request(
                    method, target, headers=wire, data=body or None, allow_redirects=False,
                    timeout=deadlines.timeout) as response:
                relayed = relay_response_headers(list(response.raw_headers))
                declared = response.content_length
                if declared is not None and declared <= self.max_reply_bytes:  # framed and small: one read
                    return Reply(response.status, relayed, await response.read())
                try:
                    data = await read_capped(response.content.iter_any(), self.max_reply_bytes)
                except BodyTooLarge:
                    self.failures[(agent.name, "too_large")] += 1
                    return _without_body(response.status, relayed, self.max_reply_bytes)
                return Reply(response.status, relayed, data)
        except UpstreamError as exc:
            self._count(agent.name, exc.kind)
            raise
        except (aiohttp.ClientError, TimeoutError) as exc:
            error = translate(exc)
            self._count(agent.name, error.kind)
            raise error from exc

    def _count(self, agent: str, kind: str) -> None:
        """Count a failure; one of an exchange that already gave its 504 counts as `late_<kind>`."""
        late = asyncio.current_task() in self._late
        self.failures[(agent, f"late_{kind}" if late else kind)] += 1

    async def aclose(self) -> None:
        """Close every pool."""
        await self.pools.aclose()


def _retrieved(exchange: asyncio.Future[Reply]) -> None:
    """Mark a late exchange's outcome as seen (whoever kept it reads it too)."""
    if not exchange.cancelled():
        exchange.exception()


def _without_body(status: int, headers: list[tuple[bytes, bytes]], cap: int) -> Reply:
    """The agent's status and headers without its over-cap body (and the headers describing it)."""
    kept = [(n, v) for n, v in headers if n.lower() not in _DROPPED_WITH_BODY]
    return Reply(status, [*kept, (REPLY_DROPPED, f"body over {cap} bytes".encode())], b"")
