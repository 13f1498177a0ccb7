"""Human desks in the pure engine (issue #22): a conversation a desk (`human = true`) takes by a
handoff or an explicit switch stays there (reason `held`) whatever keywords, the classifier or
bots' hints say, and does not expire while held, until the desk says `done`, the user switches
explicitly or `hold_s` of inactivity pass. (An admin pin starts a hold too: tests/admin; an
operator's reset: tests/admin and tests/state.)

Rows give the exact (agent, reason) of each decision, the classifier calls and the route left
behind as (agent, explicit, candidate, counter) or None.
"""

from __future__ import annotations

from typing import Any

import pytest

from stickyroute.config.model import AgentHints, Strategy
from stickyroute.core.route import Route
from stickyroute.routing.signals import Ignored, Released, Signal, SignalKind
from tests.routing.engine_cases import ALL_STRATEGIES, AUTO_STRATEGIES, HEUR, LONG, OFF, ONLY, TTL
from tests.scenario import DESK_ROSTER, HOLD_S, MIN, TTL_S, Playbook, ScriptedClassifier, Step, make_config, photo

BILLING_MSG = "I was charged twice, please refund my invoice"
WEATHER = "will it rain tomorrow, do I need an umbrella"
SHIPPED = {"sticky_bonus": 6, "divergence_count": 1, "first_message_margin": 0, "keyword_switch_margin": 6,
           "contest_confirm": True}
"""The shipped sticky_heuristic settings: keywords alone switch, every divergence asks the classifier."""


def handed_to_desk(strategy: Strategy = HEUR, answers: Any = "billing", **settings: Any) -> Playbook:
    """coder's conversation (a minute old) that coder has just handed to the `humans` desk, and
    the handoff's first message already delivered."""
    sc = Playbook(make_config(strategy, roster=DESK_ROSTER, **settings), ScriptedClassifier(answers))
    sc.seed("coder", age_s=60)
    handed = sc.signal(Signal(SignalKind.HANDOFF, "coder", "humans"))
    assert isinstance(handed, Route) and handed.hold_s == HOLD_S
    return sc


@pytest.mark.parametrize("strategy", AUTO_STRATEGIES)
@pytest.mark.parametrize(
    ("steps", "expected"),
    [
        pytest.param([LONG, BILLING_MSG, WEATHER],
                     [("humans", "handoff"), ("humans", "held"), ("humans", "held")], id="keywords"),
        pytest.param([LONG, (31 * MIN, BILLING_MSG)], [("humans", "handoff"), ("humans", "held")],
                     id="ttl-since-classification-does-not-reclassify"),
        pytest.param([LONG, "ok", "fine by me", photo(), "/agent nobody"],
                     [("humans", "handoff"), ("humans", "ack"), ("humans", "held"), ("humans", "non_text"),
                      ("humans", "held")], id="short-ack-media-unknown-command"),
        pytest.param([LONG, "/agent"], [("humans", "handoff"), ("humans", "explicit")],
                     id="the-agent-list-does-not-end-the-hold"),
    ],
)
async def test_desk_hold_vs_keywords_and_classifier(strategy: Strategy, steps: list[Step],
                                                    expected: list[tuple[str, str]]) -> None:
    sc = handed_to_desk(strategy, **SHIPPED)
    got = await sc.play(steps)
    assert (got, sc.calls, sc.state()) == (expected, 0, ("humans", False, None, 0))


@pytest.mark.parametrize(
    ("idle_s", "expected", "calls", "state"),
    [
        pytest.param(TTL_S + MIN, [("humans", "held")], 0, ("humans", False, None, 0), id="past-the-ttl-still-held"),
        pytest.param(HOLD_S - 1, [("humans", "held")], 0, ("humans", False, None, 0), id="just-inside-the-hold"),
        pytest.param(HOLD_S, [("billing", "keywords")], 0, ("billing", False, None, 0),
                     id="the-hold-expired-a-new-session"),
    ],
)
async def test_desk_hold_vs_ttl(idle_s: float, expected: list[tuple[str, str]], calls: int,
                                state: tuple[str, bool, str | None, int]) -> None:
    sc = handed_to_desk(HEUR, **SHIPPED)
    assert await sc.play([LONG]) == [("humans", "handoff")]
    got = await sc.play([(idle_s, BILLING_MSG)])
    assert (got, sc.calls, sc.state()) == (expected, calls, state)


