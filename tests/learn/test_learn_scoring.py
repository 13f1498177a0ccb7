"""Counting messages per (term, class) and the weighted log-odds score (Monroe et al. 2008)."""

from __future__ import annotations

import math

import pytest

from stickyroute.learn.counts import BACKGROUND, count_terms, observe
from stickyroute.learn.labels import Evidence, LabelledConversation, LabelledMessage
from stickyroute.learn.scoring import log_odds_z, score_for, score_terms

C, B, X = Evidence.CREDIT, Evidence.BACKGROUND, Evidence.CONTEXT


def conv(cid: str, *messages: tuple[str, str | None, Evidence]) -> LabelledConversation:
    return LabelledConversation(cid, tuple(LabelledMessage(t, a, e) for t, a, e in messages))


CORPUS = [
    conv("1", ("a guesthouse with wifi", "hotel", C), ("the guesthouse wifi again", "hotel", C),
         ("thanks, wifi was great", "hotel", B)),
    conv("2", ("a taxi to the guesthouse", "taxi", C), ("taxi at noon", "taxi", X), ("taxi please", "taxi", C)),
]


def test_counts_are_messages_per_class_and_context_is_not_counted() -> None:
    observed = observe(CORPUS, seeds=["Wi-Fi", "A Taxi to"])
    counts = count_terms(CORPUS, observed)
    assert counts.messages == {"hotel": 2, BACKGROUND: 1, "taxi": 2}
    assert counts.by_term["guesthouse"] == {"hotel": 2, "taxi": 1}
    assert counts.by_term["wifi"] == {"hotel": 2, BACKGROUND: 1}
    assert counts.by_term["taxi"] == {"taxi": 2}
    assert "noon" not in counts.by_term  # only in a CONTEXT message
    assert counts.by_term["a taxi to"] == {"taxi": 1}  # a seed counts wherever the gate matches it...
    assert "wi fi" not in counts.by_term  # ...and only there ("Wi-Fi" never matches "wifi")
    assert counts.total == 5


def test_seeds_of_any_length_are_observed_as_the_gate_matches_them() -> None:
    observed = observe([conv("1", ("a bed-and-breakfast, please", "hotel", C))], seeds=["Bed and Breakfast", "b&b"])
    assert "bed and breakfast" in observed[0][0] and "b b" not in observed[0][0]


def test_log_odds_z_matches_the_formula() -> None:
    # y_a=3 of n_a=50, y_r=0 of n_r=450, alpha0=100, alpha_w=100*3/500=0.6
    delta = math.log(3.6 / (50 + 100 - 3.6)) - math.log(0.6 / (450 + 100 - 0.6))
    assert log_odds_z(3, 50, 0, 450, 0.6, 100.0) == pytest.approx(delta / math.sqrt(1 / 3.6 + 1 / 0.6))
    assert log_odds_z(3, 50, 0, 450, 0.6, 100.0) == pytest.approx(2.2333, abs=1e-4)


def test_each_term_has_one_owner_with_its_share_and_the_other_classes() -> None:
    counts = count_terms(CORPUS, observe(CORPUS, ()))
    scores = score_terms(counts, ("hotel", "taxi"))
    guesthouse = scores["guesthouse"]
    assert (guesthouse.owner, guesthouse.owner_messages, guesthouse.messages) == ("hotel", 2, 3)
    assert guesthouse.share == pytest.approx(2 / 3)
    assert guesthouse.others == (("taxi", 1),)
    assert scores["wifi"].others == ((BACKGROUND, 1),)
    assert scores["taxi"].share == 1.0 and scores["taxi"].z > scores["guesthouse"].z
    assert "thanks" not in scores  # a function word is never a term
    assert score_for(counts, "guesthouse", "taxi").share == pytest.approx(1 / 3)
    assert score_for(counts, "never seen", "taxi").messages == 0
