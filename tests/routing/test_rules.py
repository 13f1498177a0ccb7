"""The shipped rule packs (stickyroute/rules/*.toml): they load, do not overlap and score what they should."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from stickyroute.config import RulePack, load_rule_pack
from stickyroute.routing.keywords import AgentKeywords, KeywordScorer

RULES = Path(__file__).resolve().parents[2] / "stickyroute" / "rules"
PACKS = ("billing", "coder", "debugger", "devops", "researcher", "sales", "support", "travel",
         "writer")


def pack(name: str) -> RulePack:
    return load_rule_pack(RULES / f"{name}.toml")


def tokens(keyword: str) -> tuple[str, ...]:
    """A keyword as the keyword gate sees it: casefolded word tokens."""
    return tuple(re.findall(r"\w+", keyword.casefold()))


def strong_scorer() -> KeywordScorer:
    """Every pack as an agent with its strong keywords only (6 points each)."""
    return KeywordScorer([AgentKeywords(n, pack(n).keywords) for n in PACKS], strong_weight=6)


def test_exactly_the_documented_packs_are_shipped():
    assert sorted(p.stem for p in RULES.glob("*.toml")) == list(PACKS)


@pytest.mark.parametrize("name", PACKS)
def test_pack_loads_with_description_and_sized_lists(name):
    loaded = pack(name)
    assert loaded.description
    assert loaded.aliases == ()  # packs are shared between agents: aliases would collide
    assert 20 <= len(loaded.keywords) <= 35, len(loaded.keywords)
    assert 10 <= len(loaded.weak_keywords) <= 20, len(loaded.weak_keywords)


@pytest.mark.parametrize("name", PACKS)
def test_pack_header_documents_the_format(name):
    text = (RULES / f"{name}.toml").read_text(encoding="utf-8")
    assert text.startswith(
        f'# Rule pack "{name}": merged into an agent with `rules = "builtin:{name}"`')
    for key in ("description", "aliases", "keywords", "weak_keywords"):
        assert f"#   {key}" in text, key


@pytest.mark.parametrize("name", PACKS)
def test_pack_has_no_duplicate_within_or_across_its_lists(name):
    loaded = pack(name)
    words = [tokens(k) for k in loaded.keywords + loaded.weak_keywords]
    assert len(words) == len(set(words))


def test_no_keyword_appears_in_two_packs():
    owner: dict[tuple[str, ...], str] = {}
    clashes = []
    for name in PACKS:
        loaded = pack(name)
        for keyword in loaded.keywords + loaded.weak_keywords:
            key = tokens(keyword)
            if key in owner and owner[key] != name:
                clashes.append((keyword, owner[key], name))
            owner.setdefault(key, name)
    assert clashes == []


IDIOMS = [
    "can you fish out the root cause of this?",  # field report T28
    "let's touch base tomorrow morning",
    "that ship has sailed",
    "break a leg tonight!",
    "we need to get our ducks in a row",
    "I'm on the fence about it",
    "it's not rocket science",
    "the ball is in your court now",
    "let's circle back after lunch",
    "she went the extra mile for us",
    "good, we are on the same page",
    "let's not reinvent the wheel",
    "that's a red flag for me",
    "we hit the ground running",
    "it's back to square one",
    "stop moving the goalposts",
    "let's take this offline",
    "time to pull the plug on it",
    "don't cut corners",
    "keep me in the loop please",
    "that rings a bell",
    "I'm a bit under the weather today",
    "call it a day",
    "it's a piece of cake",
    "let me sleep on it",
]


@pytest.mark.parametrize("text", IDIOMS)
def test_idioms_and_small_talk_hit_no_strong_keyword(text):
    assert strong_scorer().scores(text) == {}


TYPICAL = [
    ("coder", "Can you review my pull request and add unit tests for the parser?"),
    ("debugger", "I get a traceback with a KeyError every time I run the import"),
    ("devops", "the deploy is stuck, check the k8s pods and the grafana dashboard"),
    ("writer", "Please proofread this blog post before Friday"),
    ("researcher", "find peer-reviewed studies for a literature review on sleep and memory"),
    ("support", "I forgot my password and now I'm locked out of my account"),
    ("billing", "I was charged twice this month and want a refund"),
    ("sales", "Could we book a demo and talk about enterprise pricing for 200 seats?"),
    ("travel", "My flight got cancelled, can you rebook it and keep my window seat?"),
]


@pytest.mark.parametrize("expected, text", TYPICAL)
def test_typical_request_hits_only_its_own_pack(expected, text):
    scores = strong_scorer().scores(text)
    assert list(scores) == [expected]
    assert scores[expected] >= 12
