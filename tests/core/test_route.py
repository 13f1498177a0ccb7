"""Route values and conversation keys (issue #3 "Conversation key")."""

from __future__ import annotations

import hashlib

from stickyroute.core.route import ConversationKey, Route

T0 = 1_700_000_000.0
A = ConversationKey("telegram", "111", None, "111")
B = ConversationKey("telegram", "222", None, "222")


def test_hashed_key_is_stable_short_and_hides_ids() -> None:
    digest = A.hashed()
    assert (len(digest), digest == ConversationKey("telegram", "111", None, "111").hashed(),
            "111" in digest, digest == B.hashed()) == (12, True, False, False)


def test_hashed_key_is_12_hex_of_sha256_over_the_parts() -> None:
    expected = hashlib.sha256(b"telegram\x1f-100\x1f7\x1f111").hexdigest()[:12]
    assert ConversationKey("telegram", "-100", "7", "111").hashed() == expected


def test_touched_refreshes_only_last_active() -> None:
    route = Route("coder", chosen_at=T0, last_active=T0, explicit=True, candidate="ops", counter=1)
    assert route.touched(T0 + 5) == Route("coder", chosen_at=T0, last_active=T0 + 5, explicit=True,
                                          candidate="ops", counter=1)


def test_digest_is_32_hex_of_sha256_and_hashed_is_its_first_12() -> None:
    key = ConversationKey("telegram", "-100", "7", "111")
    expected = hashlib.sha256(b"telegram\x1f-100\x1f7\x1f111").hexdigest()
    assert (key.digest(), key.hashed()) == (expected[:32], expected[:12])


def test_hinted_sets_and_clears_the_pending_signal_and_touched_keeps_it() -> None:
    route = Route("coder", chosen_at=T0, last_active=T0, candidate="ops", counter=1, reason="classified")
    hinted = route.hinted("not-mine", "billing")
    assert (hinted.touched(T0 + 5), hinted.hinted(None)) == (
        Route("coder", T0, T0 + 5, False, "ops", 1, "classified", "not-mine", "billing"), route)


def test_a_hold_outlives_the_ttl_and_every_change_keeps_it() -> None:
    """Issue #22: a human desk's hold (`hold_s`) makes the route live longer than the TTL, while
    `held` says whether the hold still runs; touched, diverging, because and hinted keep it."""
    route = Route("humans", chosen_at=T0, last_active=T0, hold_s=7200.0)
    kept = route.touched(T0 + 5).diverging(T0 + 6, "ops", 1).because("explicit").hinted("handoff")
    assert (route.expires_at(1800.0), route.expires_at(9000.0), route.held(T0 + 7199), route.held(T0 + 7200),
            kept.hold_s, kept.holding(None).hold_s, Route("coder", T0, T0).expires_at(1800.0),
            Route("coder", T0, T0).held(T0)) == (
        T0 + 7200, T0 + 9000, True, False, 7200.0, None, T0 + 1800, False)


def test_the_redis_codec_keeps_the_hold_and_reads_routes_written_before_it() -> None:
    from stickyroute.state.redis.codec import route_args, route_from

    held = Route("humans", T0, T0 + 1, explicit=True, reason="admin", hold_s=14400.0)
    args = route_args(held)
    old = [b"coder", repr(T0).encode(), repr(T0).encode(), b"1", b"", b"0", b"explicit", b"", b""]
    assert (args[3], route_from([a.encode() for a in args]), route_from(old),
            route_args(None), route_from([b""] * 9)) == (
        "1;14400.0", held, Route("coder", T0, T0, explicit=True, reason="explicit"), [""] * 9, None)
