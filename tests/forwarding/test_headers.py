"""stickyroute/headers.py: hop-by-hop stripping, X-Forwarded-*, trusted proxies (T3, T5, T31, T35)."""

from __future__ import annotations

import pytest

from stickyroute.forwarding.headers import (
    CACHED_PEERS,
    HOP_BY_HOP,
    TrustedProxies,
    delivery_headers,
    is_trusted,
    relay_response_headers,
    strip_hop_by_hop,
    upstream_request_headers,
)

# T31 inbound: chunked framing, Connection naming X-Debug, Keep-Alive, TE, Upgrade, small JSON body.
T31_INBOUND = [
    (b"Host", b"hooks.example.test"),
    (b"Transfer-Encoding", b"chunked"),
    (b"Connection", b"keep-alive, X-Debug"),
    (b"X-Debug", b"1"),
    (b"Keep-Alive", b"timeout=5"),
    (b"TE", b"trailers"),
    (b"Upgrade", b"h2c"),
    (b"Content-Type", b"application/json"),
]

# T5: every vendor signature header and Authorization reaches the upstream unchanged.
T5_SIGNATURE_HEADERS = [
    (b"X-Slack-Signature", b"v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503"),
    (b"X-Slack-Request-Timestamp", b"1531420618"),
    (b"X-Slack-Retry-Num", b"1"),
    (b"X-Slack-Retry-Reason", b"http_timeout"),
    (b"X-Hub-Signature-256", b"sha256=6f1b0c3c8a9e2d4b5a6c7d8e9f0a1b2c3d4e5f60718293a4b5c6d7e8f9a0b1c2"),
    (b"X-Twilio-Signature", b"0/KCTR6DLpKmkAf8muzZqo1nDgQ="),
    (b"X-Telegram-Bot-Api-Secret-Token", b"tg-secret-1"),
    (b"Authorization", b"Bearer eyJhbGciOiJSUzI1NiJ9.e30.c2ln"),
]

_COMMON = {"client_ip": "203.0.113.7", "scheme": "http", "host": "hooks.example.test", "agent": "billing", "reason": "binding:user"}


def _names(headers: list[tuple[bytes, bytes]]) -> list[bytes]:
    return [name.lower() for name, _ in headers]


def test_hop_by_hop_set_is_rfc_9110_list() -> None:
    assert {
        b"connection", b"keep-alive", b"proxy-connection", b"proxy-authenticate",
        b"proxy-authorization", b"te", b"trailer", b"transfer-encoding", b"upgrade",
    } == HOP_BY_HOP


@pytest.mark.parametrize(
    ("inbound", "expected"),
    [
        pytest.param(T31_INBOUND, [(b"Host", b"hooks.example.test"), (b"Content-Type", b"application/json")], id="T31"),
        pytest.param(
            [(b"Connection", b"close"), (b"X-A", b"1"), (b"Proxy-Authorization", b"Basic eA=="),
             (b"Proxy-Authenticate", b"Basic"), (b"Proxy-Connection", b"keep-alive"), (b"Trailer", b"X-T")],
            [(b"X-A", b"1")],
            id="every-fixed-name",
        ),
        pytest.param(
            [(b"connection", b" X-One ,,x-TWO "), (b"CONNECTION", b"x-three"), (b"X-One", b"1"),
             (b"x-two", b"2"), (b"X-Three", b"3"), (b"X-Four", b"4")],
            [(b"X-Four", b"4")],
            id="connection-lists-any-case-several-headers",
        ),
        pytest.param(
            [(b"X-A", b"1"), (b"X-B", b"2"), (b"X-A", b"3")],
            [(b"X-A", b"1"), (b"X-B", b"2"), (b"X-A", b"3")],
            id="order-and-duplicates-kept",
        ),
        pytest.param([], [], id="empty"),
    ],
)
def test_strip_hop_by_hop(inbound: list[tuple[bytes, bytes]], expected: list[tuple[bytes, bytes]]) -> None:
    assert strip_hop_by_hop(inbound) == expected


