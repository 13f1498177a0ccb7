"""proxy/forwarder.py against a real upstream on 127.0.0.1 (T1, T30, T31, T33, T34, T35).

Wire tests run on both legs: the production one (aiohttp directly, `proxy/forward_aiohttp.py`)
and httpx over its own httpcore transport, which tests and respx-based suites may substitute.
"""

from __future__ import annotations

import asyncio
import gzip
import hashlib
import socket
from contextlib import asynccontextmanager
from types import SimpleNamespace
from typing import AsyncIterator, Callable, Iterator

import aiohttp
import httpx
import pytest
import respx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from proxy.config.model import UpstreamSettings
from proxy.errors import UpstreamConnectError, UpstreamError, UpstreamTimeout
from proxy.forwarding.forwarder import Forwarder, UpstreamReply, upstream_limits, upstream_timeout, upstream_url
from proxy.forwarding.headers import upstream_request_headers
from tests.test_security import T1_BODY
from tests.upstreams import RecordingUpstream, serve_app

HANG_GUARD_S = 10.0
SETTINGS = UpstreamSettings(connect_timeout_s=5.0, timeout_s=10.0, max_connections=10)
JSON = [(b"content-type", b"application/json")]
TELEGRAM_UPDATE = b'{"update_id":5001,"message":{"message_id":10,"from":{"id":111,"is_bot":false,"first_name":"Ana"},"chat":{"id":111,"type":"private"},"date":1700000000,"text":"what is my balance?"}}'
BODY_64K = (bytes(range(256)) * 256)[: 64 * 1024]

TransportFactory = Callable[[UpstreamSettings], "httpx.AsyncBaseTransport | None"]


def _default(settings: UpstreamSettings) -> None:
    return None  # the production leg: aiohttp directly (proxy/forward_aiohttp.py)


def _causes(make_transport: TransportFactory, httpx_types: tuple[type, ...], aiohttp_types: tuple[type, ...]) -> tuple[type, ...]:
    """The exception types a failure of this kind has as its cause on the leg under test."""
    return aiohttp_types if make_transport is _default else httpx_types


def _httpcore(settings: UpstreamSettings) -> httpx.AsyncBaseTransport:
    return httpx.AsyncHTTPTransport(limits=upstream_limits(settings))


@pytest.fixture(params=[_default, _httpcore], ids=["aiohttp", "httpcore"])
def make_transport(request: pytest.FixtureRequest) -> TransportFactory:
    return request.param


@pytest.fixture(scope="module")
def shared_upstream() -> Iterator[RecordingUpstream]:
    with RecordingUpstream() as up:
        yield up


@pytest.fixture
def upstream(shared_upstream: RecordingUpstream) -> RecordingUpstream:
    """The module's upstream, reset: no requests recorded, default behaviour."""
    shared_upstream.reset()
    return shared_upstream


@pytest.fixture
async def forwarder(make_transport: TransportFactory) -> AsyncIterator[Forwarder]:
    fwd = Forwarder(SETTINGS, transport=make_transport(SETTINGS))
    yield fwd
    await fwd.aclose()


async def _forward(
    fwd: Forwarder, up: RecordingUpstream, body: bytes = TELEGRAM_UPDATE, *, method: str = "POST",
    path: bytes = b"/webhooks/telegram", query: bytes = b"", headers: list[tuple[bytes, bytes]] | None = None,
) -> UpstreamReply:
    url = upstream_url(up.url, path, query)
    return await asyncio.wait_for(fwd.forward(method, url, JSON if headers is None else headers, body), HANG_GUARD_S)


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# --- upstream_url (pure) -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("base", "raw_path", "query", "expected"),
    [
        ("http://127.0.0.1:9102", b"/webhooks/telegram", b"", "http://127.0.0.1:9102/webhooks/telegram"),
        ("http://127.0.0.1:9102/", "/webhooks/telegram", "", "http://127.0.0.1:9102/webhooks/telegram"),
        ("http://up-billing:8002/agent", b"/hook", b"b=2&a=%2F", "http://up-billing:8002/agent/hook?b=2&a=%2F"),
        ("http://a:1", b"/a%2fb/c%7e", "x=%7e&z=a+b&q=\"|{}\"", "http://a:1/a%2fb/c%7e?x=%7e&z=a+b&q=\"|{}\""),
        ("http://host/exact/path/", b"", b"", "http://host/exact/path/"),
        ("http://host/exact/path?token=t1", b"", b"b=2&a=1", "http://host/exact/path?token=t1&b=2&a=1"),
    ],
)
def test_upstream_url_appends_path_and_query_as_received(
    base: str, raw_path: bytes | str, query: bytes | str, expected: str
) -> None:
    assert upstream_url(base, raw_path, query) == expected


