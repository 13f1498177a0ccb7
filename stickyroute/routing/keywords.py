"""Keyword gate: zero-token scoring of a message against every agent's keywords.

Rules (issue #3, "Keyword gate"): each agent's `keywords` score `strong_weight` points (6) and
`weak_keywords` `weak_weight` points (1); each distinct keyword counts once per message; matching
is case-insensitive (casefold) on Unicode word boundaries; a multi-word phrase matches across any
run of spaces or punctuation ("check in" matches "check-in" and "check   in"); keywords written
in scripts without spaces (Han, Hiragana, Katakana, Thai, Lao, Khmer, Myanmar) match as
substrings. Punctuation inside a keyword is a separator too ("b&b" is the phrase "b b").
Text and keywords are compared in NFC form ("cafe" + U+0301 is the word "café"); a letter run is
broken where a script without spaces starts or ends (Unicode UAX #29: "用docker部署" contains
the word "docker"). A keyword listed twice for one agent (any spelling that folds to the same
words, or in both lists) counts once, at its higher weight.

`confirm_keywords` (issue #22) score `strong_weight` points too, but never decide alone: `scores`
counts them (divergence, agreement, the classifier's view), `decisive` does not (what the engine
reads for a decision made by keywords alone: a first message's winner, a switch by margin). A
keyword also in an agent's strong or weak list is one of those instead.

The message is tokenised once (`\\w+` on the casefolded text); the tokens that start a keyword
are found by one set intersection and phrases are checked from their first token, so scoring
costs O(tokens), not O(keywords).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

_NO_SPACE_RANGES = (
    "\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff"
    "\uf900-\ufaff\uac00-\ud7af"
)
_NO_SPACE_SCRIPTS = re.compile(f"[{_NO_SPACE_RANGES}]")
_NO_SPACE_RUN = re.compile(f"[{_NO_SPACE_RANGES}]+")
_WORD = re.compile(f"[^\\W{_NO_SPACE_RANGES}]+")
"""A word: a run of word characters outside the scripts without spaces (those match as substrings)."""


def fold(text: str) -> str:
    """Casefolded NFC text (the form both keywords and messages are matched in)."""
    folded = text.casefold()
    if folded.isascii():
        return folded
    return unicodedata.normalize("NFC", folded)


_ASCII_SEPARATORS = {c: " " for c in range(128) if not (chr(c).isalnum() or chr(c) == "_")}
"""Every ASCII character that is not a word character (`\\w`), mapped to a space."""


def words(folded: str) -> list[str]:
    """The word tokens of `fold(text)` the gate matches keywords against, in order.

    ASCII text takes a fast path with the same result (`str.translate` + `split`, about 4x
    faster than the regular expression on a 500-character message)."""
    if folded.isascii():
        return folded.translate(_ASCII_SEPARATORS).split()
    return _WORD.findall(folded)


def no_space_runs(folded: str) -> list[str]:
    """The runs of `fold(text)` written in scripts without spaces (matched as substrings)."""
    return _NO_SPACE_RUN.findall(folded)


def keyword_form(keyword: str) -> str | tuple[str, ...]:
    """How the gate matches `keyword`: a tuple of word tokens (a phrase), or the folded string
    itself when it is written in a script without spaces (a substring). `()` never matches."""
    folded = fold(keyword).strip()
    if _NO_SPACE_SCRIPTS.search(folded):
        return folded
    return tuple(_WORD.findall(folded))


@dataclass(frozen=True, slots=True)
class AgentKeywords:
    """One agent's keyword lists as configured (already merged with its rule pack)."""

    agent: str
    keywords: Sequence[str] = ()
    weak_keywords: Sequence[str] = ()
    confirm_keywords: Sequence[str] = ()


@dataclass(frozen=True, slots=True)
class _Entry:
    keyword_id: int
    agent: str
    points: int
    rest: tuple[str, ...]  # tokens after the first one (empty for single words)


@dataclass(slots=True)
class _Index:
    """Keyword entries by first token, plus the substring keywords of scripts without spaces."""

    by_first: dict[str, list[_Entry]]
    substrings: list[tuple[int, str, str, int]]
    firsts: frozenset[str] = frozenset()


