"""Route values and conversation keys (issue #3 "Conversation key")."""

from __future__ import annotations

import hashlib

from proxy.state.route import ConversationKey, Route

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
