"""The stop list: function words that are never keywords, idioms that are never evidence.

- `FUNCTION_WORDS`: English articles, pronouns, auxiliaries, prepositions, conjunctions and
  chat fillers ("please", "thanks", "hi"). A unigram among them is never a candidate; a bigram
  is a candidate only when at least one of its words is not among them ("check in" is, "of
  the" is not).
- `IDIOMS`: figures of speech that carry no topic ("fish out", "under the weather"; the start is
  the idiom list of tests/test_rules.py, field report T28). Their occurrences are cut out of a
  message before its candidate terms are read, so an idiom is never evidence for a keyword; and a
  term that an idiom contains is never a *strong* keyword (at most weak), so a learned pack never
  routes an idiom by itself.

All entries are in the keyword gate's normal form (casefolded word tokens joined by a space).
"""

from __future__ import annotations

from itertools import pairwise

from stickyroute.routing.keywords import fold, words

FUNCTION_WORDS = frozenset((
    "a", "about", "above", "after", "again", "against", "all", "also", "am", "an", "and", "any", "are",
    "aren", "as", "at", "be", "because", "been", "before", "being", "below", "between", "both", "but",
    "by", "can", "cannot", "could", "couldn", "d", "did", "didn", "do", "does", "doesn", "doing", "don",
    "down", "during", "each", "either", "else", "ever", "every", "few", "for", "from", "further", "had",
    "hadn", "has", "hasn", "have", "haven", "having", "he", "her", "here", "hers", "herself", "him",
    "himself", "his", "how", "i", "if", "in", "into", "is", "isn", "it", "its", "itself", "just", "let",
    "ll", "m", "me", "might", "mine", "more", "most", "must", "my", "myself", "no", "nor", "not", "now",
    "o", "of", "off", "on", "once", "one", "only", "or", "other", "our", "ours", "ourselves", "out",
    "over", "own", "re", "s", "same", "shall", "she", "should", "shouldn", "so", "some", "such", "t",
    "than", "that", "the", "their", "theirs", "them", "themselves", "then", "there", "these", "they",
    "this", "those", "through", "to", "too", "under", "until", "up", "upon", "us", "ve", "very", "was",
    "wasn", "we", "were", "weren", "what", "when", "where", "which", "while", "who", "whom", "whose",
    "why", "will", "with", "won", "would", "wouldn", "y", "yet", "you", "your", "yours", "yourself",
    "yourselves", "ok", "okay", "yes", "yeah", "yep", "yup", "no", "nope", "sure", "please", "pls",
    "thanks", "thank", "thx", "ty", "hi", "hello", "hey", "bye", "goodbye", "great", "good", "nice",
    "cool", "fine", "well", "oh", "ah", "um", "uh", "hmm", "lol", "get", "got", "go", "going", "want",
    "wanted", "need", "needed", "like", "would", "could", "make", "know", "think", "see", "look",
    "looking", "something", "anything", "thing", "things", "really", "maybe", "much", "many", "lot",
))
"""Words that never make a keyword on their own (gate normal form)."""

IDIOMS = (
    "fish out", "touch base", "ship has sailed", "break a leg", "ducks in a row", "on the fence",
    "rocket science", "ball is in your court", "circle back", "the extra mile", "on the same page",
    "reinvent the wheel", "red flag", "hit the ground running", "back to square one",
    "moving the goalposts", "take this offline", "pull the plug", "cut corners", "in the loop",
    "rings a bell", "under the weather", "call it a day", "piece of cake", "sleep on it",
    "bite the bullet", "cost an arm and a leg", "once in a blue moon", "the last straw",
    "spill the beans", "hit the sack", "get the ball rolling", "out of the blue",
)
"""Idioms (gate normal form): never evidence, and their words never strong keywords."""


def _tokens(phrase: str) -> tuple[str, ...]:
    return tuple(words(fold(phrase)))


IDIOM_TOKENS: tuple[tuple[str, ...], ...] = tuple(_tokens(i) for i in IDIOMS)
_BY_FIRST: dict[str, tuple[tuple[str, ...], ...]] = {
    first: tuple(t for t in IDIOM_TOKENS if t[0] == first) for first in {t[0] for t in IDIOM_TOKENS}}


def idiom_terms() -> frozenset[str]:
    """Every unigram and bigram inside an idiom: terms that may be weak keywords, never strong."""
    terms: set[str] = set()
    for tokens in IDIOM_TOKENS:
        terms.update(t for t in tokens if t not in FUNCTION_WORDS)
        terms.update(f"{a} {b}" for a, b in pairwise(tokens) if not (a in FUNCTION_WORDS and b in FUNCTION_WORDS))
    return frozenset(terms)


def without_idioms(tokens: list[str]) -> list[list[str]]:
    """`tokens` split into the runs left when every idiom occurrence is cut out (in order).

    Terms are then read inside each run, so no bigram spans a cut.
    """
    runs: list[list[str]] = [[]]
    i = 0
    while i < len(tokens):
        length = _idiom_at(tokens, i)
        if length:
            runs.append([])
            i += length
        else:
            runs[-1].append(tokens[i])
            i += 1
    return [run for run in runs if run]


def _idiom_at(tokens: list[str], i: int) -> int:
    """The length of an idiom starting at `tokens[i]`, else 0."""
    for idiom in _BY_FIRST.get(tokens[i], ()):
        if tuple(tokens[i:i + len(idiom)]) == idiom:
            return len(idiom)
    return 0
