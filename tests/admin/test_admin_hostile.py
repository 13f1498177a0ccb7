"""Hostile clients of the admin listener on a real uvicorn at 127.0.0.1 (the listener `serve`
builds): oversized bodies on the open routes, token guessing on every authenticated route
(admin bearer, sign-in, agent tokens), and sessions that are never the token.

Two client addresses: 127.0.0.1 and 127.0.0.2 (Linux answers the whole 127/8 on loopback)."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator

import httpx
import pytest

from stickyroute.admin.auth import SESSION_DETAIL
from stickyroute.server.service import Service
from tests.admin.operated import Operated
from tests.proxy.harness import upstream_set, write_config
from tests.server.listeners import HANG_GUARD_S, connect, read_until_closed, serving

TOKEN = "hostile-admin-token-0123456789"
AGENT_TOKEN = "general-agent-token-0123456789"
FAILURES = 5


@pytest.fixture
def admin(tmp_path) -> Iterator[str]:
    """The admin listener's base URL: 4 KiB bodies, 5 failures a minute, 10-minute sessions."""
    with upstream_set("general") as ups:
        config = write_config(tmp_path, ups, agents={"general": f'token = "{AGENT_TOKEN}"'}, top=(
            f'[admin]\ntoken = "{TOKEN}"\nmax_body_bytes = 4096\nauth_failures = {FAILURES}\nauth_window_s = 60\n'
            "session_max_age_s = 600\n"))
        with serving(Service(config, env={})) as (_public, listener):
            host, port = listener.address
            yield f"http://{host}:{port}"


def client(base: str, source: str = "127.0.0.1") -> httpx.Client:
    transport = httpx.HTTPTransport(local_address=source)
    return httpx.Client(base_url=base, transport=transport, timeout=HANG_GUARD_S)


def bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


@pytest.mark.parametrize("path", ["/v1/hints", "/v1/session", "/v1/explain"])
def test_a_declared_body_over_max_body_bytes_gets_413_and_the_connection_closes_unread(admin, path) -> None:
    """300 MiB announced, nothing of it read: 413 at once, before authentication, then closed."""
    with connect(_address(admin)) as sock:
        sock.sendall(f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     f"Content-Length: {300 * 1024 * 1024}\r\n\r\n".encode() + b"[" * 2048)
        answer = read_until_closed(sock)
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 413 ") and b"connection: close" in head.lower()
    assert json.loads(body) == {"error": "too large",
                                "detail": "request body larger than 4096 bytes ([admin] max_body_bytes)"}