def test_timeouts_and_limits_are_explicit() -> None:
    settings = UpstreamSettings(connect_timeout_s=1.5, timeout_s=7.0, max_connections=12)
    assert upstream_timeout(settings) == httpx.Timeout(connect=1.5, read=7.0, write=7.0, pool=7.0)
    assert upstream_limits(settings) == httpx.Limits(max_connections=12, max_keepalive_connections=12)


# --- bytes out --------------------------------------------------------------------------------------


@pytest.mark.parametrize("body", [T1_BODY, BODY_64K, TELEGRAM_UPDATE], ids=["T1-escapes", "64KiB-all-bytes", "telegram"])
async def test_body_bytes_arrive_identical(forwarder: Forwarder, upstream: RecordingUpstream, body: bytes) -> None:
    reply = await _forward(forwarder, upstream, body)
    [received] = upstream.requests
    assert hashlib.sha256(received.body).hexdigest() == hashlib.sha256(body).hexdigest()
    assert received.body == body
    assert received.header_values(b"content-length") == [str(len(body)).encode()]
    assert (reply.status, reply.body) == (200, b'{"ok":true}')
    assert (b"content-type", b"application/json") in reply.headers


async def test_t1_escapes_survive_literally(forwarder: Forwarder, upstream: RecordingUpstream) -> None:
    await _forward(forwarder, upstream, T1_BODY, path=b"/webhooks/whatsapp")
    [received] = upstream.requests
    assert b"http:\\/\\/ex.test\\/a caf\\u00e9" in received.body


@pytest.mark.parametrize(
    "target",
    [
        b"/webhooks/telegram",
        b"/webhooks/telegram?b=2&a=%2F",
        b"/webhooks/twilio/sms?agent=auto",
        b"/a%2fb/c%7e?x=%7e&y=%41&z=a+b&w=%zz&a=1&a=2&&=",
        b'/p?q="|{}"',
        b"/hooks/../webhooks/./telegram?x=1",
    ],
)
async def test_path_and_query_arrive_byte_identical(
    forwarder: Forwarder, upstream: RecordingUpstream, target: bytes
) -> None:
    path, _, query = target.partition(b"?")
    await _forward(forwarder, upstream, path=path, query=query)
    [received] = upstream.requests
    assert received.target == target


@pytest.mark.parametrize("method", ["GET", "POST", "PUT", "PATCH", "DELETE"])
async def test_method_is_preserved(forwarder: Forwarder, upstream: RecordingUpstream, method: str) -> None:
    body = b"" if method == "GET" else TELEGRAM_UPDATE
    await _forward(forwarder, upstream, body, method=method)
    [received] = upstream.requests
    assert (received.method, received.body) == (method, body)


async def test_t35_host_is_the_upstream_and_forwarded_headers_name_the_client(
    forwarder: Forwarder, upstream: RecordingUpstream
) -> None:
    inbound = [(b"Host", b"hooks.example.test"), (b"Content-Type", b"application/json"), (b"X-Forwarded-For", b"10.6.6.6")]
    headers = upstream_request_headers(
        inbound, client_ip="203.0.113.7", scheme="https", host="hooks.example.test",
        peer_trusted=False, agent="billing", reason="binding:user",
    )
    await _forward(forwarder, upstream, headers=headers)
    [received] = upstream.requests
    assert received.headers == [
        (b"host", upstream.host.encode()),
        (b"content-length", str(len(TELEGRAM_UPDATE)).encode()),
        (b"content-type", b"application/json"),
        (b"x-forwarded-for", b"203.0.113.7"),
        (b"x-forwarded-proto", b"https"),
        (b"x-forwarded-host", b"hooks.example.test"),
        (b"x-stickyroute-agent", b"billing"),
        (b"x-stickyroute-reason", b"binding:user"),
    ]


