"""How strongly a term points to one agent: weighted log-odds with an informative Dirichlet prior.

Monroe, Colaresi and Quinn (2008), "Fightin' Words", section 3.5, counted per message (the gate
scores a keyword once per message): for term w and agent a, with y_a = a's messages containing w,
n_a = a's messages, y_r and n_r the same for every other class (other agents and BACKGROUND),
and a prior of alpha0 messages spread by w's overall rate (alpha_w = alpha0 * y_w / N):

    delta = log((y_a + alpha_w) / (n_a + alpha0 - y_a - alpha_w))
          - log((y_r + alpha_w) / (n_r + alpha0 - y_r - alpha_w))
    z     = delta / sqrt(1 / (y_a + alpha_w) + 1 / (y_r + alpha_w))

z is large when w is both over-represented in a's messages and frequent enough to be sure of it
(a term seen twice is never as sure as one seen forty times). Beside z the report keeps the plain
`share` (y_a / y_w: of the messages containing w, the part that is a's), which is what
"almost only one agent uses it" means. Every term has one owner: the agent with the most messages
containing it (ties: higher z, then name).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from stickyroute.learn.counts import BACKGROUND, TermCounts

PRIOR_MESSAGES = 100.0
"""alpha0: the prior's weight, in messages."""


@dataclass(frozen=True, slots=True)
class TermScore:
    """One term's evidence for its owner.

    `owner_messages` (y_a) of the `messages` (y_w) containing the term are the owner's;
    `share` = y_a / y_w in [0, 1]; `z` the log-odds z-score above; `others` the other classes
    with their message counts, most first (BACKGROUND included).
    """

    term: str
    owner: str
    owner_messages: int
    messages: int
    share: float
    z: float
    others: tuple[tuple[str, int], ...]


def log_odds_z(y_a: int, n_a: int, y_r: int, n_r: int, prior_w: float, prior: float = PRIOR_MESSAGES) -> float:
    """The z-score of the module formula (counts in messages, priors in messages)."""
    delta = (math.log((y_a + prior_w) / (n_a + prior - y_a - prior_w))
             - math.log((y_r + prior_w) / (n_r + prior - y_r - prior_w)))
    return delta / math.sqrt(1.0 / (y_a + prior_w) + 1.0 / (y_r + prior_w))


def score_for(counts: TermCounts, term: str, agent: str, prior: float = PRIOR_MESSAGES) -> TermScore:
    """`term`'s evidence for `agent` (any agent, not only the owner; zeros for an unseen term)."""
    by_class = counts.by_term.get(term, {})
    y_w = sum(by_class.values())
    y_a = by_class.get(agent, 0)
    n_a = counts.messages.get(agent, 0)
    total = counts.total
    z = log_odds_z(y_a, n_a, y_w - y_a, total - n_a, prior * y_w / total, prior) if y_w else 0.0
    others = tuple(sorted(((c, n) for c, n in by_class.items() if c != agent), key=lambda x: (-x[1], x[0])))
    return TermScore(term, agent, y_a, y_w, y_a / y_w if y_w else 0.0, z, others)


def score_terms(counts: TermCounts, agents: tuple[str, ...], prior: float = PRIOR_MESSAGES) -> dict[str, TermScore]:
    """The owner's score of every term some agent's messages contain (terms seen only in
    BACKGROUND messages have no owner and are left out). Deterministic: no set order."""
    known = set(agents)
    total = counts.total
    out: dict[str, TermScore] = {}
    for term in sorted(counts.by_term):
        by_class = counts.by_term[term]
        y_w = sum(by_class.values())
        best: tuple[int, float, str] | None = None
        for agent in sorted(a for a in by_class if a != BACKGROUND and a in known):
            y_a, n_a = by_class[agent], counts.messages[agent]
            z = log_odds_z(y_a, n_a, y_w - y_a, total - n_a, prior * y_w / total, prior)
            if best is None or (y_a, z) > best[:2]:
                best = (y_a, z, agent)
        if best is not None:
            out[term] = score_for(counts, term, best[2], prior)
    return out
