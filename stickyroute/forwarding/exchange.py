"""One HTTP/1.1 exchange with an agent on a pooled keep-alive connection, replies parsed by httptools.

    conn = await pools.acquire(agent, target, wait_s)      # `forwarding.pools`: a slot, then a connection
    reply = conn.send(head, body, cap, deadline_s, idle_s)  # a future: RawReply (or Late), or an UpstreamError

Why not a general client: the leg relays bytes it already has. The request head is built once
(`target.Target.head`) and written with the body unchanged; the reply is read by httptools into status,
raw headers (as spelled, order and duplicates kept) and the body (still encoded). Nothing is
added, decompressed, followed or retried: a POST is never sent twice (docs "Performance").

HTTP/1.1 (RFC 9112): `Content-Length` and chunked replies (trailers dropped), a reply ended by
closing the connection (neither), 1xx interim replies skipped, no body for HEAD, 204 and 304. A
connection is reused only when the reply was read whole and both sides keep it alive
(`Connection: close`, HTTP/1.0 without keep-alive: closed); an idle one is dropped after
`pools.IDLE_KEEP_S`, or as soon as the agent closes it.

Deadlines (seconds, the loop's clock): the whole exchange `deadline_s` after it was sent, and
`idle_s` without a byte from the agent (the timer is re-armed lazily, once per period, not per
read). A reply body over `cap` bytes ends the exchange at once: its status and raw headers are
kept, `RawReply.too_large` set, the connection closed.

Every failure is an `UpstreamError` set on the reply future, its cause the foreign exception
(`translate`, the only place that maps them):

    connecting: OSError (refused, unreachable, DNS `socket.gaierror`), ssl.SSLError,
                TimeoutError (connect_timeout_s)                                   -> UpstreamConnectError
    pool: every connection busy past the wait                                      -> UpstreamPoolExhausted
    exchange:   TimeoutError (deadline_s, idle_s)                                   -> UpstreamTimeout
                httptools.HttpParserError (and its subclasses), OSError (reset...),
                the agent closing before the reply's end (`EarlyClose`)             -> UpstreamError
"""

from __future__ import annotations

import asyncio
import math
import ssl
from dataclasses import dataclass
from typing import Protocol, cast

import httptools

from stickyroute.errors import UpstreamConnectError, UpstreamError, UpstreamTimeout

__all__ = ["Connection", "EarlyClose", "Home", "Late", "RawReply", "translate"]
_BODYLESS = frozenset({204, 304})


class EarlyClose(ConnectionError):
    """The agent closed the connection before its reply was complete."""


def translate(exc: BaseException, connecting: bool = False) -> UpstreamError:
    """A foreign failure -> the error tree (module docstring); `connecting`: while connecting."""
    text = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, UpstreamError):
        return exc
    if connecting and isinstance(exc, (OSError, ssl.SSLError, TimeoutError)):
        return UpstreamConnectError(f"upstream unreachable ({text})")
    if isinstance(exc, TimeoutError):
        return UpstreamTimeout(f"upstream timed out ({text})")
    return UpstreamError(f"upstream failed ({text})")


@dataclass(slots=True)
class RawReply:
    """An agent's reply as read: status, raw headers (as received), body; `too_large` when the
    body went over the cap (then `body` is empty)."""

    status: int
    headers: list[tuple[bytes, bytes]]
    body: bytes
    too_large: bool = False


@dataclass(frozen=True, slots=True)
class Late:
    """What an exchange's first future gives when its answer deadline passed first: the future
    of the reply still awaited (it ends at the exchange's own deadline)."""

    reply: asyncio.Future[RawReply]


class Home(Protocol):
    """Where a connection goes back (its agent's pool, `stickyroute.forwarding.pools`)."""

    loop: asyncio.AbstractEventLoop

    def give_back(self, conn: Connection, reusable: bool) -> None:
        """The exchange on `conn` ended: keep it for reuse (`reusable`) and free its slot."""
        ...

    def lost(self, conn: Connection) -> None:
        """`conn` is closed: forget it."""
        ...


