"""Routing knobs a pack sets for its agent, chosen on learning messages the keywords were not
learned on: `sticky_bonus_offset` and `two_topic_confirm`.

- **Offset.** Some agents' own turns name other agents' words: a taxi turn names the hotel it
  leaves from or the college it goes to ("I'm heading to the university arms hotel"). One such
  strong keyword ties the holder's sticky bonus, the tie asks the classifier (`contest_confirm`),
  the keyword classifier answers by that same keyword and the route moves: a false switch. An
  extra sticky bonus for that agent (points) keeps the route.
- **Two topics.** A turn that finishes the holder's business and then opens another agent's
  ("Saturday at 15:15. The reservation is for 1 person. I also need a train to Ely.") belongs to
  the holder, but the other agent's keywords lead by the switch margin and move the route by
  keywords alone. With `two_topic_confirm` such a message is confirmed by the classifier
  (`routing.text.opening_sentence`: several sentences, the first no courtesy and without the
  winner's keywords): a call instead of a false switch. Worth it with an LLM; with the keyword
  classifier a confirmation answers by the same keywords, so it changes nothing and is not set.

Measured on the messages the keywords were learned on, neither looks worth it: the gate check
has already bent those messages' keywords around them. So they are chosen by a validation loop
inside the learning data: the conversations are split in `folds` by conversation (SHA-256 of the
id); for each fold, keywords are learned on the other folds (`learn` without these knobs) and
every message of the fold is judged with them as the gate check judges (`selection.GateCheck`,
same value per message), under each offset from 0 to `most` and with the rule off and on. An
agent gets the offset with the largest summed gain over 0 when that gain reaches `min_gain`
messages (a smaller offset wins a tie), and `two_topic_confirm` when its summed gain reaches
`min_gain`. Each knob is measured alone, from the lists as learned.

The keyword passes of the final gate check run with the offsets on but without the two-topic
rule (it is added after them): letting them see it costs accuracy, measured inside the learning
half (SGD, learning on three quarters, measuring on the fourth: 96.91% instead of 97.20% with
the oracle): they value every switch the rule confirms at a call and turn off keywords that still
decide other switches.

Deterministic (sorted orders, hash split); costs one `learn` per fold.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from stickyroute.learn.counts import observe, seed_scorer, text_terms
from stickyroute.learn.gate import GateRules, is_unscored
from stickyroute.learn.labels import Evidence, LabelledConversation
from stickyroute.learn.selection import Candidate, GateCheck, ScoredMessage
from stickyroute.learn.terms import keyword_term
from stickyroute.routing.explicit import AgentNames
from stickyroute.routing.text import opening_sentence

KeywordLists = Mapping[str, tuple[Sequence[str], Sequence[str], Sequence[str]]]
"""agent -> (strong keywords, weak keywords, confirm keywords), as a pack spells them."""


@dataclass(frozen=True, slots=True)
class Knobs:
    """The knobs chosen per agent: `offsets` agent -> (points, summed gain in messages) for the
    agents above 0; `two_topic` agent -> summed gain for the agents that get the rule."""

    offsets: Mapping[str, tuple[int, float]] = field(default_factory=dict)
    two_topic: Mapping[str, float] = field(default_factory=dict)


def fold_of(conversation_id: str, folds: int) -> int:
    """The fold (0..folds-1) of a conversation: SHA-256 of its id, modulo `folds`."""
    return int(hashlib.sha256(conversation_id.encode()).hexdigest(), 16) % folds


def judged(lists: KeywordLists, conversations: Sequence[LabelledConversation], rules: GateRules, default: str,
           names: AgentNames | None = None, *, llm: bool = False, call_cost: float = 0.0,
           keyword_switch_cost: float = 0.0, switch_penalty: float = 1.0) -> GateCheck:
    """A gate check of `conversations` with `lists` on (their strengths as given; nothing is
    selected): its `offset_gain` and `two_topic_gain` are what the knobs change on these messages."""
    candidates: list[Candidate] = []
    weights: list[int] = []
    confirm: list[bool] = []
    spellings: list[str] = []
    for agent, (strong, weak, confirming) in lists.items():
        for words, weight, is_confirm in ((strong, rules.strong_weight, False), (weak, rules.weak_weight, False),
                                          (confirming, rules.strong_weight, True)):
            for word in words:
                term = keyword_term(word)
                if term:
                    candidates.append(Candidate(term, agent, 0))
                    weights.append(weight)
                    confirm.append(is_confirm)
                    spellings.append(word)
    by_term: dict[str, list[int]] = {}
    for i, candidate in enumerate(candidates):
        by_term.setdefault(candidate.term, []).append(i)
    observed = observe(conversations, spellings)
    messages = scored_messages(conversations, observed, by_term, rules, default, names, spellings)
    return GateCheck(candidates, messages, rules, default, weights, [[] for _ in candidates], switch_penalty,
                     llm=llm, call_cost=call_cost, confirm_role=True, keyword_switch_cost=keyword_switch_cost,
                     initial_confirm=confirm)


def scored_messages(conversations: Sequence[LabelledConversation], observed: Sequence[Sequence[frozenset[str]]],
                    by_term: Mapping[str, Sequence[int]], rules: GateRules, default: str,
                    names: AgentNames | None, seeds: Sequence[str] = ()) -> list[ScoredMessage]:
    """The gate check's messages: every CREDIT and BACKGROUND one, judged from the route its
    previous message should have had (None for a conversation's first message); `by_term` maps
    a term to the candidates it is; `seeds` (keywords as written) are found in an opening
    sentence as in the message."""
    scorer = seed_scorer(seeds)
    out = []
    for conv, terms_of in zip(conversations, observed, strict=True):
        current: str | None = None
        for message, terms in zip(conv.messages, terms_of, strict=True):
            if message.evidence is not Evidence.CONTEXT:
                present = tuple(i for term in sorted(terms) for i in by_term.get(term, ()))
                answer = message.agent if message.evidence is Evidence.CREDIT else None
                first = opening_sentence(message.text, rules.acknowledgements, rules.short_message_chars)
                opening = None if first is None else tuple(
                    i for term in sorted(text_terms(first, scorer)) for i in by_term.get(term, ()))
                out.append(ScoredMessage(current, message.agent or default, present,
                                         is_unscored(message.text, rules, names), answer, opening))
            current = message.agent or default
    return out


def choose_knobs(conversations: Sequence[LabelledConversation], agents: Sequence[str],
                 learn_lists: Callable[[Sequence[LabelledConversation]], KeywordLists], rules: GateRules,
                 default: str, *, folds: int, most: int, min_gain: float, names: AgentNames | None = None,
                 llm: bool = False, call_cost: float = 0.0, keyword_switch_cost: float = 0.0,
                 switch_penalty: float = 1.0, two_topic_all: bool = False) -> Knobs:
    """Each agent's offset and two-topic rule (module docstring; `two_topic_all`: the rule for
    every agent, whatever its gain). `learn_lists(part)` learns keyword lists from `part`; raises
    ValueError unless folds >= 2."""
    if folds < 2:
        raise ValueError(f"validation folds must be at least 2, got {folds}")
    gains = {agent: [0.0] * (most + 1) for agent in agents}
    two_topic = dict.fromkeys(agents, 0.0)
    for fold in range(folds):
        held = [c for c in conversations if fold_of(c.id, folds) == fold]
        rest = [c for c in conversations if fold_of(c.id, folds) != fold]
        if not held or not rest:
            continue
        gate = judged(learn_lists(rest), held, rules, default, names, llm=llm, call_cost=call_cost,
                      keyword_switch_cost=keyword_switch_cost, switch_penalty=switch_penalty)
        for agent in agents:
            for points in range(1, most + 1):
                gains[agent][points] += gate.offset_gain(agent, points)
            two_topic[agent] += gate.two_topic_gain(agent)
    offsets = {}
    for agent in agents:
        best = max(range(most + 1), key=lambda p: (gains[agent][p], -p))
        if best and gains[agent][best] >= min_gain:
            offsets[agent] = (best, gains[agent][best])
    return Knobs(offsets, {a: g for a, g in two_topic.items() if two_topic_all or g >= min_gain})