async def test_client_adds_no_header_of_its_own(forwarder: Forwarder, upstream: RecordingUpstream) -> None:
    await _forward(forwarder, upstream, headers=[(b"X-Only", b"1")])
    [received] = upstream.requests
    assert received.header_names == [b"host", b"content-length", b"x-only"]


async def test_inbound_accept_headers_and_duplicates_are_kept(forwarder: Forwarder, upstream: RecordingUpstream) -> None:
    headers = [
        (b"Accept-Encoding", b"gzip, deflate"),
        (b"User-Agent", b"TelegramBot (like TwitterBot)"),
        (b"Accept", b"*/*"),
        (b"X-Tag", b"a"),
        (b"x-tag", b"b"),
    ]
    await _forward(forwarder, upstream, headers=headers)
    [received] = upstream.requests
    assert received.headers[2:] == [(name.lower(), value) for name, value in headers]


async def test_upstream_cookies_are_never_replayed(forwarder: Forwarder, upstream: RecordingUpstream) -> None:
    upstream.respond(headers=[(b"set-cookie", b"session=agent-secret; Path=/")])
    reply = await _forward(forwarder, upstream)
    await _forward(forwarder, upstream)
    assert (b"set-cookie", b"session=agent-secret; Path=/") in reply.headers
    assert [r.header_values(b"cookie") for r in upstream.requests] == [[], []]


async def test_t31_exactly_one_framing_header_and_no_hop_by_hop(forwarder: Forwarder, upstream: RecordingUpstream) -> None:
    raw_inbound = [
        (b"Transfer-Encoding", b"chunked"),
        (b"Content-Length", b"999"),
        (b"Connection", b"keep-alive, X-Debug"),
        (b"X-Debug", b"1"),
        (b"Keep-Alive", b"timeout=5"),
        (b"TE", b"trailers"),
        (b"Upgrade", b"h2c"),
        (b"Proxy-Authorization", b"Basic eA=="),
        (b"Content-Type", b"application/json"),
    ]
    body = b'{"update_id":1}'
    await _forward(forwarder, upstream, body, headers=raw_inbound)
    [received] = upstream.requests
    assert received.header_values(b"content-length") == [b"15"]
    assert received.header_names == [b"host", b"content-length", b"content-type"]


# --- the reply --------------------------------------------------------------------------------------


async def test_t33_redirect_is_relayed_not_followed(forwarder: Forwarder, upstream: RecordingUpstream) -> None:
    upstream.respond(status=307, headers=[(b"location", b"/webhooks/telegram/")], body=b"")
    reply = await _forward(forwarder, upstream)
    assert (reply.status, reply.body) == (307, b"")
    assert (b"location", b"/webhooks/telegram/") in reply.headers
    [received] = upstream.requests
    assert (received.method, received.target, received.body) == ("POST", b"/webhooks/telegram", TELEGRAM_UPDATE)


async def test_gzip_reply_is_relayed_raw_with_its_encoding(forwarder: Forwarder, upstream: RecordingUpstream) -> None:
    inline_call = b'{"method":"sendMessage","chat_id":111,"text":"' + b"balance " * 64 + b'"}'
    upstream.respond(body=inline_call, gzip=True)
    reply = await _forward(forwarder, upstream, headers=[(b"Accept-Encoding", b"gzip, deflate")])
    assert (b"content-encoding", b"gzip") in reply.headers
    assert reply.body == gzip.compress(inline_call, mtime=0)
    assert gzip.decompress(reply.body) == inline_call


async def test_reply_status_headers_body_relayed_without_hop_by_hop(
    forwarder: Forwarder, upstream: RecordingUpstream
) -> None:
    upstream.respond(
        status=202,
        headers=[(b"content-type", b"text/plain"), (b"connection", b"x-upstream-debug"), (b"x-upstream-debug", b"1"),
                 (b"keep-alive", b"timeout=5"), (b"x-agent", b"billing")],
        body=b"accepted",
        chunks=3,
    )
    reply = await _forward(forwarder, upstream)
    assert reply.status == 202
    assert reply.body == b"accepted"
    names = [name.lower() for name, _ in reply.headers]
    assert [n for n in names if n not in (b"date", b"server")] == [b"content-type", b"x-agent"]


