"""The gate check: weights chosen by the decisions they change on the learning messages."""

from __future__ import annotations

from stickyroute.learn.gate import GateRules
from stickyroute.learn.proposals import related_candidates
from stickyroute.learn.selection import Candidate, GateCheck, ScoredMessage
from stickyroute.learn.terms import sub_terms
from stickyroute.replay.cli import RECOMMENDED

RULES = GateRules.from_settings(RECOMMENDED)
CANDIDATES = [Candidate("guesthouse", "hotel", 3), Candidate("station", "taxi", 3), Candidate("the station", "taxi", 2)]
G, S, TS = 0, 1, 2
MESSAGES = [
    ScoredMessage(None, "hotel", (G,)),           # three first messages about a guesthouse
    ScoredMessage(None, "hotel", (G,)),
    ScoredMessage(None, "hotel", (G,)),
    ScoredMessage("hotel", "hotel", (S,)),        # "is the hotel near a station?": still hotel
    ScoredMessage("hotel", "taxi", (S, TS)),      # "a taxi to the station": two switches to taxi
    ScoredMessage("hotel", "taxi", (S, TS)),
]


def check(initial=(0, 0, 0), penalty: float = 1.0) -> GateCheck:
    related = related_candidates(CANDIDATES, {c.term: sub_terms(c.term) for c in CANDIDATES})
    return GateCheck(CANDIDATES, MESSAGES, RULES, "default", list(initial), related, penalty)


def test_related_candidates_are_phrases_and_the_terms_inside_them() -> None:
    assert related_candidates(CANDIDATES, {c.term: sub_terms(c.term) for c in CANDIDATES}) == [[], [2], [1]]


def test_values_and_gains_count_right_decisions_and_penalise_wrong_moves() -> None:
    gate = check()
    assert gate.total == 1.0  # only the continuation is right (it stays on hotel)
    assert gate.gain(G, 6) == 3.0  # three first messages now reach hotel
    assert gate.gain(S, 6) == 0.0  # two switches won, one continuation lost: +1 +1 -(1 + penalty 1)
    assert gate.gain(S, 1) == 0.0  # a weak keyword alone never moves a route
    assert check(penalty=0.0).gain(S, 6) == 1.0
    assert gate.gain(TS, 6) == 2.0


def test_select_keeps_what_wins_enough_and_never_overlaps() -> None:
    gate = check()
    gate.select(min_gain=2.0)
    assert gate.weights == [6, 0, 6]
    assert gate.total == 6.0
    assert [gate.gate_effect(c) for c in range(3)] == [3.0, 0.0, 2.0]


def test_select_turns_off_a_starting_keyword_that_loses_and_respects_min_gain() -> None:
    gate = check(initial=(0, 6, 0))
    gate.select(min_gain=3.0)  # "the station" would win 2: not enough to go on
    assert gate.weights == [6, 6, 0]  # "station" breaks even: kept as it started
    gate = check(initial=(0, 6, 0), penalty=2.0)
    gate.select(min_gain=3.0)
    assert gate.weights == [6, 0, 0]  # with a heavier penalty "station" loses: turned off


# "I need a taxi from the hotel" while on hotel: "taxi" alone ties nothing (6 against 6 + bonus 6),
# "a taxi" beside it scores taxi 12, a tie that is confirmed; one taxi message on hotel's route
# that is still hotel's ("is a taxi rank near the hotel?") then switches falsely; five first
# messages need "hotel".
OVERLAP = [Candidate("hotel", "hotel", 9), Candidate("taxi", "taxi", 9), Candidate("a taxi", "taxi", 4)]
HOTEL, TAXI, A_TAXI = 0, 1, 2
SWITCHES = [ScoredMessage("hotel", "taxi", (HOTEL, TAXI, A_TAXI))] * 4
RANK = [ScoredMessage("hotel", "hotel", (HOTEL, TAXI, A_TAXI))] + [ScoredMessage(None, "hotel", (HOTEL,))] * 5


def overlap_check(messages, overlap_min_gain) -> GateCheck:
    related = related_candidates(OVERLAP, {c.term: sub_terms(c.term) for c in OVERLAP})
    return GateCheck(OVERLAP, messages, RULES, "default", [6, 6, 0], related, 1.0, overlap_min_gain)


def test_a_phrase_and_the_word_inside_it_overlap_only_when_the_phrase_wins_enough() -> None:
    assert overlap_check(SWITCHES + RANK, None).gain(A_TAXI, 6) == 2.0  # four switches won, one false switch (-2)
    for overlap_min_gain, weights in ((None, [6, 6, 0]), (2.0, [6, 6, 6]), (3.0, [6, 6, 0])):
        gate = overlap_check(SWITCHES + RANK, overlap_min_gain)
        gate.select(min_gain=2.0)
        assert gate.weights == weights
    gate = overlap_check(SWITCHES + RANK[1:], 3.0)  # without the false switch it wins 4
    gate.select(min_gain=2.0)
    assert (gate.weights, gate.total, gate.gate_effect(A_TAXI)) == ([6, 6, 6], 9.0, 4.0)