async def test_each_message_to_the_desk_extends_its_hold() -> None:
    sc = handed_to_desk(HEUR, **SHIPPED)
    got = await sc.play([LONG, (HOLD_S - MIN, BILLING_MSG), (HOLD_S - MIN, BILLING_MSG)])
    assert (got, sc.calls) == ([("humans", "handoff"), ("humans", "held"), ("humans", "held")], 0)


@pytest.mark.parametrize(
    ("signal", "result"),
    [
        pytest.param(Signal(SignalKind.NOT_MINE, "coder", "billing"),
                     Ignored("stale: the conversation is now with humans"), id="a-bots-not-mine"),
        pytest.param(Signal(SignalKind.HANDOFF, "coder", "billing"),
                     Ignored("stale: the conversation is now with humans"), id="a-bots-handoff"),
        pytest.param(Signal(SignalKind.DONE, "coder"),
                     Ignored("stale: the conversation is now with humans"), id="a-bots-done"),
        pytest.param(Signal(SignalKind.NOT_MINE, "humans"),
                     Ignored("a human desk holds the conversation: it releases it with done or hands it off"),
                     id="the-desks-own-not-mine"),
    ],
)
@pytest.mark.parametrize("mode", [AgentHints.CONFIRM, AgentHints.DIVERGENCE])
async def test_desk_hold_vs_hints(signal: Signal, result: Ignored, mode: AgentHints) -> None:
    sc = handed_to_desk(HEUR, agent_hints=mode, **SHIPPED)
    await sc.play([LONG])
    assert sc.signal(signal, after_s=5) == result
    assert (await sc.play([BILLING_MSG]), sc.calls) == ([("humans", "held")], 0)


@pytest.mark.parametrize(
    ("signal", "result", "after", "state"),
    [
        pytest.param(Signal(SignalKind.DONE, "humans"), Released(None), [("billing", "keywords")],
                     ("billing", False, None, 0), id="done-releases"),
        pytest.param(Signal(SignalKind.DONE, "humans", "coder"), None, [("coder", "handoff")],
                     ("coder", False, None, 0), id="done-then-hands-back"),
        pytest.param(Signal(SignalKind.HANDOFF, "humans", "support"), None, [("support", "handoff")],
                     ("support", False, None, 0), id="the-desk-hands-off"),
    ],
)
async def test_desk_release(signal: Signal, result: Released | None, after: list[tuple[str, str]],
                            state: tuple[str, bool, str | None, int]) -> None:
    sc = handed_to_desk(HEUR, **SHIPPED)
    await sc.play([LONG])
    got = sc.signal(signal, after_s=5)
    if result is not None:
        assert got == result
    else:
        assert not isinstance(got, Ignored)
    assert (await sc.play([BILLING_MSG]), sc.state(), sc.route().hold_s if sc.route() else None) == (
        after, state, None)


@pytest.mark.parametrize("strategy", ALL_STRATEGIES)
async def test_an_explicit_switch_to_the_desk_holds_and_the_desk_releases_it(strategy: Strategy) -> None:
    """The user's own `/agent humans` starts a hold (under every strategy, `off` included); the
    desk's `done` ends it although the user chose it (a human decided)."""
    sc = Playbook(make_config(strategy, roster=DESK_ROSTER, explicit_pin=False, **SHIPPED),
                  ScriptedClassifier("billing"))
    got = await sc.play(["/agent humans", BILLING_MSG, (TTL_S + MIN, BILLING_MSG)])
    assert (got, sc.calls, sc.state()) == ([("humans", "explicit"), ("humans", "held"), ("humans", "held")], 0,
                                           ("humans", True, None, 0))
    assert sc.signal(Signal(SignalKind.DONE, "humans"), after_s=5) == Released(None)
    assert sc.route() is None


