"""Routing engine (issue #3 "Semantics"): sticky_heuristic steps 1-5 (keyword gate, sticky bonus, divergence counter, explicit pin).

Played through the pure engine with `tests.routing.engine_cases.run`; every row states the exact
(agent, reason) of each decision, the classifier call count and the route left behind.
"""

from __future__ import annotations

import pytest

from tests.routing.engine_cases import BUDGET, ERROR, HEUR, INVALID, LONG, OPEN, run, seeded
from tests.scenario import MIN, T0, TTL_S, Answer, Playbook, ScriptedClassifier, edit, make_config, photo, status

# --- sticky_heuristic steps 1-4 ---------------------------------------------------------------

BLOG = "write a blog article with a catchy headline about our python refactor"
"""content-writer 18 (blog, article, headline), coder 12 (python, refactor)."""


@pytest.mark.parametrize(
    ("seed", "message", "settings", "expected", "state", "scores"),
    [
        pytest.param(seeded("coder"), "the deploy ended in a segfault", {}, ("coder", "neutral"),
                     ("coder", False, None, 0), {"ops-agent": 6, "debugger": 6}, id="seed-tie-ops-debugger-no-switch"),
        pytest.param(seeded("coder", candidate="billing", counter=1), "the deploy ended in a segfault", {},
                     ("coder", "neutral"), ("coder", False, "billing", 1), {"ops-agent": 6, "debugger": 6},
                     id="tie-keeps-pending-counter"),
        pytest.param(seeded("ops-agent", candidate="coder", counter=1), "check the k8s pods", {},
                     ("ops-agent", "agreement"), ("ops-agent", False, None, 0), {"ops-agent": 12},
                     id="seed-k8s-pods-resets-counter"),
        pytest.param(seeded("coder"), BLOG, {}, ("coder", "divergence_pending"), ("coder", False, "content-writer", 1),
                     {"content-writer": 18, "coder": 12}, id="seed-content-writer-18-vs-coder-12+4-diverges"),
        pytest.param(seeded("ops-agent"), "there is a bug somewhere here", {}, ("ops-agent", "divergence_pending"),
                     ("ops-agent", False, "coder", 1), {"coder": 6}, id="seed-coder-6-vs-ops-0+4-counts-once"),
        pytest.param(seeded("coder"), "write a blog article with a headline about python refactor code function", {},
                     ("coder", "agreement"), ("coder", False, None, 0), {"content-writer": 18, "coder": 14},
                     id="tie-with-current-effective-is-agreement"),
        pytest.param(seeded("coder"), "refund the invoice payment for my python work", {},
                     ("coder", "divergence_pending"), ("coder", False, "billing", 1), {"billing": 18, "coder": 6},
                     id="divergence-beats-own-keywords"),
        pytest.param(seeded("ops-agent"), "some code in a function", {}, ("ops-agent", "neutral"),
                     ("ops-agent", False, None, 0), {"coder": 2}, id="weak-only-neutral"),
        pytest.param(seeded("ops-agent"), "some code in a function", {"sticky_bonus": 0}, ("ops-agent", "neutral"),
                     ("ops-agent", False, None, 0), {"coder": 2}, id="unique-max-below-threshold-neutral"),
        pytest.param(seeded("ops-agent"), "there is a bug somewhere here", {"confidence_threshold": 7},
                     ("ops-agent", "neutral"), ("ops-agent", False, None, 0), {"coder": 6},
                     id="threshold-is-configurable"),
        pytest.param(seeded("ops-agent"), "there is a bug somewhere here", {"sticky_bonus": 6},
                     ("ops-agent", "neutral"), ("ops-agent", False, None, 0), {"coder": 6},
                     id="bonus-6-tie-with-6-not-divergent"),
        pytest.param(seeded("coder", candidate="billing", counter=1), LONG, {}, ("coder", "neutral"),
                     ("coder", False, "billing", 1), {}, id="no-keywords-neutral-keeps-counter"),
        pytest.param(seeded("coder", candidate="billing", counter=1), "please check my python bug again", {},
                     ("coder", "agreement"), ("coder", False, None, 0), {"coder": 12}, id="agreement-resets-counter"),
        pytest.param(seeded("general"), "please refund the invoice", {}, ("general", "divergence_pending"),
                     ("general", False, "billing", 1), {"billing": 12}, id="from-cached-default"),
    ],
)
async def test_sticky_heuristic_single_message(
    seed: dict, message: str, settings: dict, expected: tuple, state: tuple, scores: dict
) -> None:
    sc = Playbook(make_config(HEUR, **settings), ScriptedClassifier("billing"))
    sc.seed(**{**seed, "age_s": 5 * MIN})
    decision = await sc.send(message, MIN)
    assert ((decision.agent, decision.reason), sc.calls, sc.state(), dict(decision.scores or {})) == (
        expected, 0, state, scores)
    assert sc.route().last_active == T0 + MIN


