"""Detours in the pure engine (issue #22): a message that keywords or the classifier send to a
non-sticky agent (`sticky = false`) goes there with reason `detour` while the conversation's
route stays with the previous agent, its divergence counter untouched; the next message goes
back without a classifier call unless it diverges on its own. An explicit `/agent <non-sticky>`
(or a handoff) still moves the route.

Every row states the exact (agent, reason) of each decision, the classifier calls and the route
left behind as (agent, explicit, candidate, counter) or None.
"""

from __future__ import annotations

from typing import Any

import pytest

from stickyroute.config.model import AgentHints, Strategy
from stickyroute.core.route import Route
from stickyroute.routing.signals import Signal, SignalKind
from tests.routing.engine_cases import ALL_STRATEGIES, HEUR, LONG, ONLY, TTL
from tests.scenario import DESK_ROSTER, MIN, Playbook, ScriptedClassifier, Step, key, make_config

WEATHER = "will it rain tomorrow, do I need an umbrella"
"""Two weather keywords (12 points): a divergence toward the non-sticky `weather` agent."""
WEATHER_AGAIN = "and what is the forecast for the weekend"
BILLING_MSG = "I was charged twice, please refund my invoice"
"""Three billing keywords (18 points)."""
ASK_FIRST = {"divergence_count": 1}
"""sticky_heuristic asks the classifier at the first divergent message (as shipped)."""


def book(strategy: Strategy = HEUR, answers: Any = None, seed: dict[str, Any] | None = None,
         **settings: Any) -> Playbook:
    """The `DESK_ROSTER` channel under `strategy`; `seed`: a route written first (Playbook.seed)."""
    sc = Playbook(make_config(strategy, roster=DESK_ROSTER, **settings), ScriptedClassifier(answers))
    if seed is not None:
        sc.seed(**seed)
    return sc


CODER = {"agent_": "coder", "age_s": 60}
"""coder's route, a minute old."""


@pytest.mark.parametrize(
    ("strategy", "seed", "settings", "steps", "answers", "expected", "calls", "state"),
    [
        pytest.param(HEUR, CODER, ASK_FIRST, [WEATHER, LONG], {WEATHER: "weather"},
                     [("weather", "detour"), ("coder", "neutral")], 1, ("coder", False, None, 0),
                     id="classifier-detour-then-back-without-a-call"),
        pytest.param(HEUR, CODER, ASK_FIRST, [WEATHER, WEATHER_AGAIN], "weather",
                     [("weather", "detour"), ("weather", "detour")], 2, ("coder", False, None, 0),
                     id="a-message-that-diverges-on-its-own-detours-again"),
        pytest.param(HEUR, CODER, {**ASK_FIRST, "keyword_switch_margin": 6}, [WEATHER, LONG], None,
                     [("weather", "detour"), ("coder", "neutral")], 0, ("coder", False, None, 0),
                     id="keywords-alone-detour-without-a-call"),
        pytest.param(HEUR, None, {"first_message_margin": 0}, [WEATHER, LONG], {LONG: "coder"},
                     [("weather", "detour"), ("coder", "classified")], 1, ("coder", False, None, 0),
                     id="first-message-by-keywords-caches-nothing"),
        pytest.param(HEUR, None, {}, [WEATHER, LONG], {WEATHER: "weather", LONG: "coder"},
                     [("weather", "detour"), ("coder", "classified")], 2, ("coder", False, None, 0),
                     id="first-message-by-the-classifier-caches-nothing"),
        pytest.param(ONLY, None, {}, [WEATHER, LONG, WEATHER], {WEATHER: "weather", LONG: "coder"},
                     [("weather", "detour"), ("coder", "classified"), ("coder", "cache")], 2,
                     ("coder", False, None, 0), id="explicit_only-first-message-detour"),
        pytest.param(TTL, {"agent_": "coder", "age_s": 31 * MIN, "idle_s": 60}, {}, [WEATHER, (60, LONG)],
                     "weather", [("weather", "detour"), ("coder", "cache")], 1, ("coder", False, None, 0),
                     id="sticky_ttl-reclassified-detour-restarts-the-window"),
        pytest.param(HEUR, CODER, ASK_FIRST, [WEATHER], "coder", [("coder", "llm_rejected")], 1,
                     ("coder", False, None, 0), id="classifier-keeps-the-current-agent-no-detour"),
    ],
)
async def test_detour_and_return(strategy: Strategy, seed: dict[str, Any] | None, settings: dict[str, Any],
                                 steps: list[Step], answers: Any, expected: list[tuple[str, str]], calls: int,
                                 state: tuple[str, bool, str | None, int] | None) -> None:
    sc = book(strategy, answers, seed, **settings)
    got = await sc.play(steps)
    assert (got, sc.calls, sc.state()) == (expected, calls, state)


