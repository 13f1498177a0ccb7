"""The failed-authentication throttle and the session store as values: time passed in, exact
answers (the wire behaviour on a real server: tests/admin/test_admin_hostile.py)."""

from __future__ import annotations

import logging

import pytest

from stickyroute.admin.sessions import Sessions
from stickyroute.admin.throttle import AuthThrottle, client_address

T0 = 1_700_000_000.0
FAILURES, WINDOW_S = 3, 60.0


def fail(throttle: AuthThrottle, address: str, times: int, now: float = T0) -> None:
    for _ in range(times):
        throttle.failed(address, now, FAILURES, WINDOW_S)


@pytest.mark.parametrize(("failures", "at", "expected"), [
    pytest.param(2, T0, None, id="under-the-limit"),
    pytest.param(3, T0, 60.0, id="at-the-limit: the whole window"),
    pytest.param(3, T0 + 45.5, 14.5, id="what-is-left-of-the-window"),
    pytest.param(3, T0 + 60.0, None, id="window-over"),
    pytest.param(7, T0 + 1.0, 59.0, id="more-failures-do-not-extend-it"),
])
def test_retry_after_is_what_is_left_of_the_window_once_the_failures_reach_the_limit(failures, at, expected) -> None:
    throttle = AuthThrottle()
    fail(throttle, "198.51.100.7", failures)
    assert throttle.retry_after("198.51.100.7", at, FAILURES, WINDOW_S) == expected


def test_a_success_forgets_the_failures_and_a_new_window_opens_after_the_old_one() -> None:
    throttle = AuthThrottle()
    fail(throttle, "198.51.100.7", 2)
    throttle.succeeded("198.51.100.7")
    fail(throttle, "198.51.100.7", 2)
    after_success = throttle.retry_after("198.51.100.7", T0, FAILURES, WINDOW_S)
    fail(throttle, "198.51.100.7", 1, T0 + WINDOW_S)  # the old window is over: this one is the first of a new one
    fresh = throttle.retry_after("198.51.100.7", T0 + WINDOW_S, FAILURES, WINDOW_S)
    assert (after_success, fresh) == (None, None)


def test_addresses_are_counted_apart_and_ipv6_by_its_64() -> None:
    throttle = AuthThrottle()
    fail(throttle, "2001:db8:1:2::10", 2)
    fail(throttle, "2001:db8:1:2:ffff::1", 1)  # same /64: the third failure
    fail(throttle, "198.51.100.7", 3)
    assert [throttle.retry_after(a, T0, FAILURES, WINDOW_S) for a in
            ("2001:db8:1:2::99", "2001:db8:1:3::10", "198.51.100.7", "198.51.100.8", "::ffff:198.51.100.7")] == [
        60.0, None, 60.0, None, 60.0]


def test_the_table_is_bounded_whatever_addresses_an_attacker_rotates_through() -> None:
    throttle = AuthThrottle(max_addresses=100)
    for n in range(5000):
        throttle.failed(f"10.{n // 65536}.{n // 256 % 256}.{n % 256}", T0, FAILURES, WINDOW_S)
    assert len(throttle) == 100


def test_reaching_the_limit_is_logged_once_per_window(caplog) -> None:
    throttle = AuthThrottle()
    with caplog.at_level(logging.WARNING, logger="stickyroute.admin"):
        fail(throttle, "198.51.100.7", 20)
        fail(throttle, "198.51.100.7", 20, T0 + WINDOW_S)
    lines = [r.getMessage() for r in caplog.records if "failed to authenticate" in r.getMessage()]
    assert lines == ["admin listener: 198.51.100.7 failed to authenticate 3 times in 0 s: answered 429 for 60 s"] * 2


def scope(peer: str, forwarded: list[str]) -> dict:
    return {"client": (peer, 40000), "headers": [(b"x-forwarded-for", v.encode()) for v in forwarded]}


@pytest.mark.parametrize(("peer", "forwarded", "trusted", "expected"), [
    pytest.param("203.0.113.9", ["198.51.100.7"], (), "203.0.113.9", id="no-trusted-proxy: the peer"),
    pytest.param("203.0.113.9", ["198.51.100.7"], ("10.0.0.0/8",), "203.0.113.9", id="untrusted-peer: the peer"),
    pytest.param("10.0.0.2", ["198.51.100.7"], ("10.0.0.0/8",), "198.51.100.7", id="trusted-peer: the client"),
    pytest.param("10.0.0.2", ["6.6.6.6, 198.51.100.7, 10.0.0.3"], ("10.0.0.0/8",), "198.51.100.7",
                 id="a forged first entry is skipped: the last one outside the proxies"),
    pytest.param("10.0.0.2", [], ("10.0.0.0/8",), "10.0.0.2", id="trusted-peer-without-header: the peer"),
])
def test_the_client_address_is_the_peer_unless_a_trusted_proxy_forwards_it(peer, forwarded, trusted, expected) -> None:
    assert client_address(scope(peer, forwarded), trusted) == expected


def test_a_session_is_random_never_the_token_and_lasts_its_max_age() -> None:
    sessions = Sessions()
    token = "admin-token-0123456789"
    first, second = sessions.open(token, T0, 600.0), sessions.open(token, T0, 600.0)
    assert token not in (first, second) and first != second and len(first) >= 43
    assert [sessions.valid(first, token, T0 + 599.0), sessions.valid(first, token, T0 + 600.0),
            sessions.valid(first, token, T0 + 1.0)] == [True, False, False]  # expired: gone for good


def test_a_revoked_session_and_a_changed_token_end_it() -> None:
    sessions = Sessions()
    token = "admin-token-0123456789"
    revoked, kept = sessions.open(token, T0, 600.0), sessions.open(token, T0, 600.0)
    assert sessions.close(revoked) is True
    assert [sessions.valid(revoked, token, T0), sessions.valid(kept, token, T0),
            sessions.valid(kept, "another-token-0123456789", T0), sessions.valid(kept, None, T0),
            sessions.valid(None, token, T0), sessions.close(revoked)] == [False, True, False, False, False, False]


def test_the_session_store_is_bounded() -> None:
    sessions = Sessions(max_sessions=8)
    opened = [sessions.open("admin-token-0123456789", T0, 600.0) for _ in range(50)]
    assert len(sessions) == 8
    assert [sessions.valid(s, "admin-token-0123456789", T0) for s in opened[-8:]] == [True] * 8
    assert sessions.valid(opened[0], "admin-token-0123456789", T0) is False
