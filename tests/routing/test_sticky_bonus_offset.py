"""Per-agent `sticky_bonus_offset` (learned packs emit it): points added to `sticky_bonus` while
that agent holds the route. One keyword of another agent then no longer ties the holder (no
contest confirmation); a switch by keywords alone needs the larger lead; a first message (no
route) is unaffected."""

from __future__ import annotations

from dataclasses import replace

import pytest

from stickyroute.routing.explain import explain_outcome
from stickyroute.routing.rules import build_rules
from tests.routing.engine_cases import HEUR
from tests.scenario import Playbook, ScriptedClassifier, agent, agents, make_config

ROSTER = agents(
    agent("general"),
    agent("hotel", keywords=("hotel", "guesthouse", "stars")),
    agent("taxi", keywords=("taxi", "cab")),
)
SHIPPED = {"sticky_bonus": 6, "divergence_count": 1, "first_message_margin": 0, "keyword_switch_margin": 6,
           "contest_confirm": True}


def roster(taxi_offset: int) -> dict:
    return agents(*(replace(a, sticky_bonus_offset=taxi_offset) if a.name == "taxi" else a for a in ROSTER.values()))


@pytest.mark.parametrize(
    ("offset", "text", "answer", "expected", "calls"),
    [
        pytest.param(0, "from the hotel please", "hotel", [("hotel", "llm_confirmed")], 1,
                     id="without-offset-one-keyword-ties-and-is-confirmed"),
        pytest.param(1, "from the hotel please", "hotel", [("taxi", "neutral")], 0,
                     id="an-offset-holds-against-one-keyword"),
        pytest.param(0, "a guesthouse with stars", "hotel", [("hotel", "keywords")], 0,
                     id="without-offset-a-lead-of-6-switches-by-keywords"),
        pytest.param(1, "a guesthouse with stars", "hotel", [("hotel", "llm_confirmed")], 1,
                     id="an-offset-turns-that-lead-into-a-confirmation"),
        pytest.param(1, "a guesthouse with stars", "taxi", [("taxi", "llm_rejected")], 1,
                     id="and-the-classifier-may-keep-the-holder"),
        pytest.param(1, "a guesthouse with stars at the hotel", "hotel", [("hotel", "keywords")], 0,
                     id="a-lead-of-6-over-the-larger-bonus-still-switches"),
    ],
)
async def test_an_offset_raises_the_holders_bonus(offset, text, answer, expected, calls) -> None:
    sc = Playbook(make_config(HEUR, roster=roster(offset), **SHIPPED), ScriptedClassifier(answer))
    sc.seed("taxi", age_s=60)
    got = await sc.play([text])
    assert (got, sc.calls) == (expected, calls)


async def test_an_offset_only_counts_for_the_agent_holding_the_route() -> None:
    sc = Playbook(make_config(HEUR, roster=roster(6), **SHIPPED), ScriptedClassifier("taxi"))
    sc.seed("hotel", age_s=60)
    first = await sc.play(["a taxi and a cab now"])  # hotel holds: its bonus is the plain 6
    fresh = Playbook(make_config(HEUR, roster=roster(6), **SHIPPED), ScriptedClassifier("taxi"))
    opening = await fresh.play(["a room at the hotel please"])  # no route: no bonus at all
    assert (first, sc.calls, opening, fresh.calls) == ([("taxi", "keywords")], 0, [("hotel", "keywords")], 0)


def test_rules_and_explain_carry_the_offset() -> None:
    config = make_config(HEUR, roster=roster(2), **SHIPPED)
    channel = next(iter(config.channels.values()))
    rules = build_rules(config, channel, lists_agents=True)
    lines = explain_outcome(rules, "from the hotel please", "taxi")[0]
    assert (dict(rules.sticky_offsets), rules.sticky_bonus("taxi"), rules.sticky_bonus("hotel")) == ({"taxi": 2}, 8, 6)
    assert [line for line in lines if "(current)" in line] == ["  taxi       0 + bonus 8 = 8  (current)"]