async def test_detour_keeps_the_route_version_and_reason() -> None:
    """The route left by a detour is the previous one, refreshed: same agent, same version (what
    an agent signal refers to), same reason; only its inactivity TTL moves."""
    sc = book(HEUR, {WEATHER: "weather"}, None, **ASK_FIRST)
    before = Route("coder", chosen_at=sc.now - 60, last_active=sc.now - 60, reason="classified")
    sc.routes[key()] = before
    decision = await sc.send(WEATHER, 30)
    assert (decision.agent, decision.reason, decision.switched, decision.store) == (
        "weather", "detour", False, Route("coder", chosen_at=before.chosen_at, last_active=sc.now,
                                          reason="classified"))


@pytest.mark.parametrize(
    ("seed", "settings", "steps", "expected", "calls", "state"),
    [
        pytest.param({"agent_": "coder", "age_s": 60, "candidate": "billing", "counter": 1},
                     {"divergence_count": 2, "early_confirm_margin": 6}, [WEATHER],
                     [("weather", "detour")], 1, ("coder", False, "billing", 1),
                     id="detour-leaves-a-pending-candidate-and-counter"),
        pytest.param({"agent_": "coder", "age_s": 60, "candidate": "billing", "counter": 1},
                     {"divergence_count": 2, "early_confirm_margin": 6}, [WEATHER, BILLING_MSG],
                     [("weather", "detour"), ("billing", "llm_confirmed")], 2, ("billing", False, None, 0),
                     id="the-counter-survives-the-detour-and-completes"),
        pytest.param({"agent_": "coder", "age_s": 60, "candidate": "billing", "counter": 1},
                     {"divergence_count": 2, "keyword_switch_margin": 6}, [WEATHER],
                     [("weather", "detour")], 0, ("coder", False, "billing", 1),
                     id="keyword-detour-leaves-the-counter-too"),
        pytest.param({"agent_": "coder", "age_s": 60}, {"divergence_count": 2}, [WEATHER, WEATHER_AGAIN],
                     [("coder", "divergence_pending"), ("weather", "detour")], 1, ("coder", False, "weather", 1),
                     id="divergence-toward-weather-detours-and-keeps-the-count-before-it"),
    ],
)
async def test_detour_vs_divergence(seed: dict[str, Any], settings: dict[str, Any], steps: list[Step],
                                    expected: list[tuple[str, str]], calls: int,
                                    state: tuple[str, bool, str | None, int]) -> None:
    answers = {WEATHER: "weather", WEATHER_AGAIN: "weather", BILLING_MSG: "billing"}
    sc = book(HEUR, answers, seed, **settings)
    got = await sc.play(steps)
    assert (got, sc.calls, sc.state()) == (expected, calls, state)


async def test_hint_confirmation_that_lands_on_a_detour_agent_spends_the_hint() -> None:
    sc = book(HEUR, {LONG: "weather"}, CODER, agent_hints=AgentHints.CONFIRM)
    assert isinstance(sc.signal(Signal(SignalKind.NOT_MINE, "coder")), Route)
    got = await sc.play([LONG, LONG])
    assert (got, sc.calls, sc.state(), sc.route().hint if sc.route() else "gone") == (
        [("weather", "detour"), ("coder", "neutral")], 1, ("coder", False, None, 0), None)


@pytest.mark.parametrize("strategy", ALL_STRATEGIES)
@pytest.mark.parametrize(
    ("command", "expected"),
    [
        pytest.param("/agent weather", [("weather", "explicit"), ("weather", "explicit_pin")], id="slash-agent"),
        pytest.param("@weather how are things", [("weather", "explicit"), ("weather", "explicit_pin")],
                     id="mention"),
    ],
)
async def test_explicit_pin_of_a_non_sticky_agent(strategy: Strategy, command: str,
                                                  expected: list[tuple[str, str]]) -> None:
    sc = book(strategy, "coder", CODER)
    got = await sc.play([command, BILLING_MSG])
    assert (got, sc.calls, sc.state()) == (expected, 0, ("weather", True, None, 0))


async def test_a_handoff_to_a_non_sticky_agent_moves_the_route() -> None:
    sc = book(HEUR, None, CODER)
    assert isinstance(sc.signal(Signal(SignalKind.HANDOFF, "coder", "weather")), Route)
    got = await sc.play([LONG, LONG])
    assert (got, sc.calls, sc.state()) == ([("weather", "handoff"), ("weather", "neutral")], 0,
                                           ("weather", False, None, 0))
