"""The forwarding leg against a real upstream on 127.0.0.1: same bytes out, URL and headers built
by the leg, the reply relayed raw (T1, T30, T31, T33, T35); split-batch parts and re-signing."""

from __future__ import annotations

import gzip
import hashlib

import pytest

from stickyroute.channels.base import BodyPart
from stickyroute.forwarding.leg import Leg, upstream_url
from tests.forwarding.leg_helpers import (
    BODY_64K,
    MARKERS,
    TELEGRAM_UPDATE,
    agent,
    forward,
    inbound,
)
from tests.test_security import T1_BODY
from tests.upstreams import RecordingUpstream

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


# --- bytes out --------------------------------------------------------------------------------------


@pytest.mark.parametrize("body", [T1_BODY, BODY_64K, TELEGRAM_UPDATE], ids=["T1-escapes", "64KiB-all-bytes", "telegram"])
async def test_body_bytes_arrive_identical(leg: Leg, upstream: RecordingUpstream, body: bytes) -> None:
    reply = await forward(leg, upstream, inbound(body))
    [received] = upstream.requests
    assert hashlib.sha256(received.body).hexdigest() == hashlib.sha256(body).hexdigest()
    assert (received.body, received.header_values(b"content-length")) == (body, [str(len(body)).encode()])
    assert (reply.status, reply.body) == (200, b'{"ok":true}')
    assert (b"content-type", b"application/json") in reply.headers


async def test_t1_escapes_survive_literally(leg: Leg, upstream: RecordingUpstream) -> None:
    await forward(leg, upstream, inbound(T1_BODY, path=b"/webhooks/whatsapp"))
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
async def test_path_and_query_arrive_byte_identical(leg: Leg, upstream: RecordingUpstream, target: bytes) -> None:
    path, _, query = target.partition(b"?")
    await forward(leg, upstream, inbound(path=path, query=query))
    [received] = upstream.requests
    assert received.target == target


async def test_an_exact_channel_url_replaces_base_and_path_and_keeps_the_query(
    leg: Leg, upstream: RecordingUpstream
) -> None:
    exact = agent("http://127.0.0.1:9/unused", telegram=f"{upstream.url}/exact/hook?token=t1")
    await leg.forward(inbound(path=b"/webhooks/telegram", query=b"b=2"), exact, "telegram", "binding")
    [received] = upstream.requests
    assert received.target == b"/exact/hook?token=t1&b=2"


@pytest.mark.parametrize("method", ["GET", "POST", "PUT", "PATCH", "DELETE"])
async def test_method_is_preserved(leg: Leg, upstream: RecordingUpstream, method: str) -> None:
    body = b"" if method == "GET" else TELEGRAM_UPDATE
    await forward(leg, upstream, inbound(body, method=method))
    [received] = upstream.requests
    assert (received.method, received.body) == (method, body)


async def test_t35_host_is_the_upstream_and_forwarded_headers_name_the_client(
    leg: Leg, upstream: RecordingUpstream
) -> None:
    headers = [(b"Host", b"hooks.example.test"), (b"Content-Type", b"application/json"), (b"X-Forwarded-For", b"10.6.6.6")]
    await forward(leg, upstream, inbound(headers=headers))
    [received] = upstream.requests
    assert received.headers == [
        (b"host", upstream.host.encode()),
        (b"content-length", str(len(TELEGRAM_UPDATE)).encode()),
        (b"content-type", b"application/json"),
        *MARKERS,
    ]


async def test_a_trusted_peer_has_its_forwarded_chain_extended(leg: Leg, upstream: RecordingUpstream) -> None:
    headers = [(b"X-Forwarded-For", b"198.51.100.9"), (b"X-Forwarded-Proto", b"https"),
               (b"X-Forwarded-Host", b"public.example")]
    await forward(leg, upstream, inbound(headers=headers, client_ip="127.0.0.1"))
    [received] = upstream.requests
    assert [(received.header_values(n)) for n in (b"x-forwarded-for", b"x-forwarded-proto", b"x-forwarded-host")] == [
        [b"198.51.100.9, 127.0.0.1"], [b"https"], [b"public.example"]]