@pytest.mark.parametrize(
    ("command", "expected", "state", "hold"),
    [
        pytest.param("/agent coder", ("coder", "explicit"), ("coder", True, None, 0), None, id="switch-away"),
        pytest.param("@support my password please", ("support", "explicit"), ("support", True, None, 0), None,
                     id="mention-away"),
        pytest.param("/agent auto", ("general", "auto_reset"), None, None, id="back-to-auto"),
        pytest.param("/agent person", ("humans", "explicit"), ("humans", True, None, 0), HOLD_S,
                     id="the-desk-again-by-alias"),
    ],
)
async def test_the_user_ends_the_hold_explicitly(command: str, expected: tuple[str, str],
                                                 state: tuple[str, bool, str | None, int] | None,
                                                 hold: float | None) -> None:
    sc = handed_to_desk(HEUR, **SHIPPED)
    await sc.play([LONG])
    decision = await sc.send(command, 30)
    route = sc.route()
    assert ((decision.agent, decision.reason), sc.state(), route.hold_s if route else None) == (
        expected, state, hold)


async def test_a_desk_releases_its_hold_even_when_agent_releases_are_off() -> None:
    sc = handed_to_desk(HEUR, agent_releases=False, **SHIPPED)
    await sc.play([LONG])
    assert sc.signal(Signal(SignalKind.DONE, "humans"), after_s=5) == Released(None)


async def test_a_desk_the_classifier_chose_is_not_held() -> None:
    """Only a handoff, an explicit switch or an admin pin starts a hold: a desk chosen by the
    classifier is an ordinary route."""
    sc = Playbook(make_config(HEUR, roster=DESK_ROSTER, **SHIPPED),
                  ScriptedClassifier({LONG: "humans", BILLING_MSG: "billing"}))
    got = await sc.play([LONG, BILLING_MSG])
    assert (got, sc.calls, sc.state()) == ([("humans", "classified"), ("billing", "keywords")], 1,
                                           ("billing", False, None, 0))


async def test_under_off_the_desks_done_is_the_only_signal_that_counts() -> None:
    sc = Playbook(make_config(OFF, roster=DESK_ROSTER), ScriptedClassifier())
    assert await sc.play(["/agent humans", LONG]) == [("humans", "explicit"), ("humans", "held")]
    assert sc.signal(Signal(SignalKind.DONE, "humans", "coder")) == Ignored(
        "auto_route is off (done with then is a handoff)")
    assert sc.signal(Signal(SignalKind.DONE, "humans")) == Released(None)
    assert (await sc.play([LONG]), sc.route()) == ([("general", "default")], None)


@pytest.mark.parametrize("strategy", [pytest.param(ONLY, id="explicit_only"), pytest.param(TTL, id="sticky_ttl")])
async def test_desk_hold_holds_under_the_cache_strategies(strategy: Strategy) -> None:
    sc = handed_to_desk(strategy)
    got = await sc.play([LONG, (TTL_S + MIN, LONG), (TTL_S + MIN, BILLING_MSG)])
    assert (got, sc.calls) == ([("humans", "handoff"), ("humans", "held"), ("humans", "held")], 0)


async def test_an_operator_reset_ends_the_hold_and_the_next_message_starts_a_session() -> None:
    """Through the real Router and state: a desk pinned by an operator (as the admin API writes
    it) holds; the operator's reset (the admin API's delete) ends it."""
    from tests.scenario import Scenario, key

    sc = Scenario(make_config(HEUR, roster=DESK_ROSTER, **SHIPPED), ScriptedClassifier("billing"))
    pinned = Route("humans", chosen_at=sc.now, last_active=sc.now, explicit=True, reason="admin", hold_s=HOLD_S)
    await sc.conversations.put(key(), pinned, sc.now)
    held = await sc.play([(60, BILLING_MSG), (TTL_S + MIN, BILLING_MSG)])
    await sc.conversations.delete(key(), sc.now)
    after = await sc.play([(60, BILLING_MSG)])
    assert (held, after, await sc.state()) == ([("humans", "held"), ("humans", "held")],
                                               [("billing", "keywords")], ("billing", False, None, 0))