@pytest.mark.parametrize(
    ("steps", "expected", "state"),
    [
        pytest.param(
            ["please refund the invoice", "the k8s pods are down"],
            [("coder", "divergence_pending"), ("coder", "divergence_pending")], ("coder", False, "ops-agent", 1),
            id="two-divergences-different-agents-do-not-add-up"),
        pytest.param(
            ["please refund the invoice", "the k8s pods are down", "my payment was charged twice"],
            [("coder", "divergence_pending")] * 3, ("coder", False, "billing", 1),
            id="switching-candidate-restarts-count"),
        pytest.param(
            ["please refund the invoice", "please check my python bug again", "my payment was charged twice"],
            [("coder", "divergence_pending"), ("coder", "agreement"), ("coder", "divergence_pending")],
            ("coder", False, "billing", 1), id="agreement-in-between-resets"),
        pytest.param(
            ["please refund the invoice", "the deploy ended in a segfault", "yes", "thanks!", photo(), status(),
             edit("my python bug"), LONG],
            [("coder", "divergence_pending"), ("coder", "neutral"), ("coder", "short"), ("coder", "ack"),
             ("coder", "non_text"), ("coder", "status"), ("coder", "non_text"), ("coder", "neutral")],
            ("coder", False, "billing", 1), id="neutral-short-ack-non-text-do-not-reset"),
    ],
)
async def test_sticky_heuristic_divergence_counter(steps: list, expected: list, state: tuple) -> None:
    sc, got = await run([(MIN, s) for s in steps], seed=seeded("coder"), answers="billing")
    assert (got, sc.calls, sc.state()) == (expected, 0, state)


CONFIRM_STEPS = ["please refund the invoice", LONG, "my payment was charged twice"]


@pytest.mark.parametrize(
    ("answer", "last", "state"),
    [
        pytest.param("billing", ("billing", "llm_confirmed"), ("billing", False, None, 0), id="candidate-confirmed"),
        pytest.param("BILLING\n", ("billing", "llm_confirmed"), ("billing", False, None, 0), id="candidate-padded"),
        pytest.param("support", ("support", "llm_confirmed"), ("support", False, None, 0), id="another-valid-agent"),
        pytest.param("coder", ("coder", "llm_rejected"), ("coder", False, None, 0), id="current-agent"),
        pytest.param("coder.", ("coder", "llm_rejected"), ("coder", False, None, 0), id="current-with-full-stop"),
        pytest.param(None, ("coder", "llm_rejected"), ("coder", False, None, 0), id="none"),
        pytest.param("translator", ("coder", "llm_rejected"), ("coder", False, None, 0), id="no-such-agent"),
        pytest.param(INVALID, ("coder", "llm_rejected"), ("coder", False, None, 0), id="invalid-agent-outcome"),
        pytest.param(ERROR, ("coder", "classifier_error"), ("coder", False, None, 0), id="error"),
        pytest.param(BUDGET, ("coder", "classifier_budget"), ("coder", False, None, 0), id="budget"),
        pytest.param(OPEN, ("coder", "classifier_open"), ("coder", False, None, 0), id="open"),
    ],
)
async def test_sticky_heuristic_counter_reaching_divergence_count_asks_the_classifier_once(
    answer: Answer, last: tuple, state: tuple
) -> None:
    sc, got = await run([(MIN, s) for s in CONFIRM_STEPS], seed=seeded("coder", age_s=10 * MIN), answers=answer)
    request = sc.classifier.calls[0]
    assert (got, sc.calls, sc.state(), request.text, request.current) == (
        [("coder", "divergence_pending"), ("coder", "neutral"), last], 1, state, "my payment was charged twice", "coder")
    expected_chosen = T0 + 3 * MIN if last[1] == "llm_confirmed" else T0 - 10 * MIN
    assert (sc.route().chosen_at, sc.route().last_active) == (expected_chosen, T0 + 3 * MIN)


