"""Routing engine (issue #3 "Semantics"): the strategies off, explicit_only and sticky_ttl, and the first message of a session.

Played through the pure engine with `tests.routing.engine_cases.run`; every row states the exact
(agent, reason) of each decision, the classifier call count and the route left behind.
"""

from __future__ import annotations

import pytest

from stickyroute.config.model import Strategy
from tests.routing.engine_cases import AUTO_STRATEGIES, BUDGET, ERROR, INVALID, LONG, OFF, ONLY, OPEN, TTL, run
from tests.scenario import AGENTS, MIN, T0, TTL_S, Answer

# --- strategy off -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "message",
    ["my python script has a bug", "please refund the invoice", "check the k8s pods", LONG, "thanks!", "yes"],
)
async def test_off_routes_everything_to_default_without_scoring_or_classifier(message: str) -> None:
    sc, got = await run([message, (MIN, message)], strategy=OFF, answers="coder", first_message_margin=0)
    assert (got, sc.calls, sc.score_calls, sc.state()) == ([("general", "default")] * 2, 0, 0, None)


@pytest.mark.parametrize("explicit_pin", [True, False])
async def test_off_explicit_route_lives_for_ttl_of_inactivity(explicit_pin: bool) -> None:
    sc, got = await run(
        [
            "/agent billing",
            (29 * MIN, "please check my python bug again"),
            (29 * MIN, LONG),
            (TTL_S, LONG),
        ],
        strategy=OFF, explicit_pin=explicit_pin,
    )
    assert (got, sc.calls, sc.state()) == (
        [("billing", "explicit"), ("billing", "explicit_pin"), ("billing", "explicit_pin"), ("general", "default")],
        0, None)


# --- first message of a session ---------------------------------------------------------------


@pytest.mark.parametrize("strategy", AUTO_STRATEGIES)
@pytest.mark.parametrize(
    ("answer", "expected", "state"),
    [
        pytest.param("coder", ("coder", "classified"), ("coder", False, None, 0), id="agent-cached"),
        pytest.param("general", ("general", "classified"), ("general", False, None, 0), id="default-agent-named"),
        pytest.param(None, ("general", "classified_default"), ("general", False, None, 0), id="none-cached-as-default"),
        pytest.param("coder.", ("coder", "classified"), ("coder", False, None, 0), id="answer-with-full-stop"),
        pytest.param(" CODER\n", ("coder", "classified"), ("coder", False, None, 0), id="answer-upper-padded"),
        pytest.param("accounts", ("billing", "classified"), ("billing", False, None, 0), id="answer-alias"),
        pytest.param("translator", ("general", "classified_default"), ("general", False, None, 0),
                     id="answer-no-such-agent"),
        pytest.param("I think coder", ("general", "classified_default"), ("general", False, None, 0),
                     id="answer-with-prose"),
        pytest.param(INVALID, ("general", "classified_default"), ("general", False, None, 0),
                     id="invalid-agent-outcome"),
        pytest.param(ERROR, ("general", "classifier_error"), None, id="error-not-cached"),
        pytest.param(BUDGET, ("general", "classifier_budget"), None, id="budget-not-cached"),
        pytest.param(OPEN, ("general", "classifier_open"), None, id="open-breaker-not-cached"),
    ],
)
async def test_first_message_is_classified(
    strategy: Strategy, answer: Answer, expected: tuple[str, str], state: tuple | None
) -> None:
    sc, got = await run(["my python script has a bug"], strategy=strategy, answers=answer)
    request = sc.classifier.calls[0]
    assert (got, sc.calls, sc.state(), request.text, request.current, request.channel) == (
        [expected], 1, state, "my python script has a bug", None, "telegram")
    assert [c.name for c in request.candidates] == list(AGENTS)
    if state is not None:
        assert (sc.route().chosen_at, sc.route().last_active) == (T0, T0)


@pytest.mark.parametrize("strategy", AUTO_STRATEGIES)
async def test_first_message_after_a_classifier_failure_is_classified_again(strategy: Strategy) -> None:
    first, second = "my python script has a bug", "my python script still has a bug"
    sc, got = await run([first, (MIN, second)], strategy=strategy, answers={first: ERROR, second: "coder"})
    assert (got, sc.calls, sc.state()) == (
        [("general", "classifier_error"), ("coder", "classified")], 2, ("coder", False, None, 0))


# --- explicit_only ----------------------------------------------------------------------------


async def test_explicit_only_never_classifies_after_the_first_message() -> None:
    steps = ["my python script has a bug"] + [(10 * MIN, "please refund the invoice payment")] * 12
    sc, got = await run(steps, strategy=ONLY, answers={"my python script has a bug": "coder"})
    assert (got, sc.calls, sc.state()) == (
        [("coder", "classified")] + [("coder", "cache")] * 12, 1, ("coder", False, None, 0))
    assert sc.route().last_active == T0 + 120 * MIN


