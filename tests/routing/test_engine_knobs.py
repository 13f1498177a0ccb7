"""Routing engine (issue #3 "Semantics"): the opt-in knobs and the pure decide() / conclude() values.

Played through the pure engine with `tests.routing.engine_cases.run`; every row states the exact
(agent, reason) of each decision, the classifier call count and the route left behind.
"""

from __future__ import annotations

import pytest

from stickyroute.core.route import Route
from stickyroute.routing.engine import NeedsClassification, Purpose, busy, decide, unavailable
from stickyroute.routing.envelope import Envelope, MessageKind
from stickyroute.routing.rules import build_rules
from stickyroute.routing.text import is_acknowledgement
from tests.routing.engine_cases import HEUR, LONG, TTL, run, seeded
from tests.scenario import MIN, T0, TTL_S, make_config

# --- opt-in knobs -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("margin", "message", "expected", "calls"),
    [
        pytest.param(None, "please refund the invoice", ("support", "classified"), 1, id="off-by-default-classifies"),
        pytest.param(6, "please refund the invoice", ("billing", "keywords"), 0, id="clear-winner-by-keywords"),
        pytest.param(6, "refund the invoice for the login", ("billing", "keywords"), 0, id="margin-exactly-6"),
        pytest.param(7, "refund the invoice for the login", ("support", "classified"), 1, id="margin-5-below-7"),
        pytest.param(0, "the deploy ended in a segfault", ("support", "classified"), 1, id="tie-classifies"),
        pytest.param(0, "the price of the account", ("support", "classified"), 1, id="below-threshold-classifies"),
        pytest.param(0, LONG, ("support", "classified"), 1, id="no-keywords-classifies"),
        pytest.param(0, "fix my invoice", ("general", "short"), 0, id="short-still-default"),
    ],
)
async def test_first_message_margin(margin: int | None, message: str, expected: tuple, calls: int) -> None:
    sc, got = await run([message], first_message_margin=margin, answers="support")
    assert (got, sc.calls, sc.state()) == (
        [expected], calls, None if expected[1] == "short" else (expected[0], False, None, 0))


async def test_first_message_margin_does_not_apply_with_a_live_route() -> None:
    sc, got = await run([(MIN, "please refund the invoice")], seed=seeded("coder"), first_message_margin=0)
    assert (got, sc.calls) == ([("coder", "divergence_pending")], 0)


@pytest.mark.parametrize(
    ("margin", "message", "answer", "expected", "state", "calls"),
    [
        pytest.param(None, "please refund the invoice", "billing", ("coder", "divergence_pending"),
                     ("coder", False, "billing", 1), 0, id="off-by-default-pending"),
        pytest.param(8, "please refund the invoice", "billing", ("billing", "llm_confirmed"),
                     ("billing", False, None, 0), 1, id="12-vs-0+4-margin-8-confirms-now"),
        pytest.param(8, "please refund the invoice", None, ("coder", "llm_rejected"),
                     ("coder", False, None, 0), 1, id="early-rejection-resets"),
        pytest.param(9, "please refund the invoice", "billing", ("coder", "divergence_pending"),
                     ("coder", False, "billing", 1), 0, id="margin-8-below-9-pending"),
        pytest.param(8, "refund the invoice payment for my python work", "billing", ("billing", "llm_confirmed"),
                     ("billing", False, None, 0), 1, id="18-vs-6+4-margin-8-confirms-now"),
        pytest.param(0, "the deploy ended in a segfault", "billing", ("coder", "neutral"),
                     ("coder", False, None, 0), 0, id="not-divergent-never-early"),
    ],
)
async def test_early_confirm_margin(margin, message, answer, expected, state, calls) -> None:
    sc, got = await run([(MIN, message)], seed=seeded("coder"), early_confirm_margin=margin, answers=answer)
    assert (got, sc.state(), sc.calls) == ([expected], state, calls)


@pytest.mark.parametrize(
    ("settings", "message", "expected", "state"),
    [
        pytest.param({}, "please refund the invoice", ("coder", "divergence_pending"), ("coder", False, "billing", 1),
                     id="off-by-default-pending"),
        pytest.param({"keyword_switch_margin": 8}, "please refund the invoice", ("billing", "keywords"),
                     ("billing", False, None, 0), id="12-vs-0+4-margin-8-switches"),
        pytest.param({"keyword_switch_margin": 9}, "please refund the invoice", ("coder", "divergence_pending"),
                     ("coder", False, "billing", 1), id="margin-8-below-9-pending"),
        pytest.param({"keyword_switch_margin": 6}, "refund the invoice for the login", ("billing", "keywords"),
                     ("billing", False, None, 0), id="runner-up-is-another-agent-6"),
        pytest.param({"keyword_switch_margin": 7}, "refund the invoice for the login", ("coder", "divergence_pending"),
                     ("coder", False, "billing", 1), id="runner-up-6-margin-7-pending"),
        pytest.param({"keyword_switch_margin": 0}, "the deploy ended in a segfault", ("coder", "neutral"),
                     ("coder", False, None, 0), id="not-divergent-never-switches"),
        pytest.param({"keyword_switch_margin": 8, "early_confirm_margin": 8}, "please refund the invoice",
                     ("billing", "keywords"), ("billing", False, None, 0), id="switch-before-early-confirm"),
    ],
)
async def test_keyword_switch_margin(settings: dict, message: str, expected: tuple, state: tuple) -> None:
    sc, got = await run([(MIN, message)], seed=seeded("coder", age_s=5 * MIN), answers="coder", **settings)
    assert (got, sc.state(), sc.calls) == ([expected], state, 0)
    if expected[1] == "keywords":
        assert (sc.route().chosen_at, sc.route().last_active) == (T0 + MIN, T0 + MIN)