class Connection(asyncio.Protocol):
    """One keep-alive connection to an agent; one exchange at a time (`send`)."""

    def __init__(self, pool: Home) -> None:
        self._pool = pool
        self._loop = pool.loop
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self.idle_since = 0.0
        self._parser = httptools.HttpResponseParser(self)
        self._reply: asyncio.Future[RawReply | Late] | asyncio.Future[RawReply] | None = None
        self._status = 0
        self._headers: list[tuple[bytes, bytes]] = []
        self._chunks: list[bytes] = []
        self._size = 0
        self._cap = 0
        self._head_only = False
        self._headers_done = False
        self._timer: asyncio.TimerHandle | None = None
        self._deadline = 0.0
        self._deadline_s = 0.0
        self._answer_at = math.inf
        self._idle_s = 0.0
        self._reusable = False
        self._last = 0.0

    # --- the exchange ------------------------------------------------------------------------

    def send(self, head: bytes, body: bytes, cap: int, deadline_s: float, idle_s: float,
             head_only: bool = False, answer_s: float | None = None) -> asyncio.Future[RawReply | Late]:
        """Write the request; the future of its reply (cancel it, or set its exception, to abort
        the exchange: the connection is closed). `head_only`: a HEAD request (no reply body
        whatever its framing). `answer_s`: when no reply came that soon, the future gives `Late`
        with the future of the reply still awaited (None: never)."""
        assert self.transport is not None and self._reply is None
        reply: asyncio.Future[RawReply | Late] = self._loop.create_future()
        self._reply = reply
        reply.add_done_callback(self._ended)
        self._cap, self._head_only = cap, head_only
        self._status, self._headers, self._chunks, self._size, self._headers_done = 0, [], [], 0, False
        now = self._loop.time()
        self._deadline, self._deadline_s, self._idle_s, self._last = now + deadline_s, deadline_s, idle_s, now
        self._answer_at = now + answer_s if answer_s is not None else math.inf
        self._timer = self._loop.call_at(min(self._deadline, now + idle_s, self._answer_at), self._check_time)
        if len(body) < 65536:
            self.transport.write(head + body)
        else:
            self.transport.writelines((head, body))
        return reply

    def _check_time(self) -> None:
        self._timer = None
        now = self._loop.time()
        if now >= self._deadline:
            self._fail(TimeoutError(f"no complete reply within {self._deadline_s} s"))
        elif now >= self._last + self._idle_s:
            self._fail(TimeoutError(f"nothing read for {self._idle_s} s"))
        else:
            if now >= self._answer_at:
                self._go_late()
            self._timer = self._loop.call_at(min(self._deadline, self._last + self._idle_s, self._answer_at),
                                             self._check_time)

    def _go_late(self) -> None:
        """The answer deadline passed: the first future gives `Late`, a new one takes the reply."""
        first = self._reply
        self._answer_at = math.inf
        if first is None or first.done():
            return
        late: asyncio.Future[RawReply] = self._loop.create_future()
        first.remove_done_callback(self._ended)
        late.add_done_callback(self._ended)
        self._reply = late
        first.set_result(Late(late))  # type: ignore[arg-type]

    def _fail(self, exc: BaseException) -> None:
        reply = self._reply
        if reply is not None and not reply.done():
            error = translate(exc)
            error.__cause__ = exc
            reply.set_exception(error)
        self.close()

    def _finish(self, reusable: bool) -> None:
        reply = self._reply
        if reply is None or reply.done():
            return
        body = b"".join(self._chunks) if len(self._chunks) != 1 else self._chunks[0]
        self._reusable = reusable
        reply.set_result(RawReply(self._status, self._headers, body))

    def _ended(self, reply: asyncio.Future[RawReply | Late] | asyncio.Future[RawReply]) -> None:
        """The exchange is over (answered, failed or cancelled): back to the pool, or closed."""
        self._reply = None
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        reusable = not reply.cancelled() and reply.exception() is None and self._reusable and not self.closed
        self._reusable = False
        if not reusable:
            self.close()
        self._pool.give_back(self, reusable)

    def usable(self) -> bool:
        """Open and not closing (an idle connection the agent is closing is not reused)."""
        return not self.closed and self.transport is not None and not self.transport.is_closing()

    def close(self) -> None:
        """Close the connection now (an exchange still running fails as an early close)."""
        if not self.closed:
            self.closed = True
            if self.transport is not None:
                self.transport.abort()

    # --- asyncio.Protocol --------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's is not an asyncio.Transport subclass

    def data_received(self, data: bytes) -> None:
        if self._reply is None or self._reply.done():  # bytes nobody asked for: not reusable
            self.close()
            return
        self._last = self._loop.time()
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserUpgrade as exc:  # never asked for: nothing after it is ours
            self._fail(exc)
        except httptools.HttpParserError as exc:
            self._fail(exc)

    def eof_received(self) -> bool | None:
        self._closed_by_agent(None)
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        self._closed_by_agent(exc)
        self.closed = True
        self._pool.lost(self)

    def _closed_by_agent(self, exc: Exception | None) -> None:
        if self._reply is None or self._reply.done():
            return
        if exc is None and self._headers_done and self._reads_until_close():
            self._finish(reusable=False)  # framed by the close itself (RFC 9112 6.3, rule 8)
            return
        self._fail(exc if exc is not None else EarlyClose("the agent closed the connection before the reply's end"))

    def _reads_until_close(self) -> bool:
        return (self._parser.get_status_code() not in _BODYLESS and not self._head_only
                and not any(n.lower() in (b"content-length", b"transfer-encoding") for n, _v in self._headers))

    # --- httptools callbacks -----------------------------------------------------------------

    def on_header(self, name: bytes, value: bytes) -> None:
        if not self._headers_done:  # after them: a chunked reply's trailers, not relayed
            self._headers.append((name, value))

    def on_headers_complete(self) -> None:
        status = self._parser.get_status_code()
        if 100 <= status < 200:  # an interim reply: wait for the final one
            self._headers = []
            return
        self._status = status
        self._headers_done = True
        if self._head_only:  # a HEAD reply has no body whatever its framing says
            self._finish(reusable=False)

    def on_body(self, body: bytes) -> None:
        if not self._headers_done:
            return
        self._size += len(body)
        if self._size > self._cap:
            reply = self._reply
            if reply is not None and not reply.done():
                reply.set_result(RawReply(self._status, self._headers, b"", too_large=True))
            self.close()
            return
        self._chunks.append(body)

    def on_message_complete(self) -> None:
        if not self._headers_done:  # the end of a 1xx
            return
        self._finish(reusable=self._parser.should_keep_alive())
