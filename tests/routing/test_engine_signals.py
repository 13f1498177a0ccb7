"""Agent hints and handoffs in the pure engine (issue #12 "Semantics"): `apply_signal` per
strategy and per setting, then the next messages' exact (agent, reason), classifier calls and the
route left behind as (agent, explicit, candidate, counter)."""

from __future__ import annotations

from typing import Any

import pytest

from stickyroute.config.model import AgentHints, Strategy
from stickyroute.core.route import Route
from stickyroute.routing.signals import HANDOFF, NOT_MINE, Ignored, Signal, SignalKind
from tests.routing.engine_cases import HEUR, LONG, OFF, ONLY, TTL
from tests.scenario import MIN, T0, Playbook, ScriptedClassifier, agent, agents, make_config

NOT_MINE_K, HANDOFF_K = SignalKind.NOT_MINE, SignalKind.HANDOFF
BILLING_MSG = "I was charged twice, please refund my invoice"
"""Billing keywords (refund, invoice, charged): a divergence from coder."""
MILD_BILLING = "what's the price now"
"""One weak billing keyword: below the confidence threshold, no divergence."""


def book(strategy: Strategy = HEUR, answers: Any = None, **settings: Any) -> Playbook:
    """coder's conversation, a minute old; hints count as divergence unless `agent_hints` says."""
    settings.setdefault("agent_hints", AgentHints.DIVERGENCE)
    sc = Playbook(make_config(strategy, **settings), ScriptedClassifier(answers))
    sc.seed("coder", age_s=60)
    return sc


def hint(target: str | None = None, sender: str = "coder") -> Signal:
    return Signal(NOT_MINE_K, sender, target)


def handoff(target: str | None, sender: str = "coder") -> Signal:
    return Signal(HANDOFF_K, sender, target)


# --- divergence (the default, sticky_heuristic) -------------------------------------------------


@pytest.mark.parametrize(
    ("signal", "messages", "answer", "expected", "calls", "state"),
    [
        pytest.param(hint("billing"), [BILLING_MSG], "billing", [("billing", "agent_hint")], 1,
                     ("billing", False, None, 0), id="suggested+diverging-completes-at-once"),
        pytest.param(hint("billing"), [LONG], "billing", [("coder", "divergence_pending")], 0,
                     ("coder", False, "billing", 1), id="suggested+neutral-is-one-increment"),
        pytest.param(hint("billing"), [LONG, BILLING_MSG], "billing",
                     [("coder", "divergence_pending"), ("billing", "llm_confirmed")], 1,
                     ("billing", False, None, 0), id="suggested-then-diverging-confirms"),
        pytest.param(hint(), [BILLING_MSG], "billing", [("billing", "agent_hint")], 1,
                     ("billing", False, None, 0), id="no-suggestion-takes-the-keyword-candidate"),
        pytest.param(hint(), [LONG, BILLING_MSG], "billing", [("coder", "neutral"), ("billing", "agent_hint")], 1,
                     ("billing", False, None, 0), id="no-candidate-the-hint-waits"),
        pytest.param(hint(), ["ok", "thanks a lot", BILLING_MSG], "billing",
                     [("coder", "ack"), ("coder", "short"), ("billing", "agent_hint")], 1,
                     ("billing", False, None, 0), id="short-messages-do-not-consume-it"),
        pytest.param(hint(), [BILLING_MSG], "coder", [("coder", "llm_rejected")], 1,
                     ("coder", False, None, 0), id="classifier-keeps-the-current-agent"),
        pytest.param(hint("billing"), [BILLING_MSG], "support", [("support", "agent_hint")], 1,
                     ("support", False, None, 0), id="classifier-picks-a-third-agent"),
        pytest.param(None, [BILLING_MSG], "billing", [("coder", "divergence_pending")], 0,
                     ("coder", False, "billing", 1), id="without-a-hint-one-message-is-not-enough"),
        pytest.param(hint("coder"), [BILLING_MSG], "billing", [("billing", "agent_hint")], 1,
                     ("billing", False, None, 0), id="suggesting-itself-counts-as-no-suggestion"),
    ],
)
async def test_divergence_hint_is_one_increment(signal: Signal | None, messages: list[str], answer: str,
                                                expected: list[tuple[str, str]], calls: int,
                                                state: tuple[str, bool, str | None, int]) -> None:
    sc = book(answers=answer)
    if signal is not None:
        assert isinstance(sc.signal(signal), Route)
    got = [(d.agent, d.reason) for d in [await sc.send(m, 30) for m in messages]]
    assert (got, sc.calls, sc.state()) == (expected, calls, state)


async def test_divergence_hint_counts_toward_an_earlier_candidate() -> None:
    sc = book(answers="billing", divergence_count=3)
    first = await sc.send(BILLING_MSG, 30)
    sc.signal(hint("billing"))
    second = await sc.send(LONG, 30)
    third = await sc.send(BILLING_MSG, 30)
    assert ([(d.agent, d.reason) for d in (first, second, third)], sc.calls, sc.state()) == (
        [("coder", "divergence_pending"), ("coder", "divergence_pending"), ("billing", "llm_confirmed")], 1,
        ("billing", False, None, 0))


