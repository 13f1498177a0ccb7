"""Per-agent `two_topic_confirm` (learned packs emit it): while the agent holds, a message whose
first sentence is its own business (no courtesy) and whose keywords' winner only comes up later
is confirmed by the classifier instead of switched by keywords alone."""

from __future__ import annotations

from dataclasses import replace

import pytest

from tests.routing.engine_cases import HEUR
from tests.scenario import Playbook, ScriptedClassifier, agent, agents, make_config

ROSTER = agents(
    agent("general"),
    agent("restaurant", keywords=("restaurant", "table")),
    agent("train", keywords=("train", "departing")),
)
SHIPPED = {"sticky_bonus": 6, "divergence_count": 1, "first_message_margin": 0, "keyword_switch_margin": 6,
           "contest_confirm": True}


def roster(on: str | None) -> dict:
    return agents(*(replace(a, two_topic_confirm=True) if a.name == on else a for a in ROSTER.values()))


@pytest.mark.parametrize(
    ("on", "text", "answer", "expected", "calls"),
    [
        pytest.param(None, "Seven altogether. And I need a train departing Friday.", "restaurant",
                     [("train", "keywords")], 0, id="without-the-rule-keywords-switch"),
        pytest.param("restaurant", "Seven altogether. And I need a train departing Friday.", "restaurant",
                     [("restaurant", "llm_rejected")], 1, id="a-second-topic-is-confirmed"),
        pytest.param("restaurant", "Seven altogether. And I need a train departing Friday.", "train",
                     [("train", "llm_confirmed")], 1, id="and-switches-when-the-classifier-says-so"),
        pytest.param("restaurant", "Seven altogether?And I need a train departing Friday.", "restaurant",
                     [("restaurant", "llm_rejected")], 1, id="a-question-mark-without-a-space-ends-a-sentence"),
        pytest.param("restaurant", "Thank you. I need a train departing Friday.", "restaurant",
                     [("train", "keywords")], 0, id="a-courtesy-first-sentence-does-not-count"),
        pytest.param("restaurant", "I need a train departing Friday. Seven of us.", "restaurant",
                     [("train", "keywords")], 0, id="the-winner-in-the-first-sentence-switches"),
        pytest.param("restaurant", "I need a train departing at 3.15 on Friday", "restaurant",
                     [("train", "keywords")], 0, id="one-sentence-a-number-is-no-sentence-end"),
        pytest.param("train", "Seven altogether. And I need a train departing Friday.", "restaurant",
                     [("train", "keywords")], 0, id="only-the-holders-flag-counts"),
    ],
)
async def test_a_second_topic_after_the_holders_business_is_confirmed(on, text, answer, expected, calls) -> None:
    sc = Playbook(make_config(HEUR, roster=roster(on), **SHIPPED), ScriptedClassifier(answer))
    sc.seed("restaurant", age_s=60)
    got = await sc.play([text])
    assert (got, sc.calls) == (expected, calls)


def test_explain_names_the_opening_sentence() -> None:
    from stickyroute.routing.explain import explain_outcome
    from stickyroute.routing.rules import build_rules

    config = make_config(HEUR, roster=roster("restaurant"), **SHIPPED)
    rules = build_rules(config, next(iter(config.channels.values())), lists_agents=True)
    lines = explain_outcome(rules, "Seven altogether. And I need a train departing Friday.", "restaurant")[0]
    plain = explain_outcome(rules, "Seven altogether. And I need a train departing Friday.", "train")[0]
    assert [line for line in lines if line.startswith("two topics")] == [
        "two topics: restaurant has two_topic_confirm and the message opens with 'Seven altogether.': a switch by "
        "keywords needs its winner at the threshold there, else the classifier confirms"]
    assert [line for line in plain if line.startswith("two topics")] == []