@pytest.mark.parametrize(
    ("idle_s", "expected", "calls"),
    [
        pytest.param(TTL_S - 1, ("coder", "cache"), 1, id="29m59s-idle-same-session"),
        pytest.param(TTL_S, ("billing", "classified"), 2, id="30m-idle-new-session"),
    ],
)
async def test_explicit_only_session_ends_after_ttl_of_inactivity(idle_s: float, expected: tuple, calls: int) -> None:
    sc, got = await run(
        ["my python script has a bug", (idle_s, "please refund the invoice payment")],
        strategy=ONLY, answers={"my python script has a bug": "coder", "please refund the invoice payment": "billing"},
    )
    assert (got, sc.calls) == ([("coder", "classified"), expected], calls)


async def test_explicit_only_short_messages_keep_the_session_alive() -> None:
    sc, got = await run(
        ["my python script has a bug", (20 * MIN, "yes please"), (20 * MIN, "please refund the invoice")],
        strategy=ONLY, answers="coder",
    )
    assert (got, sc.calls) == ([("coder", "classified"), ("coder", "short"), ("coder", "cache")], 1)


# --- sticky_ttl -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("answer", "last", "state", "chosen_at"),
    [
        pytest.param("billing", ("billing", "reclassified"), ("billing", False, None, 0), T0 + 30 * MIN,
                     id="other-agent"),
        pytest.param("coder", ("coder", "reclassified"), ("coder", False, None, 0), T0 + 30 * MIN, id="same-agent"),
        pytest.param(None, ("general", "classified_default"), ("general", False, None, 0), T0 + 30 * MIN, id="none"),
        pytest.param("translator", ("general", "classified_default"), ("general", False, None, 0), T0 + 30 * MIN,
                     id="no-such-agent"),
        pytest.param(ERROR, ("coder", "classifier_error"), ("coder", False, None, 0), T0, id="error-keeps-route"),
        pytest.param(BUDGET, ("coder", "classifier_budget"), ("coder", False, None, 0), T0, id="budget-keeps-route"),
        pytest.param(OPEN, ("coder", "classifier_open"), ("coder", False, None, 0), T0, id="open-keeps-route"),
    ],
)
async def test_sticky_ttl_reclassifies_ttl_after_classification_in_an_active_conversation(
    answer: Answer, last: tuple, state: tuple, chosen_at: float
) -> None:
    first = "my python script has a bug"
    sc, got = await run(
        [first, (10 * MIN, LONG), (10 * MIN, "please refund the invoice"), (10 * MIN - 1, "yet another long message"),
         (1, "and refund the payment please")],
        strategy=TTL, answers={first: "coder", "and refund the payment please": answer},
    )
    assert (got, sc.calls, sc.state(), sc.route().chosen_at) == (
        [("coder", "classified"), ("coder", "cache"), ("coder", "cache"), ("coder", "cache"), last], 2, state, chosen_at)
    assert sc.classifier.calls[1].current == "coder"


async def test_sticky_ttl_short_messages_keep_the_expired_route_until_idle_for_ttl() -> None:
    first, later = "my python script has a bug", "now a real long question"
    sc, got = await run(
        [first, (20 * MIN, LONG), (11 * MIN, "yes do that"), (MIN, "ok"), (25 * MIN, "sure, go on"),
         (5 * MIN, later), (25 * MIN, "another long message here")],
        strategy=TTL, answers={first: "coder", later: "coder"},
    )
    assert (got, sc.calls, sc.route().chosen_at) == (
        [("coder", "classified"), ("coder", "cache"), ("coder", "short"), ("coder", "ack"), ("coder", "short"),
         ("coder", "reclassified"), ("coder", "cache")], 2, T0 + 62 * MIN)


async def test_sticky_ttl_expired_route_is_gone_after_ttl_of_inactivity() -> None:
    sc, got = await run(["my python script has a bug", (TTL_S, "yes do that")], strategy=TTL, answers="coder")
    assert (got, sc.calls, sc.state()) == ([("coder", "classified"), ("general", "short")], 1, None)


async def test_sticky_ttl_failed_reclassification_is_retried_on_the_next_message() -> None:
    first = "my python script has a bug"
    answers = {first: "coder", "please refund the invoice": ERROR, "please refund the payment": "billing"}
    sc, got = await run(
        [first, (TTL_S - MIN, LONG), (MIN, "please refund the invoice"), (MIN, "please refund the payment")],
        strategy=TTL, answers=answers,
    )
    assert (got, sc.calls) == (
        [("coder", "classified"), ("coder", "cache"), ("coder", "classifier_error"), ("billing", "reclassified")], 3)


@pytest.mark.parametrize(("explicit_pin", "reason"), [(True, "explicit_pin"), (False, "cache")])
async def test_sticky_ttl_explicit_route_lives_for_ttl_of_inactivity_not_since_chosen(
    explicit_pin: bool, reason: str
) -> None:
    sc, got = await run(
        ["/agent billing"] + [(20 * MIN, "my python script has a bug")] * 6 + [(TTL_S, "my python script has a bug")],
        strategy=TTL, explicit_pin=explicit_pin, answers="coder",
    )
    assert (got, sc.calls) == (
        [("billing", "explicit")] + [("billing", reason)] * 6 + [("coder", "classified")], 1)


