"""Candidate terms use the keyword gate's own normalisation; the stop list keeps idioms out."""

from __future__ import annotations

import pytest

from stickyroute.learn.stoplist import IDIOMS, idiom_terms, without_idioms
from stickyroute.learn.terms import keyword_term, message_terms, sub_terms
from stickyroute.routing.keywords import AgentKeywords, KeywordScorer
from tests.routing.test_rules import IDIOMS as SHIPPED_IDIOM_SENTENCES


@pytest.mark.parametrize("text, expected", [
    ("Book a Guest-House", {"book", "book a", "a guest", "guest", "guest house", "house"}),
    ("I need it", set()),  # function words only
    ("for 4 nights at 19:45", {"nights", "nights at"}),  # no digits: "for 4", "4 nights", "19" never
    ("CAFÉ au lait", {"café", "café au", "au", "au lait", "lait"}),
    ("cafe\u0301", {"café"}),  # NFC: e + combining acute is "é"
    ("用docker部署服务", {"docker", "部署", "署服", "服务"}),  # scripts without spaces: 2-char substrings
    ("can you fish out the root cause", {"the root", "root", "root cause", "cause"}),  # the idiom is cut out
])
def test_message_terms(text, expected) -> None:
    assert message_terms(text) == frozenset(expected)


@pytest.mark.parametrize("keyword, term", [
    ("Check-In", "check in"), ("b&b", "b b"), ("  WiFi ", "wifi"), ("部署", "部署"), ("c++", "c"), ("!!", ""),
])
def test_keyword_term_is_the_gates_form(keyword, term) -> None:
    assert keyword_term(keyword) == term


def test_a_term_matches_exactly_where_the_gate_matches_it() -> None:
    text = "Need a guest-house near the check-in desk"
    scorer = KeywordScorer([AgentKeywords(t, (t,)) for t in sorted(message_terms(text))])
    assert set(scorer.scores(text)) == set(message_terms(text))


@pytest.mark.parametrize("term, inside", [
    ("hotel", ()), ("guest house", ("guest", "house")),
    ("bed and breakfast", ("bed", "and", "breakfast", "bed and", "and breakfast")),
    ("部署中心", ("部署", "署中", "中心", "部署中", "署中心")), ("部署", ()),
])
def test_sub_terms(term, inside) -> None:
    assert sub_terms(term) == inside


def test_without_idioms_cuts_every_occurrence() -> None:
    assert without_idioms(["we", "hit", "the", "ground", "running", "and", "touch", "base"]) == [["we"], ["and"]]


def test_every_shipped_idiom_sentence_contains_a_stop_idiom() -> None:
    for sentence in SHIPPED_IDIOM_SENTENCES:
        assert any(f" {i} " in f" {' '.join(sentence.casefold().replace(chr(39), ' ').replace('!', ' ').replace('?', ' ').split())} "
                   for i in IDIOMS), sentence


def test_idiom_words_may_not_be_strong() -> None:
    assert {"fish", "fish out", "weather", "the weather", "cake", "of cake"} <= idiom_terms()
    assert {"under", "under the", "out"} & idiom_terms() == set()  # function words alone: never terms