async def test_reply_over_the_cap_is_an_upstream_error(make_transport: TransportFactory, upstream: RecordingUpstream) -> None:
    settings = UpstreamSettings(connect_timeout_s=5.0, timeout_s=2.0, max_connections=1)  # a leak would block
    fwd = Forwarder(settings, transport=make_transport(settings), max_reply_bytes=1024)
    try:
        upstream.respond(body=b"x" * 4096)
        with pytest.raises(UpstreamError, match="reply too large") as caught:
            await _forward(fwd, upstream)
        assert type(caught.value) is UpstreamError
        assert caught.value.status_code == 502
        upstream.respond(body=b"y" * 1024)
        assert (await _forward(fwd, upstream)).body == b"y" * 1024
    finally:
        await fwd.aclose()


# --- failures ---------------------------------------------------------------------------------------


async def test_connection_refused_is_upstream_connect_error(forwarder: Forwarder, make_transport: TransportFactory) -> None:
    url = f"http://127.0.0.1:{_closed_port()}/webhooks/telegram"
    with pytest.raises(UpstreamConnectError) as caught:
        await asyncio.wait_for(forwarder.forward("POST", url, JSON, TELEGRAM_UPDATE), HANG_GUARD_S)
    assert caught.value.status_code == 502
    assert isinstance(caught.value.__cause__, _causes(make_transport, (httpx.ConnectError, httpx.ConnectTimeout),
                                                       (aiohttp.ClientConnectorError,)))


async def test_read_timeout_is_upstream_timeout(make_transport: TransportFactory, upstream: RecordingUpstream) -> None:
    settings = UpstreamSettings(connect_timeout_s=5.0, timeout_s=0.2, max_connections=4)
    fwd = Forwarder(settings, transport=make_transport(settings))
    try:
        upstream.respond(hang=True)
        with pytest.raises(UpstreamTimeout) as caught:
            await _forward(fwd, upstream)
        assert caught.value.status_code == 504
        assert isinstance(caught.value.__cause__, _causes(make_transport, (httpx.ReadTimeout,), (aiohttp.SocketTimeoutError,)))
        await upstream.until_requests(1)
    finally:
        await fwd.aclose()


@pytest.mark.parametrize(
    ("raised", "expected"),
    [
        (httpx.ConnectError("refused"), UpstreamConnectError),
        (httpx.ConnectTimeout("connect"), UpstreamConnectError),
        (httpx.ReadTimeout("read"), UpstreamTimeout),
        (httpx.WriteTimeout("write"), UpstreamTimeout),
        (httpx.PoolTimeout("pool"), UpstreamTimeout),
        (httpx.ReadError("reset"), UpstreamError),
        (httpx.WriteError("broken pipe"), UpstreamError),
        (httpx.RemoteProtocolError("bad reply"), UpstreamError),
        (httpx.LocalProtocolError("bad request"), UpstreamError),
        (httpx.UnsupportedProtocol("ftp"), UpstreamError),
        (httpx.ProxyError("proxy"), UpstreamError),
        (httpx.DecodingError("decode"), UpstreamError),
        (TimeoutError(), UpstreamTimeout),
    ],
    ids=lambda value: type(value).__name__ if isinstance(value, BaseException) else value.__name__,
)
async def test_every_transport_error_is_mapped(raised: Exception, expected: type[UpstreamError]) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise raised

    fwd = Forwarder(SETTINGS, transport=httpx.MockTransport(handler))
    try:
        with pytest.raises(UpstreamError) as caught:
            await fwd.forward("POST", "http://up-billing:8002/webhooks/telegram", JSON, TELEGRAM_UPDATE)
        assert type(caught.value) is expected
        assert caught.value.__cause__ is raised
    finally:
        await fwd.aclose()


@pytest.mark.parametrize("url", ["http://up-billing:8002/p\x00", "http://[::1/x", "http://up-billing:8002/\u2603"])
async def test_unusable_url_is_an_upstream_error(forwarder: Forwarder, url: str) -> None:
    with pytest.raises(UpstreamError, match="invalid upstream URL") as caught:
        await forwarder.forward("POST", url, JSON, TELEGRAM_UPDATE)
    assert type(caught.value) is UpstreamError


async def test_respx_router_as_mock_transport() -> None:
    router = respx.Router(assert_all_called=True, assert_all_mocked=True)
    route = router.post("http://up-billing:8002/webhooks/telegram").respond(200, json={"method": "sendMessage"})
    fwd = Forwarder(SETTINGS, transport=httpx.MockTransport(router.async_handler))
    try:
        reply = await fwd.forward("POST", "http://up-billing:8002/webhooks/telegram", JSON, TELEGRAM_UPDATE)
    finally:
        await fwd.aclose()
    assert (reply.status, reply.body) == (200, b'{"method":"sendMessage"}')
    assert route.calls.last.request.content == TELEGRAM_UPDATE
    assert route.calls.last.request.headers["host"] == "up-billing:8002"


