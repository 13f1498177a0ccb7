"""Agent signal plumbing (issue #12): conversation tokens (signed, expiring, no raw id), the reply
headers read and stripped, the per-agent rate limit."""

from __future__ import annotations

import base64

import pytest

from stickyroute.core.route import ConversationKey
from stickyroute.hints import AgentRateLimit, ConversationTokens, TokenClaims, TokenRejected, take_signals
from stickyroute.reply import Reply
from stickyroute.routing.signals import Signal, SignalKind

SECRET = "a-shared-hint-secret-0123456789"
KEY = ConversationKey("telegram", "111", None, "111")
T0 = 1_700_000_000.0


def test_a_token_reads_back_its_claims_until_it_expires() -> None:
    tokens = ConversationTokens(SECRET)
    token = tokens.mint("telegram", KEY.digest(), T0 - 60.25, T0 + 1800)
    assert tokens.read(token, T0 + 1799.9) == TokenClaims("telegram", KEY.digest(), T0 - 60.25, T0 + 1800)
    with pytest.raises(TokenRejected, match="expired"):
        tokens.read(token, T0 + 1800)


def test_a_token_reveals_no_raw_id_and_is_the_same_for_the_same_secret() -> None:
    token = ConversationTokens(SECRET).mint("telegram", KEY.digest(), T0, T0 + 1800)
    payload = base64.urlsafe_b64decode(token.split(".")[0] + "==")
    assert (b"111" in payload.replace(KEY.digest().encode(), b""), token ==
            ConversationTokens(SECRET).mint("telegram", KEY.digest(), T0, T0 + 1800)) == (False, True)


@pytest.mark.parametrize(
    ("mangle", "reason"),
    [
        pytest.param(lambda t: t[:-2] + ("AA" if t[-2:] != "AA" else "BB"), "forged", id="mac-changed"),
        pytest.param(lambda t: base64.urlsafe_b64encode(b"telegram\x1f" + b"0" * 32 + b"\x1f1.0\x1f9999999999")
                     .decode().rstrip("=") + "." + t.split(".")[1], "forged", id="payload-changed"),
        pytest.param(lambda t: t.replace(".", ""), "malformed", id="no-dot"),
        pytest.param(lambda t: t + ".x", "malformed", id="two-dots"),
        pytest.param(lambda t: "!!!." + t.split(".")[1], "malformed", id="not-base64"),
        pytest.param(lambda t: t + "A" * 2000, "malformed", id="too-long"),
        pytest.param(lambda t: ConversationTokens("another-secret-0123456789").mint("telegram", "0" * 32, T0, T0 + 9),
                     "forged", id="other-secret"),
    ],
)
def test_a_changed_token_is_rejected(mangle, reason: str) -> None:
    tokens = ConversationTokens(SECRET)
    token = tokens.mint("telegram", KEY.digest(), T0, T0 + 1800)
    with pytest.raises(TokenRejected) as caught:
        tokens.read(mangle(token), T0)
    assert caught.value.reason == reason


def test_without_a_secret_each_process_signs_with_its_own() -> None:
    one, two = ConversationTokens(None), ConversationTokens(None)
    token = one.mint("telegram", KEY.digest(), T0, T0 + 10)
    with pytest.raises(TokenRejected, match="forged"):
        two.read(token, T0)
    assert (one.ephemeral, one.read(token, T0).channel) == (True, "telegram")


JSON = (b"content-type", b"application/json")


@pytest.mark.parametrize(
    ("headers", "signals", "problems"),
    [
        pytest.param([(b"X-Stickyroute-Hint", b"not-mine")], [Signal(SignalKind.NOT_MINE, "coder")], [], id="hint"),
        pytest.param([(b"x-stickyroute-hint", b" Not-Mine ;  Suggest = billing ")],
                     [Signal(SignalKind.NOT_MINE, "coder", "billing")], [], id="hint-suggest-any-case"),
        pytest.param([(b"X-Stickyroute-Handoff", b" billing ")], [Signal(SignalKind.HANDOFF, "coder", "billing")], [],
                     id="handoff"),
        pytest.param([(b"X-Stickyroute-Hint", b"maybe")], [], ["unknown X-Stickyroute-Hint value 'maybe'"],
                     id="unknown-value"),
        pytest.param([(b"X-Stickyroute-Hint", b"not-mine; because=reasons")], [],
                     ["unknown X-Stickyroute-Hint parameter 'because=reasons'"], id="unknown-parameter"),
        pytest.param([(b"X-Stickyroute-Handoff", b"  ")], [], ["empty X-Stickyroute-Handoff"], id="empty-handoff"),
        pytest.param([(b"X-Stickyroute-Hint", b"done")], [Signal(SignalKind.DONE, "coder")], [], id="done"),
        pytest.param([(b"X-Stickyroute-Hint", b" DONE ; Then = triage ")], [Signal(SignalKind.DONE, "coder", "triage")],
                     [], id="done-then-any-case"),
        pytest.param([(b"X-Stickyroute-Hint", b"done; suggest=billing")], [],
                     ["unknown X-Stickyroute-Hint parameter 'suggest=billing'"], id="done-takes-then-not-suggest"),
        pytest.param([(b"X-Stickyroute-Hint", b"not-mine; then=billing")], [],
                     ["unknown X-Stickyroute-Hint parameter 'then=billing'"], id="not-mine-takes-suggest-not-then"),
        pytest.param([(b"X-Stickyroute-Hint", b"done; then=")], [],
                     ["unknown X-Stickyroute-Hint parameter 'then='"], id="done-then-empty"),
        pytest.param([(b"X-Stickyroute-Hint", b"not-mine"), (b"X-Stickyroute-Handoff", b"billing")],
                     [Signal(SignalKind.NOT_MINE, "coder"), Signal(SignalKind.HANDOFF, "coder", "billing")], [],
                     id="both-in-order"),
    ],
)
def test_signal_headers_are_read_and_always_stripped(headers, signals, problems) -> None:
    reply = Reply(200, [JSON, *headers, (b"x-stickyroute-hints-seen", b"kept")], b'{"ok":true}')
    stripped, found, wrong = take_signals(reply, "coder")
    assert (stripped, found, wrong) == (
        Reply(200, [JSON, (b"x-stickyroute-hints-seen", b"kept")], b'{"ok":true}'), signals, problems)


def test_a_reply_without_signals_is_returned_as_is() -> None:
    reply = Reply(200, [JSON], b"{}")
    stripped, found, wrong = take_signals(reply, "coder")
    assert (stripped is reply, found, wrong) == (True, [], [])


def test_the_rate_limit_is_a_bucket_per_agent_refilled_with_time() -> None:
    limit = AgentRateLimit(2.0)
    burst = [limit.take("coder", T0) for _ in range(3)]
    other = limit.take("billing", T0)
    half = [limit.take("coder", T0 + 0.5) for _ in range(2)]
    full = [limit.take("coder", T0 + 100) for _ in range(3)]
    assert (burst, other, half, full) == ([True, True, False], True, [True, False], [True, True, False])


def test_a_rate_below_one_still_allows_one_call() -> None:
    limit = AgentRateLimit(0.5)
    assert [limit.take("coder", t) for t in (T0, T0 + 1, T0 + 2)] == [True, False, True]
