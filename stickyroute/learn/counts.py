"""Message counts per (term, agent): the only statistics the scoring reads.

`observe` reads each message's terms once: its candidate terms (`terms.message_terms`) plus
every seed keyword (the agents' own keywords, any length) the keyword gate itself matches in it.
`count_terms` then counts, per term and class, the messages that contain it; a class is an agent
name or `BACKGROUND` (messages that count against every agent: see `labels.Evidence`).
CONTEXT messages are observed (the gate check needs their route) but not counted.

Shapes: `Observed` is one tuple per conversation, one frozenset of terms per message, aligned
with `LabelledConversation.messages`. Counts are numbers of messages (a term counts once per
message, as the gate scores it).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from stickyroute.learn.labels import Evidence, LabelledConversation
from stickyroute.learn.terms import keyword_term, message_terms
from stickyroute.routing.keywords import AgentKeywords, KeywordScorer

BACKGROUND = "(background)"
"""Class of BACKGROUND messages (not a valid agent name, so it never collides with one)."""

Observed = tuple[tuple[frozenset[str], ...], ...]


@dataclass(frozen=True, slots=True)
class TermCounts:
    """`messages[class]`: counted messages of each class; `by_term[term][class]`: those containing term."""

    messages: Mapping[str, int]
    by_term: Mapping[str, Mapping[str, int]]

    @property
    def total(self) -> int:
        """All counted messages."""
        return sum(self.messages.values())


def observe(conversations: Sequence[LabelledConversation], seeds: Iterable[str]) -> Observed:
    """The term set of every message: candidate terms plus the seeds the gate matches in it.

    `seeds` are keywords as written (any spelling); they appear in term form (`keyword_term`).
    """
    scorer = seed_scorer(seeds)
    return tuple(tuple(text_terms(m.text, scorer) for m in conv.messages) for conv in conversations)


def seed_scorer(seeds: Iterable[str]) -> KeywordScorer:
    """A scorer that finds the seeds (in term form, each its own "agent") the way the gate does."""
    seed_terms = sorted({t for t in (keyword_term(s) for s in seeds) if t})
    return KeywordScorer([AgentKeywords(term, (term,)) for term in seed_terms])


def text_terms(text: str, scorer: KeywordScorer) -> frozenset[str]:
    """The terms of one text: its candidate terms plus the seeds `scorer` (`seed_scorer`) finds."""
    return message_terms(text) | frozenset(scorer.scores(text))


def class_of(evidence: Evidence, agent: str | None) -> str | None:
    """The counting class of a message: its agent (CREDIT), BACKGROUND, or None (not counted)."""
    if evidence is Evidence.CREDIT and agent is not None:
        return agent
    if evidence is Evidence.BACKGROUND or evidence is Evidence.CREDIT:
        return BACKGROUND
    return None


def count_terms(conversations: Sequence[LabelledConversation], observed: Observed) -> TermCounts:
    """Messages per class, and per term and class (see the module docstring)."""
    messages: Counter[str] = Counter()
    by_term: dict[str, Counter[str]] = {}
    for conv, terms_of in zip(conversations, observed, strict=True):
        for message, terms in zip(conv.messages, terms_of, strict=True):
            cls = class_of(message.evidence, message.agent)
            if cls is None:
                continue
            messages[cls] += 1
            for term in terms:
                counter = by_term.get(term)
                if counter is None:
                    counter = by_term[term] = Counter()
                counter[cls] += 1
    return TermCounts(dict(messages), by_term)
