"""From scores to the gate check's candidates and their starting weights.

Two origins:

- **learned**: a term owned by an agent (`scoring.score_terms`) is a candidate when its share,
  owner messages and z reach the candidate thresholds (`LearnSettings.candidate_*`). It starts
  strong when "almost only one agent uses it" (share >= `strong_share`, >= `min_strong_messages`,
  z >= `min_z`, and no idiom contains it), weak when frequent but shared (share >= `weak_share`,
  >= `min_weak_messages`, z >= `min_z`), else off. A learned term with fewer than
  `min_strong_messages` messages of its agent is never strong, not even by the gate check
  (`Candidate.strong_ok`): two or three examples do not make a term that decides alone.
- **yours**: every keyword the agent already has (its own lists and its rule pack) is a candidate
  of that agent, whatever the data says. A strong one stays strong unless the data contradicts it
  (seen in >= `min_contradicting_messages` messages of which < `keep_share` are the agent's: weak
  from `drop_share`, else off); a weak one stays weak unless its share is below `drop_share`.
  Your spelling is kept ("check-in", "b&b").

Starting weights never overlap (except within your own lists): in priority order (yours first,
then by z), a candidate starts off when a term inside it or containing it already started on for
the same agent.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from stickyroute.learn.counts import TermCounts
from stickyroute.learn.scoring import TermScore, score_for
from stickyroute.learn.selection import Candidate
from stickyroute.learn.settings import LearnSettings
from stickyroute.learn.terms import keyword_term

STRONG, WEAK, OFF, CONFIRM = "strong", "weak", "off", "confirm"


@dataclass(frozen=True, slots=True)
class Seeds:
    """One agent's keywords before learning (as written): strong and weak lists."""

    keywords: tuple[str, ...] = ()
    weak_keywords: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Proposal:
    """A candidate with its evidence: `spelling` is what a pack writes, `origin` "learned" or
    "yours" (with `seeded` its list: strong or weak), `start` its starting strength."""

    candidate: Candidate
    spelling: str
    origin: str
    start: str
    score: TermScore
    seeded: str = ""


def propose(scores: Mapping[str, TermScore], counts: TermCounts, seeds: Mapping[str, Seeds],
            idiom_terms: frozenset[str], settings: LearnSettings) -> list[Proposal]:
    """Every candidate (yours first, in agents order and list order; then learned, by term)."""
    out: dict[tuple[str, str], Proposal] = {}
    for agent, seed in seeds.items():
        for listed, words in ((STRONG, seed.keywords), (WEAK, seed.weak_keywords)):
            for word in words:
                term = keyword_term(word)
                if term and (term, agent) not in out:
                    score = score_for(counts, term, agent, settings.prior_messages)
                    candidate = Candidate(term, agent, score.owner_messages, strong_ok=True, yours=True)
                    out[(term, agent)] = Proposal(candidate, word, "yours", _seed_start(listed, score, settings),
                                                  score, seeded=listed)
    for term, score in scores.items():
        if (term, score.owner) in out or not _is_candidate(score, settings):
            continue
        strong_ok = term not in idiom_terms and score.owner_messages >= settings.min_strong_messages
        candidate = Candidate(term, score.owner, score.owner_messages, strong_ok)
        start = _learned_start(score, strong_ok, settings)
        out[(term, score.owner)] = Proposal(candidate, term, "learned", start, score)
    return list(out.values())


def _is_candidate(score: TermScore, settings: LearnSettings) -> bool:
    return (score.share >= settings.candidate_share and score.owner_messages >= settings.min_candidate_messages
            and score.z >= settings.candidate_z)


def _learned_start(score: TermScore, strong_ok: bool, settings: LearnSettings) -> str:
    if (strong_ok and score.share >= settings.strong_share and score.owner_messages >= settings.min_strong_messages
            and score.z >= settings.min_z):
        return STRONG
    if (score.share >= settings.weak_share and score.owner_messages >= settings.min_weak_messages
            and score.z >= settings.min_z):
        return WEAK
    return OFF


def _seed_start(listed: str, score: TermScore, settings: LearnSettings) -> str:
    seen = score.messages >= settings.min_contradicting_messages
    if listed == STRONG and (not seen or score.share >= settings.keep_share):
        return STRONG
    if seen and score.share < settings.drop_share:
        return OFF
    return WEAK


def starting_weights(proposals: Sequence[Proposal], related: Sequence[Sequence[int]],
                     strong_weight: int, weak_weight: int) -> list[int]:
    """The starting weight of each proposal (points), without overlaps (module docstring)."""
    weights = [0] * len(proposals)
    order = sorted(range(len(proposals)),
                   key=lambda i: (proposals[i].origin != "yours", -proposals[i].score.z, proposals[i].candidate.term))
    for i in order:
        start = proposals[i].start
        if start == OFF or any(weights[j] for j in related[i]):
            continue
        weights[i] = strong_weight if start == STRONG else weak_weight
    return weights


def related_candidates(candidates: Sequence[Candidate], sub_terms: Mapping[str, Sequence[str]]) -> list[list[int]]:
    """For each candidate, the candidates of the same agent inside it or containing it, unless
    both are yours (your own lists may overlap on purpose: "blog post" strong, "post" weak).

    `sub_terms[term]` lists the shorter terms a term contains (`terms.sub_terms`).
    """
    index = {(k.term, k.agent): i for i, k in enumerate(candidates)}
    related: list[list[int]] = [[] for _ in candidates]
    for i, k in enumerate(candidates):
        for inner in sub_terms.get(k.term, ()):
            j = index.get((inner, k.agent))
            if j is not None and not (k.yours and candidates[j].yours):
                related[i].append(j)
                related[j].append(i)
    return related
