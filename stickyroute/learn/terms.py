"""Candidate terms of a message, in the keyword gate's own normal form.

The gate (`stickyroute.routing.keywords`) matches casefolded NFC text as `\\w+` word tokens, a phrase
across any run of spaces or punctuation, and text in scripts without spaces (Chinese, Japanese,
Thai...) as substrings. A candidate term is written the way the gate will match it:

- a unigram: one word token, not a function word (`stoplist.FUNCTION_WORDS`), with no digit
  (numbers, times, dates and prices name an instance, not a topic);
- a bigram: two adjacent word tokens, joined by one space, not both function words, neither
  with a digit ("check in" matches "check-in" in the gate);
- in scripts without spaces: every two-character substring of a run ("部署" in "用docker部署").

Idioms (`stoplist.IDIOMS`) are cut out first: their words are never evidence. A message's terms
are a set: the gate counts a keyword once per message, so learning counts messages, not
occurrences.
"""

from __future__ import annotations

from stickyroute.learn.stoplist import FUNCTION_WORDS, without_idioms
from stickyroute.routing.keywords import fold, keyword_form, no_space_runs, words


def message_terms(text: str) -> frozenset[str]:
    """The candidate terms of one message text (see the module rules); empty for no text."""
    folded = fold(text)
    terms: set[str] = set()
    for run in without_idioms(words(folded)):
        usable = [not _has_digit(t) for t in run]
        for i, token in enumerate(run):
            if usable[i] and token not in FUNCTION_WORDS:
                terms.add(token)
            if i and usable[i] and usable[i - 1] and not (token in FUNCTION_WORDS and run[i - 1] in FUNCTION_WORDS):
                terms.add(f"{run[i - 1]} {token}")
    for chars in no_space_runs(folded):
        terms.update(chars[i:i + 2] for i in range(len(chars) - 1))
    return frozenset(terms)


def keyword_term(keyword: str) -> str:
    """A keyword (as a user wrote it) in term form: its gate tokens joined by one space, or its
    folded text for scripts without spaces; "" when it can never match."""
    form = keyword_form(keyword)
    return form if isinstance(form, str) else " ".join(form)


def term_tokens(term: str) -> tuple[str, ...]:
    """The word tokens of a term (one item for a substring term)."""
    return tuple(term.split(" "))


def _has_digit(token: str) -> bool:
    return any(c.isdigit() for c in token)


def sub_terms(term: str) -> tuple[str, ...]:
    """The shorter terms a term contains: its contiguous word sub-phrases ("guest house" ->
    "guest", "house"), or for a substring term its substrings of two characters or more."""
    if isinstance(keyword_form(term), str):
        n = len(term)
        return tuple(dict.fromkeys(term[i:j] for size in range(2, n) for i in range(n - size + 1) for j in (i + size,)))
    tokens = term_tokens(term)
    n = len(tokens)
    return tuple(dict.fromkeys(" ".join(tokens[i:i + size]) for size in range(1, n) for i in range(n - size + 1)))