def test_upstream_headers_t31_no_framing_or_hop_by_hop_left() -> None:
    out = upstream_request_headers(T31_INBOUND, peer_trusted=False, **_COMMON)
    assert out == [
        (b"Content-Type", b"application/json"),
        (b"x-forwarded-for", b"203.0.113.7"),
        (b"x-forwarded-proto", b"http"),
        (b"x-forwarded-host", b"hooks.example.test"),
        (b"x-stickyroute-agent", b"billing"),
        (b"x-stickyroute-reason", b"binding:user"),
    ]


def test_upstream_headers_drop_host_and_stale_content_length() -> None:
    inbound = [(b"Host", b"hooks.example.test"), (b"Content-Length", b"999"), (b"Content-Type", b"application/json")]
    out = upstream_request_headers(inbound, peer_trusted=False, **_COMMON)
    assert b"host" not in _names(out)
    assert b"content-length" not in _names(out)


def test_upstream_headers_keep_t5_signature_headers_unchanged_and_in_order() -> None:
    inbound = [(b"Host", b"hooks.example.test"), *T5_SIGNATURE_HEADERS]
    out = upstream_request_headers(inbound, peer_trusted=False, **_COMMON)
    assert out[: len(T5_SIGNATURE_HEADERS)] == T5_SIGNATURE_HEADERS


@pytest.mark.parametrize(
    ("received", "peer_trusted", "scheme", "expected"),
    [
        pytest.param(
            [(b"X-Forwarded-Proto", b"https"), (b"X-Forwarded-Host", b"hooks.example.test"),
             (b"X-Forwarded-For", b"198.51.100.1")],
            True, "http",
            [(b"x-forwarded-for", b"198.51.100.1, 203.0.113.7"), (b"x-forwarded-proto", b"https"),
             (b"x-forwarded-host", b"hooks.example.test")],
            id="T3-trusted-front-extended",
        ),
        pytest.param(
            [(b"X-Forwarded-For", b"198.51.100.1"), (b"X-Forwarded-For", b"198.51.100.2")],
            True, "https",
            [(b"x-forwarded-for", b"198.51.100.1, 198.51.100.2, 203.0.113.7"), (b"x-forwarded-proto", b"https"),
             (b"x-forwarded-host", b"hooks.example.test")],
            id="trusted-several-xff-headers-no-proto-received",
        ),
        pytest.param(
            [(b"X-Forwarded-Proto", b"https"), (b"X-Forwarded-Host", b"evil.test"),
             (b"X-Forwarded-For", b"10.6.6.6")],
            False, "http",
            [(b"x-forwarded-for", b"203.0.113.7"), (b"x-forwarded-proto", b"http"),
             (b"x-forwarded-host", b"hooks.example.test")],
            id="T35-untrusted-peer-replaced",
        ),
        pytest.param(
            [], False, "https",
            [(b"x-forwarded-for", b"203.0.113.7"), (b"x-forwarded-proto", b"https"),
             (b"x-forwarded-host", b"hooks.example.test")],
            id="none-received",
        ),
    ],
)
def test_upstream_headers_x_forwarded(
    received: list[tuple[bytes, bytes]], peer_trusted: bool, scheme: str, expected: list[tuple[bytes, bytes]]
) -> None:
    inbound = [(b"Host", b"hooks.example.test"), *received]
    common = {**_COMMON, "scheme": scheme}
    out = upstream_request_headers(inbound, peer_trusted=peer_trusted, **common)
    assert [h for h in out if h[0].startswith(b"x-forwarded-")] == expected


def test_upstream_headers_replace_inbound_stickyroute_markers() -> None:
    inbound = [(b"X-Stickyroute-Agent", b"forged"), (b"x-stickyroute-reason", b"forged")]
    out = upstream_request_headers(inbound, peer_trusted=True, **_COMMON)
    assert [h for h in out if h[0].startswith(b"x-stickyroute-")] == [
        (b"x-stickyroute-agent", b"billing"),
        (b"x-stickyroute-reason", b"binding:user"),
    ]


def test_upstream_headers_without_inbound_host_omit_forwarded_host() -> None:
    out = upstream_request_headers([], peer_trusted=False, **{**_COMMON, "host": ""})
    assert b"x-forwarded-host" not in _names(out)