async def test_sticky_heuristic_after_a_rejection_the_count_starts_again() -> None:
    steps = ["please refund the invoice", "my payment was charged twice", "please refund the payment",
             "I was charged for the refund"]
    sc, got = await run([(MIN, s) for s in steps], seed=seeded("coder"), answers={
        "my payment was charged twice": None, "I was charged for the refund": "billing"})
    assert (got, sc.calls, sc.classifier.texts) == (
        [("coder", "divergence_pending"), ("coder", "llm_rejected"), ("coder", "divergence_pending"),
         ("billing", "llm_confirmed")], 2, ["my payment was charged twice", "I was charged for the refund"])


@pytest.mark.parametrize(
    ("count", "expected", "calls"),
    [
        pytest.param(1, [("billing", "llm_confirmed")], 1, id="count-1-first-divergence-confirms"),
        pytest.param(3, [("coder", "divergence_pending")] * 2 + [("billing", "llm_confirmed")], 1, id="count-3"),
    ],
)
async def test_sticky_heuristic_divergence_count_is_configurable(count: int, expected: list, calls: int) -> None:
    steps = ["please refund the invoice", "my payment was charged twice", "please refund the payment"][:count]
    sc, got = await run([(MIN, s) for s in steps], seed=seeded("coder"), answers="billing", divergence_count=count)
    assert (got, sc.calls) == (expected, calls)


@pytest.mark.parametrize(
    ("idle_s", "expected", "current"),
    [
        pytest.param(TTL_S - 1, ("billing", "llm_confirmed"), "coder", id="29m59s-counter-2-confirms"),
        pytest.param(TTL_S, ("billing", "classified"), None, id="30m-route-and-counter-dropped"),
    ],
)
async def test_sticky_heuristic_ttl_expiry_drops_route_and_counter(idle_s: float, expected: tuple, current) -> None:
    sc, got = await run([(idle_s, "my payment was charged twice")],
                        seed=seeded("coder", candidate="billing", counter=1), answers="billing")
    assert (got, sc.calls, sc.classifier.calls[0].current, sc.state()) == (
        [expected], 1, current, ("billing", False, None, 0))


async def test_sticky_heuristic_first_message_then_heuristics() -> None:
    sc, got = await run(
        ["my python script has a bug", (MIN, "please refund the invoice"), (MIN, "please check my python bug again")],
        answers={"my python script has a bug": "coder"},
    )
    assert (got, sc.calls, sc.state()) == (
        [("coder", "classified"), ("coder", "divergence_pending"), ("coder", "agreement")], 1, ("coder", False, None, 0))


# --- sticky_heuristic step 5: explicit pin ----------------------------------------------------


async def test_sticky_heuristic_explicit_pin_never_scores_nor_classifies() -> None:
    steps = ["/agent billing"] + [(MIN, "my python script has a bug")] * 4
    sc, got = await run(steps, answers="coder")
    assert (got, sc.calls, sc.score_calls, sc.state()) == (
        [("billing", "explicit")] + [("billing", "explicit_pin")] * 4, 0, 0, ("billing", True, None, 0))


async def test_sticky_heuristic_explicit_pin_ends_with_the_ttl() -> None:
    sc, got = await run(["/agent billing", (TTL_S, "my python script has a bug")], answers="coder")
    assert (got, sc.calls, sc.state()) == ([("billing", "explicit"), ("coder", "classified")], 1, ("coder", False, None, 0))


async def test_sticky_heuristic_explicit_pin_ends_with_another_explicit_switch() -> None:
    sc, got = await run(["/agent billing", (MIN, "@coder please"), (MIN, "/agent auto")])
    assert (got, sc.state()) == ([("billing", "explicit"), ("coder", "explicit"), ("general", "auto_reset")], None)


async def test_sticky_heuristic_without_explicit_pin_heuristics_apply_to_explicit_routes() -> None:
    sc, got = await run(
        ["/agent billing", (MIN, "my python script has a bug"), (MIN, "please check my python bug again")],
        explicit_pin=False, answers="coder",
    )
    assert (got, sc.calls, sc.state()) == (
        [("billing", "explicit"), ("billing", "divergence_pending"), ("coder", "llm_confirmed")], 1,
        ("coder", False, None, 0))


async def test_sticky_heuristic_without_explicit_pin_a_rejection_keeps_the_explicit_route() -> None:
    sc, got = await run(
        ["/agent billing", (MIN, "my python script has a bug"), (MIN, "please check my python bug again")],
        explicit_pin=False, answers="billing",
    )
    assert (got, sc.state()) == (
        [("billing", "explicit"), ("billing", "divergence_pending"), ("billing", "llm_rejected")],
        ("billing", True, None, 0))


