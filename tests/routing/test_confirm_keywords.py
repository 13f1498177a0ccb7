"""Confirm keywords (issue #22: learned packs may mark words that are right often enough to ask the
classifier, not to decide): they score like strong keywords for divergence, agreement and the
classifier's view, but a decision by keywords alone (a first message's winner, a switch by margin)
needs its lead without them; the keyword classifier reads the decisive scores."""

from __future__ import annotations

from typing import Any

import pytest

from stickyroute.classifier.keywords import KeywordClassifier
from stickyroute.routing.keywords import AgentKeywords, KeywordScorer
from tests.routing.engine_cases import HEUR
from tests.scenario import Playbook, ScriptedClassifier, agent, agents, make_config

ROSTER = agents(
    agent("general"),
    agent("hotel", keywords=("hotel", "guesthouse")),
    agent("taxi", keywords=("taxi",), weak=("ride",)),
)
SHIPPED = {"sticky_bonus": 6, "divergence_count": 1, "first_message_margin": 0, "keyword_switch_margin": 6,
           "contest_confirm": True}


def with_confirm(*words: str, who: str = "taxi") -> Any:
    """ROSTER with `words` as `who`'s confirm keywords."""
    from dataclasses import replace

    return agents(*(replace(a, confirm_keywords=words) if a.name == who else a for a in ROSTER.values()))


def test_confirm_keywords_score_but_are_not_decisive() -> None:
    scorer = KeywordScorer([AgentKeywords("taxi", ("taxi",), ("ride",), ("cab", "taxi", "pick me up")),
                            AgentKeywords("hotel", ("hotel",))])
    text = "a taxi or a cab, pick me up at the hotel, a ride"
    assert (scorer.scores(text), scorer.decisive(text), scorer.confirming,
            KeywordScorer([AgentKeywords("hotel", ("hotel",))]).confirming) == (
        {"taxi": 6 + 6 + 6 + 1, "hotel": 6}, {"taxi": 7, "hotel": 6}, True, False)


@pytest.mark.parametrize(
    ("confirm", "text", "expected", "calls"),
    [
        pytest.param((), "I need a cab and a car to the station", [("taxi", "classified")], 1,
                     id="without-keywords-it-asks"),
        pytest.param(("cab", "car"), "I need a cab and a car to the station", [("taxi", "classified")], 1,
                     id="confirm-keywords-alone-still-ask"),
        pytest.param(("cab",), "a taxi please, and a cab", [("taxi", "keywords")], 0,
                     id="a-decisive-lead-decides"),
        pytest.param(("cab",), "a taxi with a cab to the guesthouse", [("taxi", "classified")], 1,
                     id="a-confirm-keyword-cannot-break-a-tie"),
    ],
)
async def test_a_first_message_is_decided_by_decisive_keywords_only(confirm, text, expected, calls) -> None:
    sc = Playbook(make_config(HEUR, roster=with_confirm(*confirm), **SHIPPED), ScriptedClassifier("taxi"))
    got = await sc.play([text])
    assert (got, sc.calls) == (expected, calls)


@pytest.mark.parametrize(
    ("confirm", "text", "answer", "expected", "calls"),
    [
        pytest.param(("cab", "pick me up"), "a cab to pick me up please", "hotel", [("hotel", "llm_rejected")], 1,
                     id="a-switch-resting-on-confirm-keywords-is-confirmed"),
        pytest.param(("cab",), "a taxi and a cab now", "hotel", [("hotel", "llm_rejected")], 1,
                     id="half-the-margin-from-confirm-keywords-is-confirmed"),
        pytest.param((), "a taxi, the taxi, with a ride", "hotel", [("taxi", "keywords")], 0,
                     id="without-confirm-keywords-the-margin-switches"),
    ],
)
async def test_a_keyword_switch_needs_its_margin_without_confirm_keywords(confirm, text, answer, expected,
                                                                         calls) -> None:
    roster = with_confirm(*confirm) if confirm else agents(*(
        a if a.name != "taxi" else agent("taxi", keywords=("taxi", "ride"), weak=()) for a in ROSTER.values()))
    sc = Playbook(make_config(HEUR, roster=roster, **SHIPPED), ScriptedClassifier(answer))
    sc.seed("hotel", age_s=60)
    got = await sc.play([text])
    assert (got, sc.calls) == (expected, calls)


def test_the_keyword_classifier_on_decisive_scores_never_decides_on_confirm_keywords_alone() -> None:
    scorer = KeywordScorer([AgentKeywords("taxi", ("taxi",), (), ("cab",)), AgentKeywords("hotel", ("hotel",))])
    classifier = KeywordClassifier(scorer.decisive, 6)
    assert (classifier.choose("a cab please", ("taxi", "hotel")), classifier.choose("a taxi please", ("taxi", "hotel"))
            ) == (None, "taxi")
