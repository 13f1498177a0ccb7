"""Task-scoped routes in the pure engine (issue #22): an agent's `done` releases the conversation's
route, so its next message is decided as a session's first message (Layer 2 from scratch, with
that decision's usual reason); the user's explicit pins are kept; `then` hands the conversation
to another agent (a handoff).

Each row: the signal's result (the route written, none for a release, or why it was ignored),
then the next messages' exact (agent, reason), the classifier calls and the route left behind as
(agent, explicit, candidate, counter) or None.
"""

from __future__ import annotations

from typing import Any

import pytest

from stickyroute.config.model import Strategy
from stickyroute.core.route import Route
from stickyroute.routing.signals import HANDOFF, Ignored, Released, Signal, SignalKind
from tests.routing.engine_cases import HEUR, LONG, OFF, ONLY, TTL
from tests.scenario import DESK_ROSTER, HOLD_S, Playbook, ScriptedClassifier, Step, key, make_config

BILLING_MSG = "I was charged twice, please refund my invoice"


IGNORED_AFTER = [("coder", "neutral"), ("coder", "divergence_pending")]
IGNORED_STATE = ("coder", False, "billing", 1)
"""An ignored `done` leaves coder's route: the billing message is one divergence (seed settings)."""


def done(then: str | None = None, sender: str = "coder") -> Signal:
    return Signal(SignalKind.DONE, sender, then)


def book(strategy: Strategy = HEUR, answers: Any = None, *, explicit: bool = False, reason: str | None = None,
         **settings: Any) -> Playbook:
    """coder's conversation on the `DESK_ROSTER` channel, a minute old."""
    sc = Playbook(make_config(strategy, roster=DESK_ROSTER, **settings), ScriptedClassifier(answers))
    route = sc.seed("coder", age_s=60, explicit=explicit)
    if reason is not None:
        sc.routes[key()] = route.because(reason)
    return sc


@pytest.mark.parametrize(
    ("strategy", "steps", "expected", "calls", "state"),
    [
        pytest.param(HEUR, [LONG, LONG], [("billing", "classified"), ("billing", "neutral")], 1,
                     ("billing", False, None, 0), id="sticky_heuristic-next-message-is-a-first-message"),
        pytest.param(TTL, [LONG, LONG], [("billing", "classified"), ("billing", "cache")], 1,
                     ("billing", False, None, 0), id="sticky_ttl-next-message-is-a-first-message"),
        pytest.param(ONLY, [LONG, LONG], [("billing", "classified"), ("billing", "cache")], 1,
                     ("billing", False, None, 0), id="explicit_only-next-message-is-a-first-message"),
        pytest.param(HEUR, ["ok", "fine by me", LONG],
                     [("general", "ack"), ("general", "short"), ("billing", "classified")], 1,
                     ("billing", False, None, 0), id="short-messages-go-to-the-default-meanwhile"),
    ],
)
async def test_release(strategy: Strategy, steps: list[Step], expected: list[tuple[str, str]], calls: int,
                       state: tuple[str, bool, str | None, int]) -> None:
    sc = book(strategy, {LONG: "billing"})
    assert sc.signal(done()) == Released(None)
    assert sc.route() is None
    got = await sc.play(steps)
    assert (got, sc.calls, sc.state()) == (expected, calls, state)


async def test_release_then_a_first_message_by_keywords_makes_no_call() -> None:
    sc = book(HEUR, None, first_message_margin=0)
    assert sc.signal(done()) == Released(None)
    got = await sc.play([BILLING_MSG])
    assert (got, sc.calls, sc.state()) == ([("billing", "keywords")], 0, ("billing", False, None, 0))


async def test_release_then_a_first_message_to_a_detour_agent_caches_nothing() -> None:
    sc = book(HEUR, {"is it going to rain today here": "weather"})
    assert sc.signal(done()) == Released(None)
    got = await sc.play(["is it going to rain today here"])
    assert (got, sc.calls, sc.state()) == ([("weather", "detour")], 1, None)