async def test_keyword_switch_margin_never_overrides_an_explicit_pin() -> None:
    sc, got = await run(["/agent coder", (MIN, "please refund the invoice")], keyword_switch_margin=0)
    assert (got, sc.state()) == ([("coder", "explicit"), ("coder", "explicit_pin")], ("coder", True, None, 0))


# --- the pure engine --------------------------------------------------------------------------


def test_decide_is_pure_and_asks_for_classification() -> None:
    config = make_config(TTL)
    rules = build_rules(config, config.channels["telegram"], lists_agents=True)
    route = Route("coder", chosen_at=T0, last_active=T0 + 20 * MIN)
    message = Envelope("telegram", MessageKind.TEXT, sender_id="111", chat_id="111", text=LONG)
    need = decide(message, route, rules, T0 + TTL_S)
    assert need == NeedsClassification(Purpose.RECLASSIFY, LONG, "coder", route, {})
    assert decide(message, route, rules, T0 + TTL_S - 1).reason == "cache"
    assert isinstance(decide(message, None, rules, T0), NeedsClassification)


def test_decide_confirm_carries_updated_counter_and_candidate() -> None:
    config = make_config(HEUR)
    rules = build_rules(config, config.channels["telegram"], lists_agents=True)
    route = Route("coder", chosen_at=T0, last_active=T0, candidate="billing", counter=1)
    message = Envelope("telegram", MessageKind.TEXT, sender_id="111", chat_id="111", text="please refund the invoice")
    need = decide(message, route, rules, T0 + MIN)
    assert need == NeedsClassification(
        Purpose.CONFIRM, "please refund the invoice", "coder",
        Route("coder", chosen_at=T0, last_active=T0 + MIN, candidate="billing", counter=2), {"billing": 12},
        candidate="billing",
        detour_route=Route("coder", chosen_at=T0, last_active=T0 + MIN, candidate="billing", counter=1))


@pytest.mark.parametrize(("text", "expected"), [
    ("ok . !", True),
    ("thanks!!! ", True),
    ("a" + "!" * 160000, False),
    ("ok" + "!" * 300, False),
])
def test_acknowledgement_scan_is_bounded(text, expected):

    assert is_acknowledgement(text, frozenset({"ok", "thanks"})) is expected


@pytest.mark.parametrize(
    ("settings", "answer", "expected", "calls"),
    [
        pytest.param({"sticky_bonus": 0}, "billing", ("coder", "agreement"), 0, id="off-by-default-agreement"),
        pytest.param({"sticky_bonus": 0, "contest_confirm": True}, "billing", ("billing", "llm_confirmed"), 1,
                     id="tie-6-6-asks-and-switches"),
        pytest.param({"sticky_bonus": 0, "contest_confirm": True}, "coder", ("coder", "llm_rejected"), 1,
                     id="tie-asks-and-stays"),
        pytest.param({"sticky_bonus": 4, "contest_confirm": True}, "billing", ("coder", "agreement"), 0,
                     id="bonus-breaks-the-tie-no-call"),
        pytest.param({"sticky_bonus": 0, "contest_confirm": True, "confidence_threshold": 7}, "billing",
                     ("coder", "agreement"), 0, id="tied-agent-below-threshold-no-call"),
    ],
)
async def test_contest_confirm(settings: dict, answer: str, expected: tuple, calls: int) -> None:
    """Opt-in: another agent tying the current one at the top ("python refund" on coder) asks the classifier."""
    sc, got = await run([(MIN, "the python refund is wrong")], seed=seeded("coder"), answers=answer, **settings)
    assert (got, sc.calls) == ([expected], calls)


@pytest.mark.parametrize(("route", "expected"), [
    (Route("billing", chosen_at=T0, last_active=T0), ("billing", "busy")),
    (Route("coder", chosen_at=T0, last_active=T0, explicit=True), ("coder", "busy")),
    (None, ("general", "busy")),
])
def test_busy_stays_on_the_route_read_and_writes_nothing(route: Route | None, expected: tuple[str, str]) -> None:
    """Issue #10: a message that cannot get its conversation's lease within the classifier's timeout."""
    rules = build_rules(make_config(), make_config().channels["telegram"], lists_agents=True)
    decision = busy(route, rules)
    assert ((decision.agent, decision.reason), decision.store, decision.forget, decision.list_agents) == (
        expected, None, False, False)


@pytest.mark.parametrize(("route", "expected"), [
    (Route("billing", chosen_at=T0, last_active=T0), ("billing", "state_unavailable")),
    (Route("coder", chosen_at=T0, last_active=T0, explicit=True), ("coder", "state_unavailable")),
    (None, ("general", "state_unavailable")),
])
def test_unavailable_state_routes_to_the_route_last_seen_and_writes_nothing(route: Route | None,
                                                                            expected: tuple[str, str]) -> None:
    """Redis up but late: the route this process last saw (or the default), nothing written."""
    rules = build_rules(make_config(), make_config().channels["telegram"], lists_agents=True)
    decision = unavailable(route, rules)
    assert ((decision.agent, decision.reason), decision.store, decision.forget, decision.switched) == (
        expected, None, False, False)
