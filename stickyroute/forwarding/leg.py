"""The forwarding leg: the inbound bytes to an agent on a pooled HTTP/1.1 connection, the reply back.

    Leg.forward(inbound, agent, channel, reason, part=None, extra=()) -> Reply

The leg builds the upstream URL (the agent's base URL + the inbound path and query as received,
or the agent's exact per-channel URL) and the request headers (`headers.upstream_request_headers`:
hop-by-hop stripped, X-Forwarded-* extended for trusted peers, our markers added), sends the same
body bytes (or a split batch's part), and reads the reply raw (still `Content-Encoding`-encoded).
The exchange itself (`stickyroute.forwarding.exchange`: a pre-built request head and the body on
a keep-alive connection, the reply parsed by httptools) was chosen by measurement (docs
"Performance": aiohttp's client spent about 460k instructions per forward, httpx's more).

Sent as given: the URL is never requoted (`yarl.URL(..., encoded=True)`), header order and
duplicates are kept even when their case differs, nothing is added but `Host` and
`Content-Length` (no User-Agent, Accept, Accept-Encoding, Content-Type, cookies), no
decompression, no redirects followed, no proxy from the environment. One bounded pool per agent
(`pools.Pools`), so one slow agent cannot starve the others. Every connection is given back
or closed on every path, cancellation included (field report T34): a platform that hangs up
(`hangup.HANGUP`) aborts the request to the agent (`PlatformGone`, kind `platform_gone`). No
task is started per forward: the reply is a future set by the connection.

A reply body over `upstream.max_reply_bytes` is not an error (the agent has handled the update: a
502 would make the platform deliver it twice): its status and headers are relayed with an empty
body, `X-Stickyroute-Reply-Dropped` added, counted as `reply_too_large`.

Late answers (`upstream.late_answer_s` > 0): the platform gets 504 `connect_timeout_s +
timeout_s` after forwarding started, and the exchange goes on for up to `late_answer_s` more;
`UpstreamTimeout.late` carries it so the caller can keep the late answer for the retry.

Errors, translated in one place (`exchange.translate`; statuses in stickyroute/errors.py);
`failures` counts them per (agent, kind):

    cannot connect (refused, DNS, TLS, connect timeout) -> UpstreamConnectError  (502) refused
    every pooled connection busy past connect_timeout_s -> UpstreamPoolExhausted (503) pool_exhausted
    no reply in time (read, total deadline)             -> UpstreamTimeout       (504) timeout
    a malformed reply, a reset, an early close, bad URL -> UpstreamError         (502) error
    a reply over `max_reply_bytes`: relayed without its body (kind too_large; see `Leg.forward`)
"""

from __future__ import annotations

import asyncio
import functools
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Protocol

from stickyroute.channels.base import BodyPart
from stickyroute.config.listeners import ServerSettings
from stickyroute.config.model import Agent, UpstreamSettings
from stickyroute.errors import PlatformGone, UpstreamError, UpstreamTimeout
from stickyroute.forwarding.deadlines import Deadlines
from stickyroute.forwarding.exchange import Late, RawReply, translate
from stickyroute.forwarding.hangup import HANGUP
from stickyroute.forwarding.headers import TrustedProxies, relay_response_headers, upstream_request_headers
from stickyroute.forwarding.inbound import Inbound
from stickyroute.forwarding.pools import Pools
from stickyroute.forwarding.target import target_of
from stickyroute.reply import Reply

__all__ = ["Forwarding", "Leg", "translate", "upstream_url"]

_BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})
_DROPPED_WITH_BODY = frozenset({b"content-type", b"content-encoding", b"content-md5", b"digest", b"etag"})
REPLY_DROPPED = b"x-stickyroute-reply-dropped"


class Forwarding(Protocol):
    """What the dispatcher needs of a leg (the `Leg`, or a fake in unit tests)."""

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


class Leg:
    """Pooled HTTP/1.1 forwarding (`exchange`), one bounded pool per agent, made on first use in the loop.

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
        return await self._exchange(agent, inbound.method, url, headers, body, deadlines)

    async def _exchange(self, agent: Agent, method: str, url: str, headers: list[tuple[bytes, bytes]],
                        body: bytes, deadlines: Deadlines) -> Reply:
        """One exchange, in the caller's task: the reply, or the error (a late exchange handed over
        in UpstreamTimeout.late; a hang-up aborts the exchange, PlatformGone)."""
        name = agent.name
        try:
            target = target_of(url)
        except ValueError as exc:
            self.failures[(name, "error")] += 1
            raise UpstreamError(f"invalid upstream URL {url!r}") from exc
        head = target.head(method, headers, len(body) if body or method in _BODY_METHODS else None)
        loop = asyncio.get_running_loop()
        started = loop.time()
        try:
            conn = await self.pools.acquire(agent, target, deadlines.wait_s)
        except UpstreamError as exc:
            self.failures[(name, exc.kind)] += 1
            raise
        spent = loop.time() - started
        late_on = deadlines.late_answer_s > 0
        exchange = conn.send(head, body, self.max_reply_bytes, deadlines.exchange_s - spent, deadlines.idle_s,
                             head_only=method == "HEAD", answer_s=deadlines.answer_s - spent if late_on else None)
        gone = HANGUP.get()
        try:  # cancelling this task cancels the exchange (its connection closed)
            raw = await exchange if gone is None else await self._unless_gone(exchange, gone)
        except UpstreamError as exc:
            self.failures[(name, exc.kind)] += 1
            raise
        if isinstance(raw, Late):
            self.failures[(name, "timeout")] += 1
            late: asyncio.Future[Reply] = loop.create_future()
            self._late.add(late)
            late.add_done_callback(self._late.discard)
            late.add_done_callback(_retrieved)
            raw.reply.add_done_callback(functools.partial(self._late_ended, name, late))
            raise UpstreamTimeout(f"upstream timed out (no answer in {deadlines.answer_s} s; its late answer is "
                                  f"awaited for {deadlines.late_answer_s} s more)", late=late)
        return self._reply(name, raw)

    @staticmethod
    async def _unless_gone(exchange: asyncio.Future[RawReply | Late], gone: asyncio.Future[None]) -> RawReply | Late:
        """The exchange's first answer; PlatformGone (the exchange aborted) when `gone` resolves first."""
        def hung_up(_gone: object) -> None:
            if not exchange.done():
                exchange.set_exception(PlatformGone("the platform hung up before the agent answered: request "
                                                    "cancelled"))

        gone.add_done_callback(hung_up)
        try:
            return await exchange
        finally:
            gone.remove_done_callback(hung_up)

    def _late_ended(self, name: str, late: asyncio.Future[Reply], exchange: asyncio.Future[RawReply]) -> None:
        """A late exchange ended: its reply (or error, counted `late_<kind>`) goes to `late`."""
        if late.done():
            return
        if exchange.cancelled():
            late.cancel()
            return
        error = exchange.exception()
        if error is not None:
            kind = error.kind if isinstance(error, UpstreamError) else "error"
            self.failures[(name, f"late_{kind}")] += 1
            late.set_exception(error)
            return
        try:
            late.set_result(self._reply(name, exchange.result()))
        except UpstreamError as exc:
            late.set_exception(exc)

    def _reply(self, name: str, raw: RawReply) -> Reply:
        relayed = relay_response_headers(raw.headers)
        if raw.too_large:
            self.failures[(name, "too_large")] += 1
            return _without_body(raw.status, relayed, self.max_reply_bytes)
        return Reply(raw.status, relayed, raw.body)

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
