"""The gate check for the classifier the packs run with (issue #22): with an LLM a confirmation is
a call (at `call_cost`) that gets the message right, with the keyword classifier it is the same
keywords deciding; confirm keywords ask, never decide alone; CLINC150 splits by intent examples."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from stickyroute.cli.main import main
from stickyroute.learn import LearnSettings
from stickyroute.learn.gate import GateRules, verdict
from stickyroute.learn.holdout import split_by_intent
from stickyroute.learn.selection import Candidate, GateCheck, ScoredMessage
from stickyroute.replay.cli import RECOMMENDED
from stickyroute.replay.corpus import Conversation, Turn

RULES = GateRules.from_settings(RECOMMENDED)
CANDIDATES = [Candidate("station", "taxi", 3), Candidate("the station", "taxi", 2)]
S, TS = 0, 1
MESSAGES = [
    ScoredMessage("hotel", "hotel", (S,), answer="hotel"),      # "is the hotel near a station?": still hotel
    ScoredMessage("hotel", "taxi", (S, TS), answer="taxi"),     # "a taxi to the station": a switch to taxi
    ScoredMessage("hotel", "taxi", (S, TS), answer="taxi"),
]


def gate(llm: bool, call_cost: float = 0.5) -> GateCheck:
    return GateCheck(CANDIDATES, MESSAGES, RULES, "default", [0, 0], [[1], [0]], 1.0, 1.0, llm=llm,
                     call_cost=call_cost, confirm_role=True)


@pytest.mark.parametrize(
    ("scores", "current", "answer", "decisive", "expected"),
    [
        pytest.param({"taxi": 6}, None, "hotel", None, ("taxi", False), id="first-message-keyword-winner"),
        pytest.param({"taxi": 6}, None, "hotel", {}, ("hotel", True), id="first-message-on-confirm-keywords-asks"),
        pytest.param({}, None, None, None, (None, True), id="first-message-nothing-asks-none"),
        pytest.param({"taxi": 6}, "hotel", "hotel", None, ("hotel", True), id="a-tie-asks-the-llm"),
        pytest.param({"taxi": 12}, "hotel", "hotel", None, ("taxi", False), id="a-margin-switches-alone"),
        pytest.param({"taxi": 12}, "hotel", "hotel", {"taxi": 6}, ("hotel", True),
                     id="a-margin-on-confirm-keywords-asks"),
    ],
)
def test_verdict_with_an_llm(scores, current, answer, decisive, expected) -> None:
    assert verdict(scores, current, RULES, answer, decisive) == expected


def test_with_an_llm_a_confirmation_costs_a_call_and_is_right() -> None:
    keywords, llm = gate(False), gate(True)
    assert (keywords.total, llm.total) == (1.0, 1.0)  # nothing on: stay on hotel, once right
    assert (keywords.gain(S, 6), llm.gain(S, 6)) == (0.0, 0.5)  # ties: the keyword classifier switches all three
    assert gate(True, call_cost=0.0).gain(S, 6) == 2.0
    llm.set(S, 6)
    assert (llm.gain(TS, 6), llm.gain(TS, 6, confirm=True)) == (1.0, 0.0)  # a margin switches without calls


def test_selection_keeps_what_pays_for_its_calls() -> None:
    chosen = gate(True)
    chosen.select(min_gain=0.5)
    assert (chosen.weights, chosen.confirm, chosen.total) == ([6, 6], [False, False], 2.5)


def test_the_shipped_settings_per_classifier() -> None:
    assert LearnSettings.for_classifier(False) == LearnSettings()
    assert LearnSettings.for_classifier(True) == replace(LearnSettings(), llm_judge=True, call_cost=0.5,
                                                         overlap_min_gain=2.0, two_topic_all=True,
                                                         max_sticky_offset=0)


def test_split_by_intent_puts_part_of_every_intent_on_each_side() -> None:
    conversations = [Conversation(f"{intent}{i}", (Turn(f"text {i}", "travel", intent=intent),))
                     for intent in ("translate", "flight_status") for i in range(4)]
    learning, held = split_by_intent(conversations, 0.5, 0)
    intents = [sorted({c.turns[0].intent for c in part}) for part in (learning, held)]
    assert (len(learning), len(held), intents[0], intents[1], {c.id for c in learning} & {c.id for c in held}) == (
        4, 4, ["flight_status", "translate"], ["flight_status", "translate"], set())


def test_learn_takes_the_classifier_and_the_split(tmp_path, capsys) -> None:
    corpus, agents = Path("eval/corpus/dev_clinc.jsonl"), Path("eval/corpus/agents_clinc.toml")
    code = main(["learn", str(corpus), "--agents", str(agents), "--out", str(tmp_path), "--holdout-fraction", "0.5",
                 "--split", "intent", "--classifier", "keywords"])
    out = capsys.readouterr().out
    assert code == 0
    assert "held out: 493 conversations, 493 messages (seed 0, split by intent); settings: recommended (the " \
           "shipped ones); packs learned for the keyword classifier" in out