async def test_client_adds_no_header_of_its_own(leg: Leg, upstream: RecordingUpstream) -> None:
    await forward(leg, upstream, inbound(headers=[(b"X-Only", b"1")]))
    [received] = upstream.requests
    assert received.header_names == [b"host", b"content-length", b"x-only", *(name for name, _ in MARKERS)]


async def test_inbound_accept_headers_and_duplicates_are_kept(leg: Leg, upstream: RecordingUpstream) -> None:
    headers = [
        (b"Accept-Encoding", b"gzip, deflate"),
        (b"User-Agent", b"TelegramBot (like TwitterBot)"),
        (b"Accept", b"*/*"),
        (b"X-Tag", b"a"),
        (b"x-tag", b"b"),
    ]
    await forward(leg, upstream, inbound(headers=headers))
    [received] = upstream.requests
    assert received.headers[2:7] == [(name.lower(), value) for name, value in headers]


async def test_upstream_cookies_are_never_replayed(leg: Leg, upstream: RecordingUpstream) -> None:
    upstream.respond(headers=[(b"set-cookie", b"session=agent-secret; Path=/")])
    reply = await forward(leg, upstream)
    await forward(leg, upstream)
    assert (b"set-cookie", b"session=agent-secret; Path=/") in reply.headers
    assert [r.header_values(b"cookie") for r in upstream.requests] == [[], []]


async def test_t31_exactly_one_framing_header_and_no_hop_by_hop(leg: Leg, upstream: RecordingUpstream) -> None:
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
    await forward(leg, upstream, inbound(b'{"update_id":1}', headers=raw_inbound))
    [received] = upstream.requests
    assert received.header_values(b"content-length") == [b"15"]
    assert received.header_names == [b"host", b"content-length", b"content-type", *(name for name, _ in MARKERS)]


async def test_a_part_replaces_body_and_signature_and_keeps_other_headers(leg: Leg, upstream: RecordingUpstream) -> None:
    headers = [(b"Content-Type", b"application/json"), (b"X-Hub-Signature-256", b"sha256=original")]
    part = BodyPart(b'{"part":1}', drop=frozenset({b"x-hub-signature-256"}),
                    add=[(b"x-hub-signature-256", b"sha256=part")])
    await forward(leg, upstream, inbound(TELEGRAM_UPDATE, headers=headers), part=part)
    [received] = upstream.requests
    assert (received.body, received.header_values(b"x-hub-signature-256"), received.header_values(b"content-type")) == (
        b'{"part":1}', [b"sha256=part"], [b"application/json"])


# --- the reply --------------------------------------------------------------------------------------


async def test_t33_redirect_is_relayed_not_followed(leg: Leg, upstream: RecordingUpstream) -> None:
    upstream.respond(status=307, headers=[(b"location", b"/webhooks/telegram/")], body=b"")
    reply = await forward(leg, upstream)
    assert (reply.status, reply.body, (b"location", b"/webhooks/telegram/") in reply.headers) == (307, b"", True)
    [received] = upstream.requests
    assert (received.method, received.target, received.body) == ("POST", b"/webhooks/telegram", TELEGRAM_UPDATE)


async def test_gzip_reply_is_relayed_raw_with_its_encoding(leg: Leg, upstream: RecordingUpstream) -> None:
    inline_call = b'{"method":"sendMessage","chat_id":111,"text":"' + b"balance " * 64 + b'"}'
    upstream.respond(body=inline_call, gzip=True)
    reply = await forward(leg, upstream, inbound(headers=[(b"Accept-Encoding", b"gzip, deflate")]))
    assert (b"content-encoding", b"gzip") in reply.headers
    assert (reply.body, gzip.decompress(reply.body)) == (gzip.compress(inline_call, mtime=0), inline_call)


async def test_reply_status_headers_body_relayed_without_hop_by_hop(leg: Leg, upstream: RecordingUpstream) -> None:
    upstream.respond(
        status=202,
        headers=[(b"content-type", b"text/plain"), (b"connection", b"x-upstream-debug"), (b"x-upstream-debug", b"1"),
                 (b"keep-alive", b"timeout=5"), (b"x-agent", b"billing")],
        body=b"accepted",
        chunks=3,
    )
    reply = await forward(leg, upstream)
    names = [name.lower() for name, _ in reply.headers]
    assert (reply.status, reply.body) == (202, b"accepted")
    assert [n for n in names if n not in (b"date", b"server")] == [b"content-type", b"x-agent"]