async def test_a_pending_hint_is_stored_on_the_route_and_expires_with_it() -> None:
    sc = book()
    sc.signal(hint("billing"))
    pending = sc.route()
    assert pending is not None and (pending.hint, pending.hint_agent) == (NOT_MINE, "billing")
    decision = await sc.send(LONG, 31 * MIN)
    assert ((decision.agent, decision.reason), sc.calls) == (("general", "classified_default"), 1)


# --- confirm -----------------------------------------------------------------------------------


@pytest.mark.parametrize("strategy", [pytest.param(s, id=s.value) for s in (ONLY, TTL, HEUR)])
@pytest.mark.parametrize(
    ("messages", "answer", "expected", "calls", "state"),
    [
        pytest.param([LONG], "billing", [("billing", "agent_hint")], 1, ("billing", False, None, 0),
                     id="next-message-asks-at-once"),
        pytest.param([LONG, LONG], "coder", [("coder", "hint_rejected"), ("coder", "STAY")], 1,
                     ("coder", False, None, 0), id="current-agent-stays-and-the-hint-is-spent"),
        pytest.param(["ok", "thanks a lot", LONG], "billing",
                     [("coder", "ack"), ("coder", "short"), ("billing", "agent_hint")], 1,
                     ("billing", False, None, 0), id="short-messages-wait"),
    ],
)
async def test_confirm_hint_asks_the_classifier_on_the_next_non_short_message(
        strategy: Strategy, messages: list[str], answer: str, expected: list[tuple[str, str]], calls: int,
        state: tuple[str, bool, str | None, int]) -> None:
    sc = book(strategy, answers=answer, agent_hints=AgentHints.CONFIRM)
    assert isinstance(sc.signal(hint()), Route)
    stay = "neutral" if strategy is HEUR else "cache"  # the reason of a plain message after the hint is spent
    expected = [(a, stay if r == "STAY" else r) for a, r in expected]
    got = [(d.agent, d.reason) for d in [await sc.send(m, 30) for m in messages]]
    assert (got, sc.calls, sc.state()) == (expected, calls, state)


@pytest.mark.parametrize(
    ("answer", "reason"),
    [pytest.param("error", "classifier_error", id="error"), pytest.param("budget", "classifier_budget", id="budget")],
)
async def test_confirm_hint_with_the_classifier_unavailable_stays(answer: str, reason: str) -> None:
    from stickyroute.classifier.base import Outcome
    outcome = Outcome.ERROR if answer == "error" else Outcome.BUDGET
    sc = book(HEUR, answers=outcome, agent_hints=AgentHints.CONFIRM)
    sc.signal(hint())
    decision = await sc.send(LONG, 30)
    assert ((decision.agent, decision.reason), sc.calls, sc.route().hint) == (("coder", reason), 1, None)  # type: ignore[union-attr]


# --- handoff -----------------------------------------------------------------------------------


@pytest.mark.parametrize("strategy", [pytest.param(s, id=s.value) for s in (ONLY, TTL, HEUR)])
async def test_handoff_switches_at_once_and_the_next_message_says_handoff(strategy: Strategy) -> None:
    sc = book(strategy, answers="coder")
    written = sc.signal(handoff("billing"), after_s=5)
    got = [(d.agent, d.reason, d.switched) for d in [await sc.send(m, 30) for m in ("ok", LONG)]]
    assert (written, got[0], got[1][0], sc.calls, sc.state()) == (
        Route("billing", T0 + 5, T0 + 5, reason=HANDOFF, hint=HANDOFF), ("billing", "handoff", True), "billing", 0,
        ("billing", False, None, 0))


async def test_after_a_handoff_auto_routing_goes_on() -> None:
    sc = book(HEUR, answers="coder")
    sc.signal(handoff("billing"))
    got = [(d.agent, d.reason) for d in [await sc.send(m, 30) for m in (
        LONG, "my python script has a bug in the stack trace", "the python bug again, stack trace attached")]]
    assert got == [("billing", "handoff"), ("billing", "divergence_pending"), ("coder", "llm_confirmed")]


async def test_a_user_switch_overrides_a_handoff_and_a_pending_hint() -> None:
    sc = book(HEUR)
    sc.signal(hint("billing"))
    first = await sc.send("/agent support", 30)
    sc.signal(handoff("billing", sender="support"))
    second = await sc.send(LONG, 30)
    assert ((first.agent, first.reason), (second.agent, second.reason), sc.state()) == (
        ("support", "explicit"), ("support", "explicit_pin"), ("support", True, None, 0))