@pytest.mark.parametrize(
    ("strategy", "setup", "signal", "result", "after", "state"),
    [
        pytest.param(HEUR, {"explicit": True}, done(), Ignored("the user pinned the conversation explicitly"),
                     [("coder", "explicit_pin")], ("coder", True, None, 0), id="explicit-pin-is-kept"),
        pytest.param(ONLY, {"explicit": True}, done("billing"),
                     Ignored("the user pinned the conversation explicitly"), [("coder", "explicit_pin")],
                     ("coder", True, None, 0), id="explicit-pin-is-kept-with-then"),
        pytest.param(HEUR, {"explicit": True, "reason": "admin"}, done(),
                     Ignored("the user pinned the conversation explicitly"), [("coder", "explicit_pin")],
                     ("coder", True, None, 0), id="an-operators-pin-is-kept"),
        pytest.param(HEUR, {"explicit": True, "explicit_pin": False}, done(), Released(None),
                     [("billing", "classified")], ("billing", False, None, 0),
                     id="explicit-route-without-pinning-is-released"),
        pytest.param(HEUR, {}, done(sender="billing"), Ignored("stale: the conversation is now with coder"),
                     [("coder", "neutral")], ("coder", False, None, 0), id="another-agent-cannot-release-it"),
        pytest.param(OFF, {}, done(), Ignored("auto_route is off"), [("coder", "cache")],
                     ("coder", False, None, 0), id="ignored-under-off"),
        pytest.param(HEUR, {"agent_releases": False}, done(), Ignored("auto_route_agent_releases is false"),
                     [("coder", "neutral")], ("coder", False, None, 0), id="ignored-when-releases-are-off"),
    ],
)
async def test_release_vs_explicit_pin(strategy: Strategy, setup: dict[str, Any], signal: Signal,
                                       result: Released | Ignored, after: list[tuple[str, str]],
                                       state: tuple[str, bool, str | None, int]) -> None:
    sc = book(strategy, {LONG: "billing"}, **setup)
    assert sc.signal(signal) == result
    got = await sc.play([LONG])
    assert (got, sc.state()) == (after, state)


async def test_a_handoff_received_can_be_released_by_its_receiver() -> None:
    sc = book(HEUR, {LONG: "support"})
    assert isinstance(sc.signal(Signal(SignalKind.HANDOFF, "coder", "billing")), Route)
    assert await sc.play([LONG]) == [("billing", "handoff")]
    assert sc.signal(done(sender="billing"), after_s=5) == Released(None)
    assert (await sc.play([LONG]), sc.calls, sc.state()) == ([("support", "classified")], 1,
                                                             ("support", False, None, 0))


@pytest.mark.parametrize(
    ("then", "settings", "result", "after", "state"),
    [
        pytest.param("billing", {}, Released(Route("billing", 0.0, 0.0, reason=HANDOFF, hint=HANDOFF)),
                     [("billing", "handoff"), ("billing", "agreement")], ("billing", False, None, 0),
                     id="then-hands-over"),
        pytest.param("humans", {}, Released(Route("humans", 0.0, 0.0, reason=HANDOFF, hint=HANDOFF, hold_s=HOLD_S)),
                     [("humans", "handoff"), ("humans", "held")], ("humans", False, None, 0),
                     id="then-a-human-desk-starts-its-hold"),
        pytest.param("coder", {}, Ignored("a handoff names another agent"),
                     IGNORED_AFTER, IGNORED_STATE, id="then-itself"),
        pytest.param("translator", {}, Ignored("unknown or hidden agent 'translator' on channel telegram"),
                     IGNORED_AFTER, IGNORED_STATE, id="then-unknown"),
        pytest.param("billing", {"agent_handoffs": False}, Ignored("auto_route_agent_handoffs is false"),
                     IGNORED_AFTER, IGNORED_STATE,
                     id="then-while-handoffs-are-off"),
    ],
)
async def test_release_with_then(then: str, settings: dict[str, Any], result: Released | Ignored,
                                 after: list[tuple[str, str]], state: tuple[str, bool, str | None, int]) -> None:
    sc = book(HEUR, None, **settings)
    got = sc.signal(done(then))
    if isinstance(got, Released) and got.route is not None:  # the handoff route is written at the signal's time
        assert (got.route.chosen_at, got.route.last_active) == (sc.now, sc.now)
        got = Released(Route(got.route.agent, 0.0, 0.0, reason=got.route.reason, hint=got.route.hint,
                             hold_s=got.route.hold_s))
    assert got == result
    plays = await sc.play([LONG, BILLING_MSG])
    assert (plays, sc.calls, sc.state()) == (after, 0, state)


@pytest.mark.parametrize("strategy", [pytest.param(TTL, id="sticky_ttl"), pytest.param(ONLY, id="explicit_only")])
async def test_release_under_the_other_strategies_reclassifies_at_once(strategy: Strategy) -> None:
    sc = book(strategy, {BILLING_MSG: "billing"})
    assert sc.signal(done()) == Released(None)
    assert (await sc.play([BILLING_MSG]), sc.calls) == ([("billing", "classified")], 1)
