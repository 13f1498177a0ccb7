"""Routing engine (issue #3 "Semantics"): field reports T21, T26, T27, T28.

Played through the pure engine with `tests.routing.engine_cases.run`; every row states the exact
(agent, reason) of each decision, the classifier call count and the route left behind.
"""

from __future__ import annotations

import pytest

from stickyroute.classifier.base import Classification, Outcome
from stickyroute.config.model import Strategy
from tests.routing.engine_cases import ALL_STRATEGIES, AUTO_STRATEGIES, ERROR, HEUR, OFF, run, seeded
from tests.scenario import MIN, Answer, Playbook, ScriptedClassifier, agent, agents, make_config

# --- field reports ----------------------------------------------------------------------------

QA_ROSTER = agents(agent("general"), agent("qa", keywords=("test",)), agent("billing", keywords=("invoice",)))


async def test_T21_auto_route_off_pinned_default_wins() -> None:
    sc, got = await run(["test this please"], strategy=OFF, roster=QA_ROSTER, answers="qa")
    assert (got, sc.calls, sc.score_calls, sc.state()) == ([("general", "default")], 0, 0, None)


async def test_T21_sticky_heuristic_first_message_needs_the_classifier() -> None:
    sc, got = await run(["test this please"], roster=QA_ROSTER, answers=None)
    assert (got, sc.calls, sc.state()) == ([("general", "classified_default")], 1, ("general", False, None, 0))


async def test_T21_sticky_heuristic_one_keyword_hit_alone_never_switches() -> None:
    sc, got = await run(["test this please"], roster=QA_ROSTER, seed=seeded("general", age_s=MIN), answers="qa")
    assert (got, sc.calls, sc.state()) == ([("general", "divergence_pending")], 0, ("general", False, "qa", 1))


T26_ROSTER = agents(agent("general"), agent("billing"), agent("support"))


@pytest.mark.parametrize("strategy", ALL_STRATEGIES)
@pytest.mark.parametrize(
    ("message", "switch"),
    [
        ("@dana can you check this?", None),
        ("@billing can you check this?", "billing"),
        ("@billingbot hi", None),
        ("mail ops@billing.example please", None),
        ("thanks @support!", "support"),
    ],
)
async def test_T26_mentions(strategy: Strategy, message: str, switch: str | None) -> None:
    sc, got = await run([message], strategy=strategy, roster=T26_ROSTER, answers=None)
    if switch is not None:
        assert (got, sc.calls, sc.state()) == ([(switch, "explicit")], 0, (switch, True, None, 0))
    elif strategy is OFF or len(message) < 15:
        assert (got, sc.calls, sc.state()) == ([("general", "default" if strategy is OFF else "short")], 0, None)
    else:  # not a switch: an ordinary first message, classified (answer none)
        assert (got, sc.calls, sc.state()) == ([("general", "classified_default")], 1, ("general", False, None, 0))


@pytest.mark.parametrize("message", ["@dana can you check this?", "@billingbot hi", "mail ops@billing.example please"])
async def test_T26_unknown_names_never_create_routes(message: str) -> None:
    sc, got = await run([message], strategy=OFF, roster=T26_ROSTER)
    assert (got, sc.live_routes()) == ([("general", "default")], 0)


@pytest.mark.parametrize("strategy", AUTO_STRATEGIES)
async def test_T27_short_follow_ups_stay_put(strategy: Strategy) -> None:
    sc, got = await run(
        ["okay", "yes do it"], strategy=strategy,
        seed=seeded("billing", age_s=2 * MIN, candidate="support", counter=1), answers="support",
    )
    assert (got, sc.calls, sc.score_calls, sc.state()) == (
        [("billing", "ack"), ("billing", "short")], 0, 0, ("billing", False, "support", 1))


T28_ROSTER = agents(agent("general"), agent("billing", keywords=("invoice", "refund")),
                    agent("fishing-trips", keywords=("fish", "fishing")))
T28 = "can you fish out the root cause of the invoice bug?"


async def test_T28_idiom_with_own_keyword_stays_billing_without_classifier() -> None:
    sc = Playbook(make_config(HEUR, roster=T28_ROSTER), ScriptedClassifier("fishing-trips"))
    sc.seed("billing", age_s=MIN)
    decision = await sc.send(T28)
    assert ((decision.agent, decision.reason), dict(decision.scores), sc.calls, sc.state()) == (
        ("billing", "agreement"), {"fishing-trips": 6, "billing": 6}, 0, ("billing", False, None, 0))


T28_NO_OWN = "can you fish out the root cause of the bug?"


@pytest.mark.parametrize(
    ("answer", "last"),
    [
        pytest.param("billing", ("billing", "llm_rejected"), id="classifier-says-billing"),
        pytest.param(None, ("billing", "llm_rejected"), id="classifier-says-none"),
        pytest.param(ERROR, ("billing", "classifier_error"), id="classifier-error"),
        pytest.param(Classification(outcome=Outcome.ERROR, error_kind="timeout"), ("billing", "classifier_error"),
                     id="classifier-timeout"),
    ],
)
async def test_T28_single_token_hit_never_switches_without_confirmation(answer: Answer, last: tuple) -> None:
    sc, got = await run([T28_NO_OWN, (MIN, T28_NO_OWN)], roster=T28_ROSTER, seed=seeded("billing", age_s=MIN),
                        answers=answer)
    assert (got, sc.calls, sc.state()) == (
        [("billing", "divergence_pending"), last], 1, ("billing", False, None, 0))