# --- what is ignored, and why ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("strategy", "settings", "signal", "seed", "why"),
    [
        pytest.param(OFF, {}, handoff("billing"), {"explicit": True}, "auto_route is off", id="off-handoff"),
        pytest.param(OFF, {"agent_hints": AgentHints.CONFIRM}, hint(), {"explicit": True}, "auto_route is off",
                     id="off-hint"),
        pytest.param(ONLY, {"agent_hints": AgentHints.DIVERGENCE}, hint(), {},
                     "divergence hints need sticky_heuristic (channel uses explicit_only)",
                     id="explicit_only-divergence-hint"),
        pytest.param(TTL, {"agent_hints": AgentHints.DIVERGENCE}, hint(), {},
                     "divergence hints need sticky_heuristic (channel uses sticky_ttl)", id="sticky_ttl-divergence-hint"),
        pytest.param(HEUR, {"agent_hints": AgentHints.OFF}, hint(), {}, "auto_route_agent_hints is off",
                     id="hints-off"),
        pytest.param(HEUR, {"agent_handoffs": False}, handoff("billing"), {}, "auto_route_agent_handoffs is false",
                     id="handoffs-off"),
        pytest.param(HEUR, {}, handoff("billing"), {"explicit": True},
                     "the user pinned the conversation explicitly", id="handoff-over-a-pin"),
        pytest.param(HEUR, {}, hint(), {"explicit": True}, "the user pinned the conversation explicitly",
                     id="hint-over-a-pin"),
        pytest.param(HEUR, {}, handoff("translator"), {}, "unknown or hidden agent 'translator' on channel telegram",
                     id="unknown-agent"),
        pytest.param(HEUR, {}, hint("vault"), {}, "unknown or hidden agent 'vault' on channel telegram",
                     id="hidden-agent"),
        pytest.param(HEUR, {"allowed": ("general", "coder")}, handoff("billing"), {},
                     "unknown or hidden agent 'billing' on channel telegram", id="not-on-the-channel"),
        pytest.param(HEUR, {}, handoff(None), {}, "a handoff names another agent", id="handoff-without-agent"),
        pytest.param(HEUR, {}, handoff("coder"), {}, "a handoff names another agent", id="handoff-to-itself"),
        pytest.param(HEUR, {}, hint(sender="billing"), {}, "stale: the conversation is now with coder",
                     id="stale-agent"),
    ],
)
async def test_ignored_signals_change_nothing(strategy: Strategy, settings: dict[str, Any], signal: Signal,
                                              seed: dict[str, Any], why: str) -> None:
    roster = dict(agents(agent("general"), agent("coder", keywords=("python",)), agent("billing", keywords=("refund",)),
                         agent("support"), agent("vault", hidden=True)))
    sc = Playbook(make_config(strategy, roster=roster, **settings), ScriptedClassifier())
    before = sc.seed("coder", age_s=60, **seed)
    assert (sc.signal(signal), sc.route()) == (Ignored(why), before)


async def test_a_signal_for_an_older_route_version_or_no_route_is_ignored() -> None:
    sc = book()
    before = sc.route()
    stale = sc.signal(hint(), version=T0 - 3600)
    sc.routes.clear()
    assert (stale, sc.signal(hint())) == (Ignored("stale: the route changed since"), Ignored("no live route"))
    assert before is not None and before.chosen_at == T0 - 60


MIXED = "the python bug is about my invoice refund"
"""coder 12 raw (+ sticky bonus), billing 12 raw: no divergence from coder without a hint."""


@pytest.mark.parametrize(
    ("hinted", "expected", "calls"),
    [
        pytest.param(False, ("coder", "agreement"), 0, id="without-a-hint-the-sticky-bonus-holds"),
        pytest.param(True, ("billing", "agent_hint"), 1, id="after-not-mine-the-best-other-agent-is-the-candidate"),
    ],
)
async def test_a_hint_without_suggestion_drops_the_sticky_bonus(hinted: bool, expected: tuple[str, str],
                                                                calls: int) -> None:
    sc = book(answers="billing", divergence_count=1)
    if hinted:
        sc.signal(hint())
    decision = await sc.send(MIXED, 30)
    assert ((decision.agent, decision.reason), sc.calls) == (expected, calls)


async def test_a_tie_between_other_agents_is_no_candidate_and_the_hint_waits() -> None:
    sc = book(answers="billing")
    sc.signal(hint())
    decision = await sc.send("my invoice and my password", 30)  # billing 6, support 6
    assert ((decision.agent, decision.reason), sc.route().hint) == (("coder", "neutral"), NOT_MINE)  # type: ignore[union-attr]


async def test_the_default_is_confirm() -> None:
    sc = Playbook(make_config(HEUR), ScriptedClassifier("billing"))
    sc.seed("coder", age_s=60)
    sc.signal(hint())
    decision = await sc.send(LONG, 30)
    assert ((decision.agent, decision.reason), sc.calls) == (("billing", "agent_hint"), 1)
