"""Starting strengths: learned terms by share, support and z; your keywords unless contradicted."""

from __future__ import annotations

import pytest

from stickyroute.learn.counts import TermCounts
from stickyroute.learn.proposals import Seeds, propose, related_candidates, starting_weights
from stickyroute.learn.scoring import TermScore
from stickyroute.learn.settings import LearnSettings
from stickyroute.learn.terms import sub_terms

EMPTY = TermCounts({"hotel": 100, "taxi": 100}, {})


@pytest.mark.parametrize("share, messages, z, idiom, start, strong_ok", [
    (0.95, 6, 3.0, False, "strong", True),   # almost only one agent uses it
    (0.95, 5, 2.0, False, "strong", True),   # at the thresholds
    (0.94, 9, 3.0, False, "weak", True),     # 94% < 95%: weak to start, the gate check may raise it
    (0.95, 5, 1.5, False, "off", True),      # not sure enough (z) to start: off, the gate check may turn it on
    (0.95, 5, 3.0, True, "weak", False),     # an idiom contains it: never strong
    (0.95, 4, 3.0, False, "off", False),     # too little support to be strong, even by the gate check
    (1.00, 2, 3.0, False, "off", False),
    (0.60, 5, 3.0, False, "weak", True),     # frequent but shared
    (0.60, 4, 3.0, False, "off", False),     # shared and rare
    (0.40, 9, 3.0, False, "off", True),
])
def test_learned_terms_start_by_share_support_and_z(share, messages, z, idiom, start, strong_ok) -> None:
    score = TermScore("term", "hotel", messages, round(messages / share), share, z, ())
    (proposal,) = propose({"term": score}, EMPTY, {}, frozenset({"term"}) if idiom else frozenset(), LearnSettings())
    assert (proposal.origin, proposal.start, proposal.candidate.strong_ok) == ("learned", start, strong_ok)


@pytest.mark.parametrize("share, messages, z", [(0.2, 9, 3.0), (0.95, 1, 3.0), (0.95, 5, 0.5)])
def test_terms_below_the_candidate_thresholds_are_not_candidates(share, messages, z) -> None:
    score = TermScore("term", "hotel", messages, max(1, round(messages / share)), share, z, ())
    assert propose({"term": score}, EMPTY, {}, frozenset(), LearnSettings()) == []


@pytest.mark.parametrize("listed, hotel, taxi, start", [
    ("strong", 1, 0, "strong"),    # seen once, in the agent's message
    ("strong", 0, 1, "off"),       # seen once, in another agent's message: contradicted
    ("strong", 1, 1, "weak"),      # 50% < keep_share 60%
    ("strong", 13, 7, "strong"),   # 65% >= keep_share 60%
    ("strong", 5, 5, "weak"),      # contradicted: 50%
    ("strong", 2, 8, "off"),       # 20% < drop_share 30%
    ("strong", 0, 0, "strong"),    # never seen: kept
    ("weak", 5, 5, "weak"),
    ("weak", 2, 8, "off"),
])
def test_your_keywords_start_as_listed_unless_the_data_contradicts_them(listed, hotel, taxi, start) -> None:
    counts = TermCounts({"hotel": 100, "taxi": 100}, {"check in": {"hotel": hotel, "taxi": taxi}})
    seeds = {"hotel": Seeds(("Check-in",) if listed == "strong" else (), ("Check-in",) if listed == "weak" else ())}
    (proposal,) = propose({}, counts, seeds, frozenset(), LearnSettings())
    assert (proposal.spelling, proposal.candidate.term, proposal.origin, proposal.seeded, proposal.start) == (
        "Check-in", "check in", "yours", listed, start)


def test_starting_weights_never_overlap_yours_first() -> None:
    counts = TermCounts({"hotel": 100}, {})
    scores = {t: TermScore(t, "hotel", 9, 9, 1.0, z, ()) for t, z in (("guest house", 5.0), ("guest", 4.0), ("house", 3.0))}
    proposals = propose(scores, counts, {"hotel": Seeds(("house",))}, frozenset(), LearnSettings())
    assert [(p.candidate.term, p.origin, p.start) for p in proposals] == [
        ("house", "yours", "strong"), ("guest house", "learned", "strong"), ("guest", "learned", "strong")]
    related = related_candidates([p.candidate for p in proposals], {p.candidate.term: sub_terms(p.candidate.term)
                                                                   for p in proposals})
    assert starting_weights(proposals, related, 6, 1) == [6, 0, 6]  # "guest house" contains "house"
