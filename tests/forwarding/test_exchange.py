"""The leg's HTTP/1.1 exchange against raw-socket agents: Content-Length, chunked and close-framed
replies, `Connection: close`, 1xx interim replies, HEAD, early close, malformed replies, a reply over
the cap, slow agents on both sides, keep-alive reuse, and the request head on the wire."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest

from stickyroute.config.model import UpstreamSettings
from stickyroute.errors import UpstreamError, UpstreamTimeout
from stickyroute.forwarding.exchange import EarlyClose
from stickyroute.forwarding.leg import Leg
from tests.forwarding.leg_helpers import HANG_GUARD_S, SERVER, TELEGRAM_UPDATE, agent, inbound

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]
SETTINGS = UpstreamSettings(connect_timeout_s=2.0, timeout_s=2.0, max_connections=2, late_answer_s=0.0)


class Agent:
    """A raw-socket agent on 127.0.0.1: each connection runs `handler`; counts connections and keeps
    every request head it read."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.connections = 0
        self.heads: list[bytes] = []
        self.url = ""

    async def read_request(self, reader: asyncio.StreamReader) -> bytes:
        """One request (head + Content-Length body); b"" when the client closed."""
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError:
            return b""
        self.heads.append(head)
        length = 0
        for line in head.split(b"\r\n"):
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":", 1)[1])
        return head + await reader.readexactly(length)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            await self.handler(reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            pass  # the leg closed it, or the test ended
        finally:
            writer.close()


@contextlib.asynccontextmanager
async def raw_agent(make: Callable[[Agent], Handler]) -> AsyncIterator[Agent]:
    up = Agent(lambda r, w: asyncio.sleep(0))
    up.handler = make(up)
    server = await asyncio.start_server(up._serve, "127.0.0.1", 0)
    up.url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
    try:
        yield up
    finally:
        server.close()


async def _forward(leg: Leg, up: Agent, method: str = "POST", body: bytes = TELEGRAM_UPDATE):
    return await asyncio.wait_for(
        leg.forward(inbound(body, method=method), agent(up.url), "telegram", "binding"), HANG_GUARD_S)


def _replying(*replies: bytes, close: bool = False) -> Callable[[Agent], Handler]:
    """Answer each request, on whichever connection, with the next of `replies` (and close the
    connection after it, with `close`); keep the connection open after the last."""
    left = list(replies)

    def make(up: Agent) -> Handler:
        async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            while left:
                if not await up.read_request(reader):
                    return
                writer.write(left.pop(0))
                await writer.drain()
                if close:
                    return
            await reader.read()  # until the leg closes it
        return handler
    return make


@pytest.fixture
async def leg() -> AsyncIterator[Leg]:
    made = Leg(SETTINGS, SERVER)
    yield made
    await made.aclose()


OK = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n{\"ok\":true}"


async def test_content_length_replies_reuse_one_keep_alive_connection(leg: Leg) -> None:
    async with raw_agent(_replying(OK, OK, OK)) as up:
        replies = [await _forward(leg, up) for _ in range(3)]
    assert [(r.status, r.body) for r in replies] == [(200, b'{"ok":true}')] * 3
    assert replies[0].headers == [(b"Content-Type", b"application/json")]
    assert up.connections == 1


async def test_the_request_head_on_the_wire() -> None:
    """Request line as built, `Host` first, then `Content-Length`, then the fields in order with
    their names as given (duplicates whose case differs kept apart), nothing else."""
    leg = Leg(SETTINGS, SERVER)
    try:
        async with raw_agent(_replying(OK)) as up:
            request = inbound(b"{}", headers=[(b"content-type", b"application/json"), (b"X-Dup", b"1"),
                                                (b"x-dup", b"2")], query=b"a=%2F&b")
            await asyncio.wait_for(leg.forward(request, agent(up.url), "telegram", "binding"), HANG_GUARD_S)
    finally:
        await leg.aclose()
    port = up.url.rsplit(":", 1)[1]
    assert up.heads == [
        b"POST /webhooks/telegram?a=%2F&b HTTP/1.1\r\nHost: 127.0.0.1:" + port.encode() + b"\r\n"
        b"Content-Length: 2\r\ncontent-type: application/json\r\nX-Dup: 1\r\nx-dup: 2\r\n"
        b"x-forwarded-for: 203.0.113.7\r\nx-forwarded-proto: https\r\nx-forwarded-host: hooks.example.test\r\n"
        b"x-stickyroute-agent: billing\r\nx-stickyroute-reason: binding\r\n\r\n"]


async def test_a_chunked_reply_is_read_whole_and_its_connection_reused(leg: Leg) -> None:
    chunked = (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nX-A: 1\r\n\r\n"
               b"5\r\nhello\r\n6\r\n world\r\n0\r\nX-Trailer: t\r\n\r\n")
    async with raw_agent(_replying(chunked, OK)) as up:
        first = await _forward(leg, up)
        second = await _forward(leg, up)
    assert (first.status, first.body, first.headers) == (200, b"hello world", [(b"X-A", b"1")])  # no trailers
    assert (second.body, up.connections) == (b'{"ok":true}', 1)


async def test_connection_close_is_honoured_and_the_next_forward_connects_again(leg: Leg) -> None:
    closing = b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok"
    async with raw_agent(_replying(closing, closing, close=True)) as up:
        replies = [await _forward(leg, up) for _ in range(2)]
    assert [(r.status, r.body, r.headers) for r in replies] == [(200, b"ok", [])] * 2
    assert up.connections == 2


async def test_a_reply_framed_by_closing_the_connection(leg: Leg) -> None:
    async with raw_agent(_replying(b"HTTP/1.1 200 OK\r\nX-A: 1\r\n\r\nuntil the end", close=True)) as up:
        reply = await _forward(leg, up)
    assert (reply.status, reply.body, reply.headers) == (200, b"until the end", [(b"X-A", b"1")])


async def test_interim_1xx_replies_are_skipped(leg: Leg) -> None:
    interim = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n" + OK
    async with raw_agent(_replying(interim, OK)) as up:
        first = await _forward(leg, up)
        second = await _forward(leg, up)
    assert (first.status, first.body, first.headers) == (200, b'{"ok":true}', [(b"Content-Type", b"application/json")])
    assert (second.status, up.connections) == (200, 1)


@pytest.mark.parametrize("reply", [b"HTTP/1.1 204 No Content\r\n\r\n", b"HTTP/1.1 304 Not Modified\r\nETag: x\r\n\r\n"])
async def test_bodyless_statuses_end_at_their_headers(leg: Leg, reply: bytes) -> None:
    async with raw_agent(_replying(reply, OK)) as up:
        first = await _forward(leg, up)
        second = await _forward(leg, up)
    assert (first.body, second.body, up.connections) == (b"", b'{"ok":true}', 1)


async def test_a_head_reply_has_no_body_whatever_its_length_says(leg: Leg) -> None:
    async with raw_agent(_replying(b"HTTP/1.1 200 OK\r\nContent-Length: 500\r\n\r\n")) as up:
        reply = await _forward(leg, up, method="HEAD", body=b"")
    assert (reply.status, reply.body) == (200, b"")
    assert up.heads[0].startswith(b"HEAD /webhooks/telegram HTTP/1.1\r\n")
    assert b"Content-Length" not in up.heads[0]


@pytest.mark.parametrize("partial", [b"", b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc",
                                     b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab"],
                         ids=["nothing", "short-content-length", "short-chunked"])
async def test_an_early_close_is_an_upstream_error_and_the_pool_recovers(leg: Leg, partial: bytes) -> None:
    async with raw_agent(_replying(partial, close=True)) as up:
        with pytest.raises(UpstreamError) as caught:
            await _forward(leg, up)
    assert (type(caught.value), caught.value.status_code, type(caught.value.__cause__)) == (
        UpstreamError, 502, EarlyClose)
    assert (leg.failures, leg.pools.in_use) == ({("billing", "error"): 1}, {"billing": 0})


async def test_a_malformed_reply_is_an_upstream_error(leg: Leg) -> None:
    async with raw_agent(_replying(b"HTTP/1.1 2x0 Nope\r\n\r\n")) as up:
        with pytest.raises(UpstreamError) as caught:
            await _forward(leg, up)
    assert (caught.value.status_code, caught.value.kind) == (502, "error")
    assert type(caught.value.__cause__).__module__.startswith("httptools")


async def test_a_chunked_reply_over_the_cap_is_relayed_without_its_body() -> None:
    leg = Leg(SETTINGS, SERVER, max_reply_bytes=8)
    big = (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: text/plain\r\nX-A: 1\r\n\r\n"
           b"5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n")
    try:
        async with raw_agent(_replying(big, b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")) as up:
            dropped = await _forward(leg, up)
            after = await _forward(leg, up)
    finally:
        await leg.aclose()
    assert (dropped.status, dropped.body, dropped.headers) == (
        200, b"", [(b"X-A", b"1"), (b"x-stickyroute-reply-dropped", b"body over 8 bytes")])
    assert (after.body, up.connections, leg.failures) == (b"ok", 2, {("billing", "too_large"): 1})


def _trickling(pause_s: float) -> Callable[[Agent], Handler]:
    """A slow agent: reads the request, then sends its reply a few bytes at a time."""
    def make(up: Agent) -> Handler:
        async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await up.read_request(reader)
            for i in range(0, len(OK), 16):
                writer.write(OK[i:i + 16])
                await writer.drain()
                await asyncio.sleep(pause_s)
            await up.read_request(reader)
        return handler
    return make


async def test_a_slow_reply_within_the_idle_bound_arrives_whole() -> None:
    leg = Leg(UpstreamSettings(connect_timeout_s=2.0, timeout_s=0.5, max_connections=2, late_answer_s=0.0), SERVER)
    try:
        async with raw_agent(_trickling(0.1)) as up:
            reply = await _forward(leg, up)  # 6 pieces, 0.6 s in all: longer than timeout_s, never idle that long
    finally:
        await leg.aclose()
    assert (reply.status, reply.body) == (200, b'{"ok":true}')


async def test_an_agent_idle_past_timeout_s_mid_reply_is_a_timeout() -> None:
    leg = Leg(UpstreamSettings(connect_timeout_s=2.0, timeout_s=0.2, max_connections=2, late_answer_s=0.0), SERVER)
    try:
        async with raw_agent(_trickling(1.0)) as up:
            with pytest.raises(UpstreamTimeout) as caught:
                await _forward(leg, up)
    finally:
        await leg.aclose()
    assert (caught.value.status_code, type(caught.value.__cause__), leg.pools.in_use) == (504, TimeoutError,
                                                                                          {"billing": 0})


async def test_a_slow_reading_agent_still_gets_a_large_body_whole(leg: Leg) -> None:
    body = bytes(range(256)) * 4096  # 1 MiB: more than the socket buffers hold
    received: list[int] = []

    def make(up: Agent) -> Handler:
        async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            head = await reader.readuntil(b"\r\n\r\n")
            length = int(next(line for line in head.split(b"\r\n") if line.startswith(b"Content-Length:"))[15:])
            got = 0
            while got < length:
                await asyncio.sleep(0.001)
                got += len(await reader.read(min(65536, length - got)))
            received.append(got)
            writer.write(OK)
            await writer.drain()
            await up.read_request(reader)
        return handler

    async with raw_agent(make) as up:
        reply = await _forward(leg, up, body=body)
    assert (reply.status, received) == (200, [len(body)])


async def test_a_cancelled_forward_closes_its_connection_and_frees_the_slot(leg: Leg) -> None:
    reached = asyncio.Event()

    async def never(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        reached.set()
        await reader.read()  # until the leg closes it

    async with raw_agent(lambda up: never) as up:
        task = asyncio.ensure_future(_forward(leg, up))
        await asyncio.wait_for(reached.wait(), HANG_GUARD_S)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await asyncio.sleep(0)
    assert leg.pools.in_use == {"billing": 0}


async def test_an_idle_connection_is_closed_after_the_idle_keep(monkeypatch: pytest.MonkeyPatch, leg: Leg) -> None:
    from stickyroute.forwarding import pools

    monkeypatch.setattr(pools, "IDLE_KEEP_S", 0.2)
    closed = asyncio.Event()

    def make(up: Agent) -> Handler:
        async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await up.read_request(reader)
            writer.write(OK)
            await writer.drain()
            await reader.read()  # until the leg closes it
            closed.set()
        return handler

    async with raw_agent(make) as up:
        reply = await _forward(leg, up)
        await asyncio.wait_for(closed.wait(), HANG_GUARD_S)
    assert (reply.status, leg.pools._pools["billing"].idle) == (200, [])
