"""Hostile clients at both listeners' edge, on a real uvicorn at 127.0.0.1 with the listeners
`serve` builds (`stickyroute.server.edge`): connections that never finish their headers, slow
bodies, oversized headers, idle keep-alive connections and floods of connections.

Deadlines are asserted as "closed no earlier than the deadline, and within a generous margin
after it" (the server's timer starts after the client's clock, so the lower bound is exact).
"""

from __future__ import annotations

import resource
import time

import pytest

from stickyroute.server.edge import descriptors_needed, raise_descriptor_limit
from stickyroute.server.reload import restart_needed
from stickyroute.server.service import Service
from tests.proxy.harness import telegram_text, upstream_set, write_config
from tests.server.listeners import closed_after, connect, exchange, is_open, read_until_closed, serving

DEADLINE_S = 0.6
MARGIN_S = 6.0
"""Generous: a busy machine may run the timer late, never early."""
TOKEN = "edge-admin-token-0123456789"
LISTENERS = ["webhook", "admin"]
OK = (b"HTTP/1.1 200 ", b"HTTP/1.1 404 ")
"""GET /healthz: 200 on the admin listener, 404 on the webhook listener (not a channel path)."""


def edge_config(tmp_path, ups, **limits: object):
    """Both listeners under the same `limits` (`[server]` and `[admin]` keys)."""
    values = {"header_timeout_s": DEADLINE_S, "body_timeout_s": DEADLINE_S, "keepalive_timeout_s": DEADLINE_S,
              **limits}
    table = "\n".join(f"{k} = {v}" for k, v in values.items())
    return write_config(tmp_path, ups, top=f'[server]\n{table}\n[admin]\ntoken = "{TOKEN}"\n{table}\n')


def pick(listeners, name: str):
    public, admin = listeners
    return public if name == "webhook" else admin


def within_deadline(elapsed: float) -> bool:
    return DEADLINE_S <= elapsed < DEADLINE_S + MARGIN_S


@pytest.mark.parametrize("listener", LISTENERS)
def test_a_connection_that_sends_nothing_is_closed_after_the_header_timeout(tmp_path, listener) -> None:
    with upstream_set("general") as ups, serving(Service(edge_config(tmp_path, ups), env={})) as listeners:
        started = time.monotonic()
        with connect(pick(listeners, listener).address) as sock:
            elapsed = closed_after(sock, started)
    assert within_deadline(elapsed), elapsed


@pytest.mark.parametrize("listener", LISTENERS)
def test_half_sent_headers_trickled_line_by_line_are_closed_at_the_header_deadline(tmp_path, listener) -> None:
    """A slowloris client: bytes keep coming, but the headers never end; the deadline runs from
    the connection's opening, not from the last byte."""
    with upstream_set("general") as ups, serving(Service(edge_config(tmp_path, ups), env={})) as listeners:
        started = time.monotonic()
        with connect(pick(listeners, listener).address) as sock:
            sock.sendall(b"POST /webhooks/telegram HTTP/1.1\r\nHost: hooks.example.test\r\n")
            elapsed = closed_after(sock, started, trickle=b"X-Slow: 1\r\n")
        assert ups["general"].requests == []
    assert within_deadline(elapsed), elapsed


@pytest.mark.parametrize("listener", LISTENERS)
def test_headers_past_max_header_bytes_get_431_and_the_connection_closes(tmp_path, listener) -> None:
    with upstream_set("general") as ups, serving(Service(edge_config(tmp_path, ups, header_timeout_s=30,
                                                                      max_header_bytes=4096), env={})) as listeners:
        with connect(pick(listeners, listener).address) as sock:
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 8192)
            answer = read_until_closed(sock)
    assert answer.startswith(b"HTTP/1.1 431 ")
    assert b"connection: close" in answer