class KeywordScorer:
    """Scores text against agents' keywords: `scores(text) -> {agent: points}`, and
    `decisive(text)`: the same without `confirm_keywords` (what keywords alone may decide on).

    Agents without any match are absent from the result (their score is 0). Raises nothing;
    keywords that contain no word character are ignored.
    """

    def __init__(
        self,
        agents: Iterable[AgentKeywords],
        strong_weight: int = 6,
        weak_weight: int = 1,
    ) -> None:
        decisive = _Index({}, [])
        confirm = _Index({}, [])
        self.agents: tuple[str, ...] = ()
        names = []
        next_id = 0
        for agent in agents:
            names.append(agent.agent)
            weighted = [(k, strong_weight) for k in agent.keywords]
            weighted += [(k, weak_weight) for k in agent.weak_keywords]
            distinct: dict[str | tuple[str, ...], int] = {}
            for keyword, points in weighted:
                form = keyword_form(keyword)
                if form:
                    distinct[form] = max(points, distinct.get(form, points))
            confirming = {form: strong_weight for form in map(keyword_form, agent.confirm_keywords)
                          if form and form not in distinct}
            for index, forms in ((decisive, distinct), (confirm, confirming)):
                for form, points in forms.items():
                    if isinstance(form, str):
                        index.substrings.append((next_id, form, agent.agent, points))
                    else:
                        index.by_first.setdefault(form[0], []).append(_Entry(next_id, agent.agent, points, form[1:]))
                    next_id += 1
        self.agents = tuple(names)
        decisive.firsts = frozenset(decisive.by_first)
        self._decisive = decisive
        if confirm.by_first or confirm.substrings:
            merged = {token: [*decisive.by_first.get(token, ()), *entries]
                      for token, entries in confirm.by_first.items()}
            self._all = _Index({**decisive.by_first, **merged}, decisive.substrings + confirm.substrings)
            self._all.firsts = frozenset(self._all.by_first)
        else:
            self._all = decisive
        self.confirming = self._all is not decisive
        """True when some agent has `confirm_keywords` (`decisive` differs from `scores`)."""
        self._last: tuple[_Index, str, dict[str, int]] | None = None
        """The last text scored (one entry: the engine and the keyword classifier score a first
        message's text one after the other)."""

    def scores(self, text: str) -> dict[str, int]:
        """Raw keyword score per agent for `text` (points; agents with 0 omitted)."""
        return self._scored(self._all, text)

    def decisive(self, text: str) -> dict[str, int]:
        """`scores` without `confirm_keywords`: what keywords alone may decide on."""
        return self._scored(self._decisive if self.confirming else self._all, text)

    def _scored(self, index: _Index, text: str) -> dict[str, int]:
        """`_score`, remembered for the last text (a copy each time: callers own their dict)."""
        last = self._last
        if last is not None and last[0] is index and last[1] == text:
            return dict(last[2])
        result = _score(index, text)
        self._last = (index, text, result)
        return dict(result)


def _score(index: _Index, text: str) -> dict[str, int]:
    folded = fold(text)
    tokens = words(folded)
    seen: set[int] = set()
    result: dict[str, int] = {}
    hits = index.firsts.intersection(tokens)  # the tokens that start a keyword, each once
    ordered = sorted(hits, key=tokens.index) if len(hits) > 1 else hits  # message order
    for token in ordered:
        for entry in index.by_first[token]:
            if entry.keyword_id in seen or (entry.rest and not _phrase_at(tokens, token, entry.rest)):
                continue
            seen.add(entry.keyword_id)
            result[entry.agent] = result.get(entry.agent, 0) + entry.points
    for keyword_id, needle, agent, points in index.substrings:
        if needle in folded and keyword_id not in seen:
            seen.add(keyword_id)
            result[agent] = result.get(agent, 0) + points
    return result


def _phrase_at(tokens: list[str], first: str, rest: tuple[str, ...]) -> bool:
    """True when `first` followed by the tokens of `rest` occurs somewhere in `tokens`."""
    end = len(rest) + 1
    i = tokens.index(first)
    while True:
        if tuple(tokens[i + 1 : i + end]) == rest:
            return True
        try:
            i = tokens.index(first, i + 1)
        except ValueError:
            return False


def top_agent(scores: Mapping[str, int]) -> tuple[str | None, int, int]:
    """The unique top scorer, its score and the runner-up's score.

    Returns (None, top, second) when the maximum is shared or every score is 0.
    """
    best: str | None = None
    top = 0
    second = 0
    tie = False
    for agent, score in scores.items():
        if score > top:
            second = top
            best, top, tie = agent, score, False
        elif score == top and score > 0:
            tie = True
            second = top
        elif score > second:
            second = score
    if tie or top <= 0:
        return None, top, second
    return best, top, second
