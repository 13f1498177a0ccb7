"""`learn()`: labelled conversations in, one keyword pack per agent out.

    observe -> count_terms -> score_terms -> propose -> gate check (select) -> LearnedPack per agent

Pure and deterministic: the same conversations, seeds and settings give the same packs (every
step iterates in sorted or given order, never in set order). Costs O(words) to count and
O(candidate occurrences) per gate-check pass (bench/learn_bench.py: 10,000 conversations).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from stickyroute.config.model import RoutingSettings
from stickyroute.learn.counts import count_terms, observe
from stickyroute.learn.gate import GateRules
from stickyroute.learn.labels import LabelledConversation
from stickyroute.learn.offsets import KeywordLists, Knobs, choose_knobs, scored_messages
from stickyroute.learn.proposals import (
    CONFIRM,
    OFF,
    STRONG,
    WEAK,
    Seeds,
    propose,
    related_candidates,
    starting_weights,
)
from stickyroute.learn.scoring import TermScore, score_terms
from stickyroute.learn.selection import GateCheck
from stickyroute.learn.settings import LearnSettings
from stickyroute.learn.stoplist import idiom_terms
from stickyroute.learn.terms import sub_terms
from stickyroute.routing.explicit import AgentNames


@dataclass(frozen=True, slots=True)
class LearnedKeyword:
    """One keyword of a pack: how it is spelled, its list, where it came from, its evidence
    (`score`) and its gate effect (messages the gate check would lose without it)."""

    spelling: str
    strength: str
    origin: str
    score: TermScore
    gate_effect: float


@dataclass(frozen=True, slots=True)
class LearnedPack:
    """One agent's learned lists; `dropped`: its own keywords the gate check turned off;
    `messages`: the agent's counted (CREDIT) messages."""

    agent: str
    keywords: tuple[LearnedKeyword, ...]
    weak_keywords: tuple[LearnedKeyword, ...]
    dropped: tuple[LearnedKeyword, ...]
    messages: int
    confirm_keywords: tuple[LearnedKeyword, ...] = ()
    """Keywords right often enough to ask the classifier, not to decide alone (the gate check
    found them worth more as confirm keywords than as strong ones)."""
    sticky_bonus_offset: int = 0
    """Extra sticky bonus (points) for routes on this agent, chosen by the gate check (0: none)."""
    offset_effect: float = 0.0
    """Messages the offset makes right (net) on learning messages whose keywords were learned
    without them (`offsets`: the validation loop)."""
    two_topic_confirm: bool = False
    """Whether routes on this agent confirm a second topic (`offsets`: the validation loop)."""
    two_topic_effect: float = 0.0
    """Messages the rule makes right (net), measured as `offset_effect`."""


def learn(conversations: Sequence[LabelledConversation], seeds: Mapping[str, Seeds], routing: RoutingSettings,
          default: str, settings: LearnSettings | None = None,
          names: AgentNames | None = None) -> tuple[LearnedPack, ...]:
    """One pack per agent of `seeds` (in its order), learned from `conversations`.

    `routing` are the settings the packs will run under (the gate check's rules); `default` names
    the agent a message with no agent goes to; `names` (optional) lets the gate check skip
    explicit commands as the engine does.
    """
    settings = settings or LearnSettings()
    agents = tuple(seeds)
    observed = observe(conversations, [w for s in seeds.values() for w in s.keywords + s.weak_keywords])
    counts = count_terms(conversations, observed)
    scores = score_terms(counts, agents, settings.prior_messages)
    proposals = propose(scores, counts, seeds, idiom_terms(), settings)
    candidates = [p.candidate for p in proposals]
    related = related_candidates(candidates, {c.term: sub_terms(c.term) for c in candidates})
    rules = GateRules.from_settings(routing)
    initial = starting_weights(proposals, related, rules.strong_weight, rules.weak_weight)
    by_term: dict[str, list[int]] = {}
    for i, proposal in enumerate(proposals):
        by_term.setdefault(proposal.candidate.term, []).append(i)
    seed_words = [w for s in seeds.values() for w in s.keywords + s.weak_keywords]
    messages = scored_messages(conversations, observed, by_term, rules, default, names, seed_words)
    gate = GateCheck(candidates, messages, rules, default, initial, related, settings.switch_penalty,
                     settings.overlap_min_gain, llm=settings.llm_judge, call_cost=settings.call_cost,
                     confirm_role=settings.confirm_role, keyword_switch_cost=settings.keyword_switch_cost)
    knobs = _knobs(conversations, seeds, routing, default, settings, names, rules)
    for agent, (points, _gain) in knobs.offsets.items():
        gate.set_offset(agent, points)
    gate.select(settings.min_gain, settings.passes)
    for agent in knobs.two_topic:  # after the passes: keywords are chosen as without the rule (offsets.py)
        gate.set_two_topic(agent)
    weights, confirm = gate.weights, gate.confirm
    chosen: dict[str, dict[str, list[LearnedKeyword]]] = {a: {STRONG: [], WEAK: [], OFF: [], CONFIRM: []}
                                                          for a in agents}
    for i, proposal in enumerate(proposals):
        strength = STRONG if weights[i] == rules.strong_weight else WEAK if weights[i] else OFF
        if strength == STRONG and confirm[i]:
            strength = CONFIRM
        if strength == OFF and proposal.origin != "yours":
            continue
        effect = gate.gate_effect(i) if weights[i] else 0.0
        keyword = LearnedKeyword(proposal.spelling, strength, proposal.origin, proposal.score, effect)
        chosen[proposal.candidate.agent][strength].append(keyword)
    return tuple(
        LearnedPack(agent, _ordered(lists[STRONG]), _ordered(lists[WEAK]), _ordered(lists[OFF]),
                    counts.messages.get(agent, 0), _ordered(lists[CONFIRM]), *knobs.offsets.get(agent, (0, 0.0)),
                    agent in knobs.two_topic, knobs.two_topic.get(agent, 0.0))
        for agent, lists in chosen.items()
    )


def _knobs(conversations: Sequence[LabelledConversation], seeds: Mapping[str, Seeds], routing: RoutingSettings,
           default: str, settings: LearnSettings, names: AgentNames | None, rules: GateRules) -> Knobs:
    """Each agent's `sticky_bonus_offset` and `two_topic_confirm` (`offsets.choose_knobs`)."""
    if settings.offset_folds < 2:
        return Knobs()
    if settings.max_sticky_offset <= 0 and settings.two_topic_all:  # nothing left to measure
        return Knobs(two_topic=dict.fromkeys(seeds, 0.0))
    inner = replace(settings, max_sticky_offset=0)

    def lists(part: Sequence[LabelledConversation]) -> KeywordLists:
        packs = learn(part, seeds, routing, default, inner, names)
        return {p.agent: ([k.spelling for k in p.keywords], [k.spelling for k in p.weak_keywords],
                          [k.spelling for k in p.confirm_keywords]) for p in packs}

    return choose_knobs(conversations, tuple(seeds), lists, rules, default, folds=settings.offset_folds,
                        most=settings.max_sticky_offset, min_gain=settings.offset_min_gain, names=names,
                        llm=settings.llm_judge, call_cost=settings.call_cost,
                        keyword_switch_cost=settings.keyword_switch_cost, switch_penalty=settings.switch_penalty,
                        two_topic_all=settings.two_topic_all)


def _ordered(keywords: list[LearnedKeyword]) -> tuple[LearnedKeyword, ...]:
    """Most useful first: gate effect, then messages, then spelling (a total order)."""
    return tuple(sorted(keywords, key=lambda k: (-k.gate_effect, -k.score.owner_messages, k.spelling)))