@pytest.mark.parametrize("listener", LISTENERS)
def test_a_body_slower_than_the_body_timeout_is_cut_and_nothing_is_forwarded(tmp_path, listener) -> None:
    body = telegram_text(1, "hello there")
    path = b"/webhooks/telegram" if listener == "webhook" else b"/v1/session"
    with upstream_set("general") as ups, serving(Service(edge_config(tmp_path, ups), env={})) as listeners:
        with connect(pick(listeners, listener).address) as sock:
            sock.sendall(b"POST " + path + b" HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                         b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body[:10])
            started = time.monotonic()  # after the headers: the body deadline starts when they end
            elapsed = closed_after(sock, started, trickle=b" ")
        assert ups["general"].requests == []
    assert elapsed < DEADLINE_S + MARGIN_S, elapsed


@pytest.mark.parametrize("listener", LISTENERS)
def test_an_idle_keep_alive_connection_is_closed_after_keepalive_timeout(tmp_path, listener) -> None:
    with upstream_set("general") as ups, serving(Service(edge_config(tmp_path, ups, header_timeout_s=30),
                                                         env={})) as listeners:
        with connect(pick(listeners, listener).address) as sock:
            first = exchange(sock, b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            started = time.monotonic()
            elapsed = closed_after(sock, started)
    assert first.startswith(OK)
    assert elapsed < DEADLINE_S + MARGIN_S, elapsed


@pytest.mark.parametrize("listener", LISTENERS)
def test_past_max_connections_a_connection_gets_503_and_is_closed_before_its_request_is_read(
        tmp_path, listener) -> None:
    """Four kept-alive connections hold the listener's four places; the next three are answered
    503 at once and closed; closing one held connection frees a place."""
    with upstream_set("general") as ups, serving(Service(edge_config(tmp_path, ups, max_connections=4,
                                                                      header_timeout_s=30, keepalive_timeout_s=30),
                                                         env={})) as listeners:
        server = pick(listeners, listener)
        held = [connect(server.address) for _ in range(4)]
        for sock in held:  # a full exchange: the server has accepted (and keeps) each of them
            assert exchange(sock, b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n").startswith(OK)
        refused = []
        for _ in range(3):
            with connect(server.address) as extra:
                refused.append(read_until_closed(extra))
        open_while_full = server.open_connections
        still_held = [is_open(sock) for sock in held]
        held.pop().close()
        served = b""
        deadline = time.monotonic() + MARGIN_S
        while not served.startswith(OK) and time.monotonic() < deadline:
            with connect(server.address) as again:  # the server notices the closed one soon, not at once
                again.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                served = read_until_closed(again)
        for sock in held:
            sock.close()
    assert [answer.split(b"\r\n", 1)[0] for answer in refused] == [b"HTTP/1.1 503 Service Unavailable"] * 3
    assert all(b"connection: close" in answer and b"retry-after: 1" in answer for answer in refused)
    assert (open_while_full, still_held) == (4, [True] * 4)
    assert served.startswith(OK)


def test_a_413_closes_the_webhook_connection_without_reading_the_announced_body(tmp_path) -> None:
    """A 300 MiB Content-Length: 413 at once, and the connection is closed (the rest is never read)."""
    with upstream_set("general") as ups, serving(Service(edge_config(tmp_path, ups, header_timeout_s=30,
                                                                      body_timeout_s=30), env={})) as (public, _):
        with connect(public.address) as sock:
            sock.sendall(b"POST /webhooks/telegram HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                         b"Content-Length: " + str(300 * 1024 * 1024).encode() + b"\r\n\r\n" + b"{" * 1000)
            answer = read_until_closed(sock)
        assert ups["general"].requests == []
    assert answer.startswith(b"HTTP/1.1 413 ")


def test_a_reload_lists_changed_edge_limits_among_the_keys_that_need_a_restart(tmp_path) -> None:
    with upstream_set("general") as ups:
        old = edge_config(tmp_path, ups)
        new = write_config(tmp_path, ups, top=f'[server]\nmax_connections = 64\nheader_timeout_s = {DEADLINE_S}\n'
                           f'body_timeout_s = {DEADLINE_S}\nkeepalive_timeout_s = {DEADLINE_S}\n'
                           f'[admin]\ntoken = "{TOKEN}"\nheader_timeout_s = 3\nbody_timeout_s = {DEADLINE_S}\n'
                           f'keepalive_timeout_s = {DEADLINE_S}\nmax_body_bytes = 1024\n')
    assert restart_needed(old, new) == ("server.max_connections", "admin.header_timeout_s")


def test_the_open_files_limit_is_raised_to_what_the_listeners_and_pools_may_hold(tmp_path) -> None:
    """Both caps (256 + 50), the one agent's pool (100) and 256 spare: 662 descriptors."""
    with upstream_set("general") as ups:
        config = write_config(tmp_path, ups)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 662:
        pytest.skip(f"the hard open-files limit {hard} is below 662")
    resource.setrlimit(resource.RLIMIT_NOFILE, (256, hard))
    try:
        raised = raise_descriptor_limit(config)
        now = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    assert (descriptors_needed(config), raised, now) == (662, (662, 662), 662)
