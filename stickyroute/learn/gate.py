"""The keyword gate's decision on one message, from its keyword scores alone (no I/O, no text).

`predict(scores, current, rules)` is what `stickyroute.routing.engine` decides for a text message that
is neither short, an acknowledgement nor an explicit command, when the classifier is the
offline keyword classifier (`stickyroute.classifier.keywords`), with the route's divergence counter at
0 (each message is judged from the route its previous message should have had):

- first message (`current` None): the unique top scorer at or above `confidence_threshold`,
  else the default (the keyword classifier answers none);
- `sticky_heuristic`, route on `current`: effective scores add `sticky_bonus` (plus the
  agent's `sticky_bonus_offset`, `GateRules.sticky_offsets`) to `current`; a
  unique effective top X != current with raw >= threshold switches by keywords when it leads by
  `keyword_switch_margin`, else asks the classifier when `divergence_count` is 1 (or the early
  confirm margin is met); `contest_confirm` asks it on a tie with the bonus; the classifier's
  unique raw top scorer (>= threshold) other than `current` is switched to, anything else stays;
- other strategies: a live route stays.

Per-agent knobs: `GateRules.sticky_offsets` (`sticky_bonus_offset`) and, for
`two_topic_confirm`, the scores of the message's opening sentence (`verdict(opening=...)`: the
engine splits the text, the gate check is given the candidates of that sentence).

tests/learn/test_learn_gate.py checks `predict` against the engine itself on a table of cases.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from stickyroute.config.model import RoutingSettings, Strategy
from stickyroute.routing.explicit import AgentNames, ExplicitKind, parse_explicit
from stickyroute.routing.keywords import top_agent
from stickyroute.routing.text import is_acknowledgement, is_short

KEYWORD_JUDGE = object()
"""`verdict`'s answer when the classifier is the keyword classifier (it answers from the scores)."""


@dataclass(frozen=True, slots=True)
class GateRules:
    """The routing knobs `predict` reads (keyword points; see `RoutingSettings`)."""

    strategy: Strategy
    confidence_threshold: int
    sticky_bonus: int
    divergence_count: int
    keyword_switch_margin: int | None
    early_confirm_margin: int | None
    contest_confirm: bool
    strong_weight: int
    weak_weight: int
    short_message_chars: int
    acknowledgements: frozenset[str]
    first_message_margin: int | None = 0
    sticky_offsets: tuple[tuple[str, int], ...] = ()
    """(agent, points) added to `sticky_bonus` while that agent holds the route
    (`sticky_bonus_offset`); agents not listed: 0."""

    def bonus(self, current: str) -> int:
        """The sticky bonus of a route on `current` (points)."""
        for agent, points in self.sticky_offsets:
            if agent == current:
                return self.sticky_bonus + points
        return self.sticky_bonus

    @classmethod
    def from_settings(cls, settings: RoutingSettings) -> GateRules:
        return cls(settings.strategy, settings.confidence_threshold, settings.sticky_bonus,
                   settings.divergence_count, settings.keyword_switch_margin, settings.early_confirm_margin,
                   settings.contest_confirm, settings.strong_weight, settings.weak_weight,
                   settings.short_message_chars, frozenset(a.casefold() for a in settings.acknowledgements),
                   settings.first_message_margin)


def is_unscored(text: str, rules: GateRules, names: AgentNames | None = None) -> bool:
    """True for a message the engine never scores: short, an acknowledgement, or explicit."""
    if is_acknowledgement(text, rules.acknowledgements) or is_short(text, rules.short_message_chars):
        return True
    return names is not None and parse_explicit(text, names, None).kind is not ExplicitKind.NONE


def predict(scores: Mapping[str, int], current: str | None, rules: GateRules) -> str | None:
    """The agent the message goes to with the keyword classifier (None: the default agent, for a
    first message)."""
    return verdict(scores, current, rules)[0]


def verdict(scores: Mapping[str, int], current: str | None, rules: GateRules,
            answer: str | object | None = KEYWORD_JUDGE,
            decisive: Mapping[str, int] | None = None,
            opening: Mapping[str, int] | None = None) -> tuple[str | None, bool]:
    """(the agent the message goes to, None: the default; whether the classifier was asked).

    `answer` is what the classifier answers when asked: `KEYWORD_JUDGE` (the keyword classifier,
    from `scores`), or an agent name (an LLM that gets the message right: the message's label)
    or None (it answers none). `decisive` are the scores without confirm keywords (None: the
    same as `scores`): a decision by keywords alone needs its winner there too. `opening`: when
    the holder has `two_topic_confirm` and the message opens with a sentence of its own
    (`routing.text.opening_sentence`), that sentence's decisive scores: a keyword switch needs its
    winner at `confidence_threshold` there, else it is confirmed (None: the rule does not apply).
    """
    threshold = rules.confidence_threshold
    if current is None:
        margin = rules.first_message_margin
        if margin is not None:
            best, top, second = top_agent(scores)
            if (best is not None and top >= threshold and top - second >= margin
                    and _decisive(decisive, best, None, margin, rules)):
                return best, False
        return _answer(scores, threshold, answer, decisive), True
    if rules.strategy is not Strategy.STICKY_HEURISTIC:
        return current, False
    own = scores.get(current, 0)
    bonus = rules.bonus(current)
    effective = dict(scores)
    effective[current] = own + bonus
    best, top, second = top_agent(effective)
    if best is not None and best != current and scores.get(best, 0) >= threshold:
        margin = rules.keyword_switch_margin
        if (margin is not None and top - second >= margin and _decisive(decisive, best, current, margin, rules)
                and (opening is None or opening.get(best, 0) >= threshold)):
            return best, False
        early = rules.early_confirm_margin
        if rules.divergence_count <= 1 or (early is not None and top - (own + bonus) >= early):
            return _confirmed(scores, current, threshold, answer, decisive), True
        return current, False
    if (rules.contest_confirm and best is None and own + bonus == top
            and any(a != current and s == top and s >= threshold for a, s in scores.items())):
        return _confirmed(scores, current, threshold, answer, decisive), True
    return current, False


def _decisive(decisive: Mapping[str, int] | None, best: str, current: str | None, margin: int,
              rules: GateRules) -> bool:
    """The engine's `_decisive`: `best` also wins by `margin` without confirm keywords."""
    if decisive is None:
        return True
    effective = dict(decisive)
    if current is not None:
        effective[current] = effective.get(current, 0) + rules.bonus(current)
    winner, top, second = top_agent(effective)
    return winner == best and effective.get(best, 0) >= rules.confidence_threshold and top - second >= margin


def _answer(scores: Mapping[str, int], threshold: int, answer: str | object | None,
            decisive: Mapping[str, int] | None = None) -> str | None:
    if answer is KEYWORD_JUDGE:  # the keyword classifier reads the decisive scores
        return _classifier_answer(scores if decisive is None else decisive, threshold)
    return answer if isinstance(answer, str) else None


def _classifier_answer(scores: Mapping[str, int], threshold: int) -> str | None:
    """The keyword classifier: the unique top scorer at or above the threshold, else None."""
    best, top, _second = top_agent(scores)
    return best if best is not None and top >= threshold else None


def _confirmed(scores: Mapping[str, int], current: str, threshold: int, answer: str | object | None,
               decisive: Mapping[str, int] | None = None) -> str:
    """A confirmation: switch to the classifier's answer when it is another agent, else stay."""
    chosen = _answer(scores, threshold, answer, decisive)
    return chosen if chosen is not None else current