@pytest.mark.parametrize("path", ["/v1/hints", "/v1/session"])
def test_a_chunked_body_is_cut_with_413_the_moment_it_passes_the_cap(admin, path) -> None:
    chunk = b"x" * 3000
    with connect(_address(admin)) as sock:
        sock.sendall(f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     "Transfer-Encoding: chunked\r\n\r\n".encode())
        for _ in range(2):  # 6000 bytes: past 4096 with the second chunk
            sock.sendall(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
        answer = read_until_closed(sock)
    assert answer.startswith(b"HTTP/1.1 413 ")


def test_an_answer_sent_before_the_body_was_read_waits_for_it_and_keeps_the_connection(admin) -> None:
    """A wrong token is refused before any handler reads the body: the body still arriving is read
    first, so the answer is not lost to a reset and the connection serves the next request."""
    body = b'{"channel": "telegram"}'
    with connect(_address(admin)) as sock:
        sock.sendall(f"POST /v1/reload HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer wrong-token\r\n"
                     f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n".encode())
        time.sleep(0.3)  # the body comes later (a slow client): however late, the answer waits for it
        sock.sendall(body + b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        answer = read_until_closed(sock)
    statuses = re.findall(rb"HTTP/1\.1 (\d{3}) ", answer)
    assert statuses == [b"401", b"200"]


def _address(base: str) -> tuple[str, int]:
    host, port = base.removeprefix("http://").split(":")
    return host, int(port)


def test_wrong_admin_tokens_are_throttled_per_address_with_retry_after(admin) -> None:
    with client(admin) as guesser, client(admin, "127.0.0.2") as operator:
        wrong = [guesser.get("/v1/status", headers=bearer(f"guess-{n:04d}-0123456789")) for n in range(FAILURES)]
        right_but_throttled = guesser.get("/v1/status", headers=bearer(TOKEN))
        elsewhere = operator.get("/v1/status", headers=bearer(TOKEN))
    assert [r.status_code for r in wrong] == [401] * FAILURES
    assert right_but_throttled.status_code == 429
    assert 1 <= int(right_but_throttled.headers["retry-after"]) <= 60
    assert right_but_throttled.json()["error"] == "too many requests"
    assert elsewhere.status_code == 200


def test_wrong_sign_ins_are_throttled(admin) -> None:
    with client(admin) as guesser:
        wrong = [guesser.post("/v1/session", json={"token": f"guess-{n}"}) for n in range(FAILURES)]
        throttled = guesser.post("/v1/session", json={"token": TOKEN})
    assert [r.status_code for r in wrong] == [401] * FAILURES
    assert (throttled.status_code, "set-cookie" in throttled.headers) == (429, False)
    assert 1 <= int(throttled.headers["retry-after"]) <= 60


def test_wrong_agent_tokens_are_throttled(admin) -> None:
    body = {"conversation": "v1.x.y", "hint": "not-mine"}
    with client(admin) as guesser:
        wrong = [guesser.post("/v1/hints", json=body, headers=bearer(f"agent-guess-{n}")) for n in range(FAILURES)]
        throttled = guesser.post("/v1/hints", json=body, headers=bearer(AGENT_TOKEN))
    assert [r.status_code for r in wrong] == [401] * FAILURES
    assert throttled.status_code == 429 and "retry-after" in throttled.headers


def test_failures_on_different_routes_add_up(admin) -> None:
    with client(admin) as guesser:
        statuses = [guesser.get("/v1/stats", headers=bearer("guess-a")).status_code,
                    guesser.post("/v1/session", json={"token": "guess-b"}).status_code,
                    guesser.post("/v1/hints", json={}, headers=bearer("guess-c")).status_code,
                    guesser.get("/v1/agents", headers=bearer("guess-d")).status_code,
                    guesser.post("/v1/session", json={"token": "guess-e"}).status_code,
                    guesser.get("/v1/agents", headers=bearer(TOKEN)).status_code]
    assert statuses == [401, 401, 401, 401, 401, 429]


def test_a_success_resets_the_count_and_requests_without_credentials_do_not_count(admin) -> None:
    with client(admin) as user:
        statuses = [user.get("/v1/status", headers=bearer(f"typo-{n}")).status_code for n in range(FAILURES - 1)]
        statuses.append(user.get("/v1/status", headers=bearer(TOKEN)).status_code)
        statuses += [user.get("/v1/status", headers=bearer(f"typo-{n}")).status_code for n in range(FAILURES - 1)]
        statuses += [user.get("/v1/status").status_code for _ in range(3 * FAILURES)]  # a signed-out dashboard
        statuses.append(user.get("/v1/status", headers=bearer(TOKEN)).status_code)
    assert statuses == [401] * (FAILURES - 1) + [200] + [401] * (FAILURES - 1) + [401] * (3 * FAILURES) + [200]


def test_a_session_cookie_holds_a_random_id_with_max_age_and_dies_when_signed_out(admin) -> None:
    with client(admin) as browser:
        signed = browser.post("/v1/session", json={"token": TOKEN})
        session = browser.cookies["stickyroute_admin"]
        inside = browser.get("/v1/status").status_code
        out = browser.delete("/v1/session").status_code
    with client(admin) as replay:  # the old cookie, sent again after sign-out: revoked on the server
        replayed = replay.get("/v1/status", headers={"cookie": f"stickyroute_admin={session}"})
    cookie = signed.headers["set-cookie"]
    assert TOKEN not in cookie and len(session) >= 43
    assert {"HttpOnly", "SameSite=strict", "Path=/", "Max-Age=600"} <= {p.strip() for p in cookie.split(";")}
    assert "Secure" not in cookie
    assert (signed.status_code, inside, out) == (204, 200, 204)
    assert (replayed.status_code, replayed.json()["detail"]) == (401, SESSION_DETAIL)


async def test_a_session_expires_after_max_age_and_is_secure_behind_tls(tmp_path, upstreams) -> None:
    """In process, on the service's fake clock: the session answers until Max-Age, not after."""
    admin_table = f'[admin]\ntoken = "{TOKEN}"\nbehind_tls = true\nsession_max_age_s = 600\n'
    async with Operated(tmp_path, upstreams, token=None, top=admin_table) as op:
        assert op.admin is not None
        signed = await op.admin.post("/v1/session", json={"token": TOKEN})
        session = signed.cookies["stickyroute_admin"]
        cookie = {"cookie": f"stickyroute_admin={session}"}
        op.clock.advance(599.0)
        before = (await op.admin.get("/v1/status", headers=cookie)).status_code
        op.clock.advance(1.0)
        after = await op.admin.get("/v1/status", headers=cookie)
    assert {"Secure", "Max-Age=600"} <= {p.strip() for p in signed.headers["set-cookie"].split(";")}
    assert (before, after.status_code, after.json()["detail"]) == (200, 401, SESSION_DETAIL)


def test_a_browser_signed_in_before_keeps_working_from_a_throttled_address(admin) -> None:
    with client(admin) as browser:
        assert browser.post("/v1/session", json={"token": TOKEN}).status_code == 204
        guesses = [browser.get("/v1/status", headers=bearer(f"guess-{n}")).status_code for n in range(FAILURES)]
        by_token = browser.get("/v1/status", headers=bearer(TOKEN)).status_code
        by_session = browser.get("/v1/status").status_code  # the cookie
    assert (guesses, by_token, by_session) == ([401] * FAILURES, 429, 200)
