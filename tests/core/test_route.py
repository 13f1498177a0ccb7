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
