"""Per-agent sticky bonus offsets, chosen on learning messages the keywords were not learned on.

Some agents' own turns name other agents' words: a taxi turn names the hotel it leaves from or
the college it goes to ("I'm heading to the university arms hotel"). One such strong keyword
ties the holder's sticky bonus, and the tie asks the classifier (`contest_confirm`); the keyword
classifier then answers by that same keyword and the route moves: a false switch. An extra
sticky bonus for that agent (`sticky_bonus_offset`, points) keeps the route.

Measured on the messages the keywords were learned on, an offset never looks worth it: the gate
check has already bent those messages' keywords around their ties. So the offsets are chosen by a
validation loop inside the learning data: the conversations are split in `folds` by conversation
(SHA-256 of the id, like `holdout.split_conversations`); for each fold, keywords are learned on
the other folds (`learn` without offsets) and every message of the fold is judged with them, as
the gate check judges (`selection.GateCheck`, same value per message), with each offset from 0
to `most`. An agent's offset is the one whose summed gain over 0 is largest, when it reaches
`min_gain` messages (a smaller offset wins a tie); agents with no messages on their routes keep 0.

Deterministic (sorted orders, hash split); costs one `learn` per fold.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence

from stickyroute.learn.counts import observe
from stickyroute.learn.gate import GateRules, is_unscored
from stickyroute.learn.labels import Evidence, LabelledConversation
from stickyroute.learn.selection import Candidate, GateCheck, ScoredMessage
from stickyroute.learn.terms import keyword_term
from stickyroute.routing.explicit import AgentNames

KeywordLists = Mapping[str, tuple[Sequence[str], Sequence[str], Sequence[str]]]
"""agent -> (strong keywords, weak keywords, confirm keywords), as a pack spells them."""


def fold_of(conversation_id: str, folds: int) -> int:
    """The fold (0..folds-1) of a conversation: SHA-256 of its id, modulo `folds`."""
    return int(hashlib.sha256(conversation_id.encode()).hexdigest(), 16) % folds


def judged(lists: KeywordLists, conversations: Sequence[LabelledConversation], rules: GateRules, default: str,
           names: AgentNames | None = None, **gate_options: float | bool) -> GateCheck:
    """A gate check of `conversations` with `lists` on (their strengths as given; nothing is
    selected): its `offset_gain(agent, points)` is what an offset changes on these messages.
    `gate_options`: `GateCheck`'s llm, call_cost, keyword_switch_cost, switch_penalty."""
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
    messages = scored_messages(conversations, observed, by_term, rules, default, names)
    return GateCheck(candidates, messages, rules, default, weights, [[] for _ in candidates],
                     initial_confirm=confirm, confirm_role=True, **gate_options)  # type: ignore[arg-type]


def scored_messages(conversations: Sequence[LabelledConversation], observed: Sequence[Sequence[frozenset[str]]],
                    by_term: Mapping[str, Sequence[int]], rules: GateRules, default: str,
                    names: AgentNames | None) -> list[ScoredMessage]:
    """The gate check's messages: every CREDIT and BACKGROUND one, judged from the route its
    previous message should have had (None for a conversation's first message); `by_term` maps
    a term to the candidates it is."""
    out = []
    for conv, terms_of in zip(conversations, observed, strict=True):
        current: str | None = None
        for message, terms in zip(conv.messages, terms_of, strict=True):
            if message.evidence is not Evidence.CONTEXT:
                present = tuple(i for term in sorted(terms) for i in by_term.get(term, ()))
                answer = message.agent if message.evidence is Evidence.CREDIT else None
                out.append(ScoredMessage(current, message.agent or default, present,
                                         is_unscored(message.text, rules, names), answer))
            current = message.agent or default
    return out


def choose_offsets(conversations: Sequence[LabelledConversation], agents: Sequence[str],
                   learn_lists: Callable[[Sequence[LabelledConversation]], KeywordLists], rules: GateRules,
                   default: str, *, folds: int, most: int, min_gain: float, names: AgentNames | None = None,
                   **gate_options: float | bool) -> dict[str, tuple[int, float]]:
    """agent -> (offset in points, its summed out-of-fold gain in messages) for every agent whose
    chosen offset is above 0 (module docstring). `learn_lists(part)` learns keyword lists from
    `part`; raises ValueError unless folds >= 2."""
    if folds < 2:
        raise ValueError(f"offset folds must be at least 2, got {folds}")
    gains = {agent: [0.0] * (most + 1) for agent in agents}
    for fold in range(folds):
        held = [c for c in conversations if fold_of(c.id, folds) == fold]
        rest = [c for c in conversations if fold_of(c.id, folds) != fold]
        if not held or not rest:
            continue
        gate = judged(learn_lists(rest), held, rules, default, names, **gate_options)
        for agent in agents:
            for points in range(1, most + 1):
                gains[agent][points] += gate.offset_gain(agent, points)
    chosen = {}
    for agent in agents:
        best = max(range(most + 1), key=lambda p: (gains[agent][p], -p))
        if best and gains[agent][best] >= min_gain:
            chosen[agent] = (best, gains[agent][best])
    return chosen
