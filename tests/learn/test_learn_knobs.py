"""The routing knobs a learned pack sets for its agent: `sticky_bonus_offset` and
`two_topic_confirm`, valued as the gate check values keywords, and chosen by a validation loop
(keywords learned on the other folds, the knobs measured on each)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from stickyroute.config.rulepack import load_rule_pack
from stickyroute.learn import LearnSettings
from stickyroute.learn.gate import GateRules, verdict
from stickyroute.learn.labels import from_corpus
from stickyroute.learn.learner import learn
from stickyroute.learn.offsets import Knobs, choose_knobs, fold_of
from stickyroute.learn.pack import render_pack
from stickyroute.learn.proposals import Seeds
from stickyroute.learn.selection import Candidate, GateCheck, ScoredMessage
from stickyroute.replay.cli import RECOMMENDED
from stickyroute.replay.corpus import Conversation, Turn

RULES = GateRules.from_settings(RECOMMENDED)


def conv(cid: str, *turns: tuple[str, str]) -> Conversation:
    return Conversation(cid, tuple(Turn(text, gold, False) for text, gold in turns))


@pytest.mark.parametrize(
    ("opening", "expected"),
    [
        pytest.param(None, ("train", False), id="no-opening-sentence-the-margin-switches"),
        pytest.param({}, ("restaurant", True), id="an-opening-without-the-winner-is-confirmed"),
        pytest.param({"restaurant": 6}, ("restaurant", True), id="an-opening-of-the-holder-is-confirmed"),
        pytest.param({"train": 6}, ("train", False), id="an-opening-with-the-winner-switches"),
    ],
)
def test_verdict_with_a_two_topic_opening(opening, expected) -> None:
    assert verdict({"train": 12}, "restaurant", RULES, "restaurant", None, opening) == expected


def test_verdict_with_a_sticky_bonus_offset() -> None:
    offset = replace(RULES, sticky_offsets=(("taxi", 1),))
    # one hotel keyword on a taxi route: a tie with the bonus (the keyword classifier says hotel),
    # beaten by the holder with one more point; a hotel route keeps the plain bonus
    assert (verdict({"hotel": 6}, "taxi", RULES), verdict({"hotel": 6}, "taxi", offset),
            verdict({"taxi": 6}, "hotel", offset), offset.bonus("taxi"), offset.bonus("hotel")) == (
        ("hotel", True), ("taxi", False), ("taxi", True), 7, 6)


def test_an_offset_is_valued_like_a_keyword() -> None:
    candidates = [Candidate("hotel", "hotel", 3)]
    messages = [ScoredMessage("taxi", "taxi", (0,)), ScoredMessage("taxi", "taxi", (0,)),  # "leaving the hotel"
                ScoredMessage("taxi", "hotel", (0,)),  # "and a hotel": a switch
                ScoredMessage("hotel", "hotel", (0,))]
    gate = GateCheck(candidates, messages, RULES, "default", [6], [[]])
    # without: two false switches (-1 each), the switch right (+1), hotel's own message right (+1);
    # offset 1 on taxi: the two stay (+1 each), the switch is missed (0, it does not move the route)
    assert (gate.total, gate.offset_gain("taxi", 1), gate.offset_gain("taxi", 6), gate.offset_gain("hotel", 1)) == (
        0.0, 3.0, 3.0, 0.0)
    gate.set_offset("taxi", 1)
    assert (gate.total, gate.offsets) == (3.0, {"taxi": 1})


def test_the_two_topic_rule_is_valued_like_a_keyword() -> None:
    candidates = [Candidate("train", "train", 3), Candidate("a train", "train", 3)]
    messages = [
        ScoredMessage("restaurant", "restaurant", (0, 1), answer="restaurant", opening=()),  # "Seven. And a train."
        ScoredMessage("restaurant", "train", (0, 1), answer="train", opening=()),  # "Great news. A train to Ely."
        ScoredMessage("restaurant", "train", (0, 1), answer="train"),  # "I also need a train": one sentence
    ]
    gate = GateCheck(candidates, messages, RULES, "default", [6, 6], [[], []], llm=True, call_cost=0.5)
    # on: the false switch (-1) becomes a call that stays (+0.5), the second switch a call (+1 -> +0.5)
    assert (gate.total, gate.two_topic_gain("restaurant"), gate.two_topic_gain("train")) == (1.0, 1.0, 0.0)
    gate.set_two_topic("restaurant")
    assert (gate.total, gate.two_topic, gate.two_topic_gain("restaurant", on=False)) == (
        2.0, frozenset({"restaurant"}), -1.0)


def test_folds_are_by_conversation_id() -> None:
    assert [fold_of(c, 2) for c in ("t1", "t2", "t5", "a", "b")] == [0, 0, 1, 1, 1]


TAXI_CORPUS = [conv(cid, ("I need a taxi to the station please", "taxi"),
                    ("I am leaving from the hotel at noon", "taxi"))
               for cid in ("t1", "t2", "t5", "a")]


def test_the_validation_loop_measures_on_folds_the_lists_were_not_learned_on() -> None:
    seen: list[list[str]] = []

    def lists(part):
        seen.append([c.id for c in part])
        return {"hotel": (["hotel"], [], []), "taxi": (["taxi"], [], [])}

    knobs = choose_knobs(from_corpus(TAXI_CORPUS, {"hotel", "taxi"}), ("hotel", "taxi"), lists, RULES, "default",
                         folds=2, most=3, min_gain=1.0)
    # 4 "leaving from the hotel" turns on taxi routes: each a false switch (-1) without, right (+1)
    # with any offset from 1: +8 summed over both folds; the smallest offset wins the tie
    assert (knobs, seen) == (Knobs({"taxi": (1, 8.0)}, {}), [["t5", "a"], ["t1", "t2"]])
    assert choose_knobs(from_corpus(TAXI_CORPUS, {"hotel", "taxi"}), ("hotel", "taxi"), lists, RULES, "default",
                        folds=2, most=3, min_gain=9.0) == Knobs({}, {})
    with pytest.raises(ValueError, match="validation folds must be at least 2, got 1"):
        choose_knobs([], ("taxi",), lists, RULES, "default", folds=1, most=3, min_gain=1.0)


SEEDS = {"hotel": Seeds(("hotel",)), "taxi": Seeds(("taxi",))}


PLACES = {"t1": "collect me at the hotel lensfield", "t2": "gonville hotel, before five",
          "t5": "from worth house hotel", "a": "meet outside arbury hotel"}
HOTEL_AND_TAXI = [conv(cid, ("I need a taxi to the station please", "taxi"), (text, "taxi"))
                  for cid, text in PLACES.items()] + [conv(f"h{i}", (text, "hotel")) for i, text in enumerate(
                      ("a hotel in the north", "hotel with parking", "any cheap hotel around", "hotel near the river",
                       "is there a hotel with wifi", "hotel for two nights"))]


def test_learn_writes_the_knobs_into_the_packs_and_they_load(tmp_path) -> None:
    small = LearnSettings(min_z=0.0, candidate_z=0.0, min_gain=1.0, min_strong_messages=2, offset_min_gain=1.0)
    hotel, taxi = learn(from_corpus(HOTEL_AND_TAXI, set(SEEDS)), SEEDS, RECOMMENDED, "default", small)
    # the place names differ, so no fold's keywords hold the taxi route on another fold's: learned
    # on fold 1 (hotel in 4 of 6 messages: strong), fold 0's two place turns go from a false switch
    # to right (+2 each); learned on fold 0 (hotel in 2 of 4: weak), nothing ties: 0
    assert ((hotel.sticky_bonus_offset, hotel.two_topic_confirm, [k.spelling for k in hotel.keywords]),
            (taxi.sticky_bonus_offset, taxi.offset_effect, taxi.two_topic_confirm)) == (
        (0, False, ["hotel"]), (1, 4.0, False))
    path = tmp_path / "taxi.toml"
    path.write_text(render_pack(taxi, "test"), encoding="utf-8")
    pack = load_rule_pack(path)
    assert (pack.sticky_bonus_offset, pack.two_topic_confirm) == (1, None)
    assert "# Extra sticky bonus while taxi holds a route: one keyword of another agent no longer ties it (gate +4)" \
        in path.read_text(encoding="utf-8")
    without = learn(from_corpus(HOTEL_AND_TAXI, set(SEEDS)), SEEDS, RECOMMENDED, "default",
                    replace(small, max_sticky_offset=0))
    assert [p.sticky_bonus_offset for p in without] == [0, 0]


def test_packs_for_an_llm_confirm_two_topics_on_every_agent(tmp_path) -> None:
    settings = replace(LearnSettings.for_classifier(True), min_z=0.0, candidate_z=0.0, min_gain=1.0,
                       min_strong_messages=2)
    packs = learn(from_corpus(TAXI_CORPUS, set(SEEDS)), SEEDS, RECOMMENDED, "default", settings)
    assert [(p.agent, p.two_topic_confirm) for p in packs] == [("hotel", True), ("taxi", True)]
    path = tmp_path / "hotel.toml"
    path.write_text(render_pack(packs[0], "test"), encoding="utf-8")
    assert load_rule_pack(path).two_topic_confirm is True


def test_the_learn_summary_names_the_knobs() -> None:
    from stickyroute.cli.learn import _knobs
    from stickyroute.learn.learner import LearnedPack

    assert [_knobs(LearnedPack("taxi", (), (), (), 0, (), *knobs)) for knobs in (
        (0, 0.0, False, 0.0), (2, 8.0, False, 0.0), (0, 0.0, True, 0.0), (1, 4.0, True, 3.0))] == [
        "", "; sticky_bonus_offset 2", "; two_topic_confirm", "; sticky_bonus_offset 1, two_topic_confirm"]
