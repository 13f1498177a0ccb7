"""Metrics and baselines on hand-computed conversations (stickyroute/replay/metrics.py)."""

from __future__ import annotations

from stickyroute.replay.corpus import Turn
from stickyroute.replay.metrics import Tally, classify_every, row, score_conversation, stay_first

H, T, D = "hotel", "taxi", "default"


def turns(*golds: str, domains: dict[int, tuple[str, ...]] | None = None) -> list[Turn]:
    domains = domains or {}
    return [Turn(f"turn {i}", g, domains=domains.get(i, ())) for i, g in enumerate(golds)]


def test_switch_reached_late_and_boomerang_back_to_gold() -> None:
    # gold   H H T T H ; routed H H H T H
    # correct T T F T T = 4. Switch at 2 (window 2..3) reached at 3: delay 1; switch at 4
    # reached at 4: delay 0. Route changes at 3 (H->T, right) and 4 (T->H, right): no false
    # switch; 4 returns to routed[2] = H one message after the change at 3: one boomerang.
    tally = score_conversation(turns(H, H, T, T, H), [H, H, H, T, H])
    assert tally == Tally(messages=5, correct=4, correct_lenient=4, switches=2, reached=2, delay_sum=1,
                          false_switches=0, boomerangs=1)


def test_false_switch_and_lenient_domains() -> None:
    # gold T T T, turn 2 domains (T, H); routed D T H: correct F T F = 1, lenient adds turn 2 = 2.
    # Changes at 1 (D->T, right) and 2 (T->H, wrong: false switch); 2 goes to H, not back to D.
    tally = score_conversation(turns(T, T, T, domains={2: (T, H)}), [D, T, H])
    assert tally == Tally(messages=3, correct=1, correct_lenient=2, false_switches=1)


def test_oos_is_right_on_the_default_only() -> None:
    assert score_conversation(turns("oos"), [D]).correct == 1
    assert score_conversation(turns("oos"), [H]).correct == 0


def test_boomerang_window_is_two_messages_of_detour() -> None:
    # routed H T T H: the change back at 3 is 2 after the change at 1 -> boomerang (and the
    # change at 1 is a false switch). routed H T T T H: 3 after -> not a boomerang.
    assert score_conversation(turns(H, H, H, H), [H, T, T, H]) == Tally(
        messages=4, correct=2, correct_lenient=2, false_switches=1, boomerangs=1)
    assert score_conversation(turns(H, H, H, H, H), [H, T, T, T, H]) == Tally(
        messages=5, correct=2, correct_lenient=2, false_switches=1, boomerangs=0)


def test_switch_never_reached_before_the_next_one() -> None:
    # gold H T H; routed H H H: switch at 1 (window 1..1) missed, switch at 2 reached at 2.
    tally = score_conversation(turns(H, T, H), [H, H, H])
    assert (tally.switches, tally.reached, tally.delay_sum) == (2, 1, 0)


def test_row_rates_over_five_conversations() -> None:
    total = Tally()
    for golds, routed, domains in [
        ((H, H, T, T, H), [H, H, H, T, H], None),
        ((T, T, T), [D, T, H], {2: (T, H)}),
        (("oos",), [D], None),
        ((H, H, H, H), [H, T, T, H], None),
        ((H, H, H, H, H), [H, T, T, T, H], None),
    ]:
        total.add(score_conversation(turns(*golds, domains=domains), routed))
    total.calls, total.tokens = 3, 120
    # 18 messages; correct 4+1+1+2+2 = 10; lenient 11; switches 2 reached 2 delay 1;
    # false switches 0+1+0+1+1 = 3; boomerangs 1+0+0+1+0 = 2.
    r = row("x", {"k": 1}, total)
    assert r.as_dict() == {
        "strategy": "x", "settings": {"k": 1}, "messages": 18,
        "accuracy": 55.56, "accuracy_lenient": 61.11, "switch_recall": 100.0, "switch_delay": 0.5,
        "false_switches_per_100": 16.67, "boomerangs_per_100": 11.11, "classifier_calls_per_100": 16.67,
        "tokens": 120,
    }


def test_stay_first_baseline(hand_corpus) -> None:
    # hand:1 all hotel -> 1 of 3; hand:2 all train -> 2 of 5; hand:3 oos -> default, right.
    # Switches: hand:1 at 1 and hand:2 at 2, neither reached. No calls.
    r = row("stay", {}, stay_first(hand_corpus))
    assert (r.messages, r.accuracy, r.switch_recall, r.switch_delay, r.false_switches_per_100,
            r.boomerangs_per_100, r.classifier_calls_per_100, r.tokens) == (9, 44.44, 0.0, 0.0, 0.0, 0.0, 0.0, 0)


def test_classify_every_baseline_counts_non_short_turns(hand_corpus) -> None:
    # Every turn right (100%); calls: all turns but "ok" (2 chars < 15) = 8 of 9; tokens: 10 a call.
    r = row("every", {}, classify_every(hand_corpus, 15, lambda _text: 10))
    assert (r.accuracy, r.accuracy_lenient, r.switch_recall, r.switch_delay, r.false_switches_per_100,
            r.classifier_calls_per_100, r.tokens) == (100.0, 100.0, 100.0, 0.0, 0.0, 88.89, 80)


def test_classify_every_short_boundary() -> None:
    from stickyroute.replay.corpus import Conversation

    conv = Conversation("c", (Turn("  " + "x" * 14 + "  ", H), Turn("x" * 15, H)))
    assert classify_every([conv], 15).calls == 1
