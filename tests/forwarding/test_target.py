"""stickyroute/forwarding/target.py: an upstream URL as a connection target and a request head."""

from __future__ import annotations

import pytest

from stickyroute.forwarding.target import Target, target_of


@pytest.mark.parametrize(("url", "expected"), [
    ("http://agent:8080/tg?a=%2F&b", Target("agent", 8080, False, b"/tg?a=%2F&b", b"agent:8080")),
    ("http://agent/tg", Target("agent", 80, False, b"/tg", b"agent")),
    ("https://agent.example/x/y", Target("agent.example", 443, True, b"/x/y", b"agent.example")),
    ("https://agent.example:8443", Target("agent.example", 8443, True, b"/", b"agent.example:8443")),
    ("http://[::1]:9101/tg", Target("::1", 9101, False, b"/tg", b"[::1]:9101")),
    ("http://127.0.0.1:9/p%zz", Target("127.0.0.1", 9, False, b"/p%zz", b"127.0.0.1:9")),
])
def test_a_url_becomes_host_port_tls_request_target_and_host_field(url: str, expected: Target) -> None:
    assert target_of(url) == expected


@pytest.mark.parametrize("url", ["ftp://agent/x", "http:///x", "http://agent/\u2603", "http://agent/a b", "agent:80/x"])
def test_an_unusable_url_is_a_value_error(url: str) -> None:
    with pytest.raises(ValueError):
        target_of(url)


def test_the_head_is_the_request_line_host_length_and_the_fields_as_given() -> None:
    head = target_of("http://agent:8080/tg?x=1").head("POST", [(b"X-A", b"1"), (b"x-a", b"2")], 12)
    assert head == b"POST /tg?x=1 HTTP/1.1\r\nHost: agent:8080\r\nContent-Length: 12\r\nX-A: 1\r\nx-a: 2\r\n\r\n"
    assert target_of("http://agent/").head("GET", [], None) == b"GET / HTTP/1.1\r\nHost: agent\r\n\r\n"


def test_credentials_in_the_url_become_basic_authorization_unless_the_request_has_its_own() -> None:
    target = target_of("http://bot:s%20cret@agent:8080/tg")
    assert target.credentials == b"Basic Ym90OnMgY3JldA=="  # base64 of "bot:s cret"
    assert target.head("POST", [(b"x-a", b"1")], 0).endswith(b"x-a: 1\r\nAuthorization: Basic Ym90OnMgY3JldA==\r\n\r\n")
    own = target.head("POST", [(b"Authorization", b"Bearer platform")], 0)
    assert (own.count(b"uthorization"), b"Bearer platform" in own) == (1, True)
    assert b"@" not in target.authority