def test_relay_response_headers_strip_hop_by_hop_and_content_length() -> None:
    upstream = [
        (b"content-type", b"application/json"),
        (b"content-length", b"42"),
        (b"transfer-encoding", b"chunked"),
        (b"connection", b"keep-alive, X-Upstream-Debug"),
        (b"x-upstream-debug", b"1"),
        (b"keep-alive", b"timeout=5"),
        (b"content-encoding", b"gzip"),
        (b"set-cookie", b"a=1"),
        (b"set-cookie", b"b=2"),
    ]
    assert relay_response_headers(upstream) == [
        (b"content-type", b"application/json"),
        (b"content-encoding", b"gzip"),
        (b"set-cookie", b"a=1"),
        (b"set-cookie", b"b=2"),
    ]


@pytest.mark.parametrize(
    ("ip", "expected"),
    [
        ("127.0.0.1", True),
        ("127.8.9.10", True),
        ("::1", True),
        ("::ffff:127.0.0.1", True),
        ("10.0.0.5", True),
        ("10.1.0.5", False),
        ("203.0.113.7", False),
        ("2001:db8::1", False),
        ("testclient", False),
        ("", False),
    ],
)
def test_is_trusted(ip: str, expected: bool) -> None:
    cidrs = ["127.0.0.0/8", "::1/128", "10.0.0.0/16"]
    assert is_trusted(ip, cidrs) is expected
    assert is_trusted(ip, TrustedProxies.from_cidrs(cidrs)) is expected


def test_trusted_proxies_cache_answers_and_starts_over_when_full() -> None:
    """The peer check is cached per address (same answers as parsing each time), at most
    CACHED_PEERS addresses before the cache starts over."""
    trusted = TrustedProxies.from_cidrs(["10.0.0.0/16"])
    assert [("10.0.0.5" in trusted), ("10.0.0.5" in trusted), ("10.1.0.5" in trusted)] == [True, True, False]
    assert trusted._seen == {"10.0.0.5": True, "10.1.0.5": False}
    for i in range(CACHED_PEERS):
        assert (f"10.0.{i // 256}.{i % 256}" in trusted) is True
    assert trusted._seen == {"10.0.15.255": True}  # full after 4,094 new addresses: started over
    assert ("10.1.0.5" in trusted) is False


def test_trusted_proxies_reject_a_non_network() -> None:
    with pytest.raises(ValueError):
        TrustedProxies.from_cidrs(["not-a-cidr"])


@pytest.mark.parametrize("name", [n for n, _ in T5_SIGNATURE_HEADERS])
def test_signature_header_named_in_connection_is_still_forwarded(name: bytes) -> None:
    """Issue #10: `Connection: keep-alive, X-Telegram-Bot-Api-Secret-Token` passed the check at the
    edge and then stripped the header before forwarding; signature headers are never stripped."""
    value = dict(T5_SIGNATURE_HEADERS)[name]
    inbound = [(b"Connection", b"keep-alive, " + name + b", X-Debug"), (name, value), (b"X-Debug", b"1")]
    out = upstream_request_headers(inbound, peer_trusted=False, **_COMMON)
    assert [(n, v) for n, v in out if n.lower() == name.lower()] == [(name, value)]
    assert b"x-debug" not in _names(out)


def test_delivery_headers_name_each_delivery_and_its_attempt_in_body_order() -> None:
    assert delivery_headers([("telegram", "42", 1)]) == [
        (b"x-stickyroute-delivery", b"telegram:42"), (b"x-stickyroute-attempt", b"1")]
    assert delivery_headers([("whatsapp", "wamid.HBg=", 2), ("whatsapp", "s1 read,\r\nX: y", 1)]) == [
        (b"x-stickyroute-delivery", b"whatsapp:wamid.HBg=,whatsapp:s1%20read%2C%0D%0AX:%20y"),
        (b"x-stickyroute-attempt", b"2,1")]
    assert delivery_headers([]) == []


def test_upstream_headers_drop_inbound_delivery_markers() -> None:
    inbound = [(b"X-Stickyroute-Delivery", b"telegram:1"), (b"x-stickyroute-attempt", b"9")]
    out = upstream_request_headers(inbound, peer_trusted=True, **_COMMON)
    assert [h[0] for h in out if h[0].startswith(b"x-stickyroute-")] == [b"x-stickyroute-agent",
                                                                        b"x-stickyroute-reason"]