# --- T34: aborted clients release pooled connections -------------------------------------------------


@pytest.mark.parametrize("stall_mid_body", [False, True], ids=["before-headers", "mid-body"])
async def test_t34_cancelled_forwards_and_timeouts_release_the_pool(
    make_transport: TransportFactory, upstream: RecordingUpstream, stall_mid_body: bool
) -> None:
    settings = UpstreamSettings(connect_timeout_s=5.0, timeout_s=0.5, max_connections=4)
    fwd = Forwarder(settings, transport=make_transport(settings))
    try:
        upstream.respond(delay_s=0.5, stall_mid_body=stall_mid_body)
        tasks = [asyncio.ensure_future(_forward(fwd, upstream)) for _ in range(20)]
        await upstream.until_requests(4)
        for task in tasks:
            task.cancel()
        results = await asyncio.gather(*tasks, return_exceptions=True)
        assert all(isinstance(r, asyncio.CancelledError) or (isinstance(r, UpstreamReply) and r.status == 200) for r in results)
        assert any(isinstance(r, asyncio.CancelledError) for r in results)
        before = len(upstream.requests)

        upstream.respond(hang=True, stall_mid_body=stall_mid_body)
        for _ in range(5):
            with pytest.raises(UpstreamTimeout) as caught:
                await _forward(fwd, upstream)
            assert isinstance(caught.value.__cause__, _causes(make_transport, (httpx.ReadTimeout,), (aiohttp.SocketTimeoutError,)))  # reached the upstream, not a pool wait
        await upstream.until_requests(before + 5)

        upstream.respond()
        reply = await _forward(fwd, upstream)
        assert (reply.status, reply.body) == (200, b'{"ok":true}')
        assert await upstream.until_open_connections_at_most(4) <= 4
    finally:
        await fwd.aclose()


# --- the wire-test helper the app's tests use -------------------------------------------------------


async def test_serve_app_runs_lifespan_and_serves_real_http() -> None:
    events: list[str] = []

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        events.append("startup")
        yield
        events.append("shutdown")

    async def echo(request: Request) -> Response:
        body = await request.body()
        seen = request.scope["raw_path"] + b"?" + request.scope["query_string"]
        return Response(seen + b" " + body + b" " + request.client.host.encode(), media_type="text/plain")

    app = Starlette(routes=[Route("/{path:path}", echo, methods=["POST"])], lifespan=lifespan)
    with serve_app(app) as base_url:
        assert events == ["startup"]
        async with httpx.AsyncClient() as client:
            reply = await client.post(
                f"{base_url}/webhooks/telegram?b=2&a=%2F", content=b"hi", headers={"X-Forwarded-For": "10.6.6.6"}
            )
    assert events == ["startup", "shutdown"]
    assert (reply.status_code, reply.content) == (200, b"/webhooks/telegram?b=2&a=%2F hi 127.0.0.1")


@pytest.mark.parametrize(
    ("raised", "expected"),
    [
        (aiohttp.ClientConnectorError(SimpleNamespace(host="up", port=1, ssl=False), OSError(111, "refused")),
         UpstreamConnectError),
        (aiohttp.ConnectionTimeoutError("connect"), UpstreamConnectError),
        (aiohttp.SocketTimeoutError("read"), UpstreamTimeout),
        (TimeoutError(), UpstreamTimeout),
        (aiohttp.ServerDisconnectedError(), UpstreamError),
        (aiohttp.ClientPayloadError("payload"), UpstreamError),
        (aiohttp.ClientResponseError(SimpleNamespace(real_url="http://up"), (), status=400), UpstreamError),
    ],
    ids=lambda value: type(value).__name__ if isinstance(value, BaseException) else value.__name__,
)
def test_every_aiohttp_error_is_mapped(raised: Exception, expected: type[UpstreamError]) -> None:
    """The production leg's one translation function (proxy/forward_aiohttp.py)."""
    from proxy.forwarding.leg import translate

    assert type(translate(raised)) is expected
