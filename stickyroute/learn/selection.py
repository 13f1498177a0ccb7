"""The gate check: choose each candidate's weight (off, weak, strong) by the decisions it changes.

Every scored message (CREDIT or BACKGROUND) is judged the way the router would decide it
(`gate.predict`) from the route its previous message should have had, under the routing
settings the packs will run with. Its value: +1 when the decision is right; -`switch_penalty`
when it is wrong *and* moves the route (a false switch, or a first message sent to a wrong
agent by keywords), because such a mistake also misroutes the messages after it; 0 otherwise
(wrong by staying: the classifier or a later keyword can still catch it).

Selection is coordinate ascent from the starting weights (`proposals.starting_weights`): in a
fixed order (most messages first, then term, then agent), each candidate takes the weight that
raises the total value most, when it raises it by at least `min_gain` messages (raising a
weight) or by anything (lowering one); two passes. Two rules hold throughout: a learned term
that an idiom contains is never strong, and a phrase and a shorter term inside it are both on
for one agent only when the one turned on second raises the total by at least
`overlap_min_gain` messages (None: never). One mention then scores twice ("a taxi" and "taxi":
12 points), which is what a switch needs when the message also names the current agent ("a
taxi from the hotel" while on hotel ties 12 to 12 and is confirmed instead of counted as
agreement), and what a false switch needs too: hence the higher bar. Your own lists may overlap
as you wrote them.
`gate_effect` is each chosen keyword's value to the total: what removing it alone would lose.
The per-agent routing knobs are valued the same way (`offset_gain`, `two_topic_gain`: the
change of the total over the messages on that agent's routes); `learn.offsets` chooses them.
Deterministic; costs O(candidate occurrences) per pass.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from stickyroute.learn.gate import KEYWORD_JUDGE, GateRules, verdict


@dataclass(frozen=True, slots=True)
class Candidate:
    """A (term, agent) pair the gate check may turn on; `strong_ok` False: weak at most;
    `yours`: one of the agent's own keywords."""

    term: str
    agent: str
    messages: int
    strong_ok: bool = True
    yours: bool = False


@dataclass(frozen=True, slots=True)
class ScoredMessage:
    """A message the gate check judges: the route it arrives on (None: first message), the
    agent it should reach (the default agent's name for "no agent"), and the candidate indexes
    it contains. `unscored` messages (short, acknowledgement, explicit) always stay."""

    current: str | None
    target: str
    candidates: tuple[int, ...]
    unscored: bool = False
    answer: str | None = None
    """What an LLM classifier that reads the message answers when asked (its label; None for a
    message about no agent, such as "thanks, bye")."""
    opening: tuple[int, ...] | None = None
    """The candidates in the message's opening sentence when it has one of its own
    (`routing.text.opening_sentence`: several sentences, the first no courtesy); None: it has not."""


@dataclass(slots=True)
class _State:
    weights: list[int]
    scores: list[dict[str, int]]
    values: list[float]
    occurrences: list[list[int]] = field(default_factory=list)
    confirm: list[bool] = field(default_factory=list)
    decisive: list[dict[str, int]] = field(default_factory=list)


Option = tuple[int, bool]
"""A candidate's weight (points) and whether it is a confirm keyword (it never decides alone)."""


class GateCheck:
    """Weights of `candidates` over `messages`; `default` names the default agent."""

    def __init__(self, candidates: Sequence[Candidate], messages: Sequence[ScoredMessage], rules: GateRules,
                 default: str, initial: Sequence[int], related: Sequence[Sequence[int]],
                 switch_penalty: float = 1.0, overlap_min_gain: float | None = None, llm: bool = False,
                 call_cost: float = 0.0, confirm_role: bool = False, keyword_switch_cost: float = 0.0,
                 initial_confirm: Sequence[bool] | None = None) -> None:
        self.candidates = candidates
        self.llm = llm
        self.call_cost = call_cost
        self.keyword_switch_cost = keyword_switch_cost
        self.confirm_role = confirm_role
        self.messages = messages
        self.rules = rules
        self.default = default
        self.related = related
        self.switch_penalty = switch_penalty
        self.overlap_min_gain = overlap_min_gain
        self._by_current: dict[str, list[int]] = {}
        self._two_topic: frozenset[str] = frozenset()
        occurrences: list[list[int]] = [[] for _ in candidates]
        for m, message in enumerate(messages):
            for c in message.candidates:
                occurrences[c].append(m)
        confirm = list(initial_confirm) if initial_confirm is not None else [False] * len(candidates)
        self._state = _State(list(initial), [{} for _ in messages], [0.0] * len(messages), occurrences,
                             confirm, [{} for _ in messages])
        for c, weight in enumerate(initial):
            if weight:
                for m in occurrences[c]:
                    self._shift(m, candidates[c].agent, (0, False), (weight, confirm[c]))
        self._state.values = [self._value(m) for m in range(len(messages))]

    @property
    def two_topic(self) -> frozenset[str]:
        """The agents whose routes have `two_topic_confirm` on."""
        return self._two_topic

    def two_topic_gain(self, agent: str, on: bool = True) -> float:
        """How much the total changes if `agent`'s `two_topic_confirm` is `on`; nothing is kept."""
        old = self._two_topic
        self._two_topic = old | {agent} if on else old - {agent}
        try:
            return sum(self._value(m) - self._state.values[m] for m in self._held_by(agent))
        finally:
            self._two_topic = old

    def set_two_topic(self, agent: str, on: bool = True) -> None:
        """Turn `agent`'s `two_topic_confirm` on or off and update its messages."""
        self._two_topic = self._two_topic | {agent} if on else self._two_topic - {agent}
        for m in self._held_by(agent):
            self._state.values[m] = self._value(m)

    @property
    def offsets(self) -> dict[str, int]:
        """Each agent's chosen `sticky_bonus_offset` (points; agents at 0 left out)."""
        return dict(self.rules.sticky_offsets)

    def offset_gain(self, agent: str, points: int) -> float:
        """How much the total changes if routes on `agent` get `points` of extra sticky bonus;
        nothing is kept."""
        old = self.rules
        self.rules = self._with_offset(agent, points)
        try:
            return sum(self._value(m) - self._state.values[m] for m in self._held_by(agent))
        finally:
            self.rules = old

    def set_offset(self, agent: str, points: int) -> None:
        """Give routes on `agent` `points` of extra sticky bonus and update their messages."""
        self.rules = self._with_offset(agent, points)
        for m in self._held_by(agent):
            self._state.values[m] = self._value(m)

    def _with_offset(self, agent: str, points: int) -> GateRules:
        offsets = {**dict(self.rules.sticky_offsets), agent: points}
        return replace(self.rules, sticky_offsets=tuple(sorted((a, p) for a, p in offsets.items() if p)))

    def _held_by(self, agent: str) -> list[int]:
        held = self._by_current.get(agent)
        if held is None:
            held = self._by_current[agent] = [m for m, msg in enumerate(self.messages) if msg.current == agent]
        return held

    @property
    def weights(self) -> list[int]:
        """Current weight of every candidate (0, weak_weight or strong_weight points)."""
        return list(self._state.weights)

    @property
    def confirm(self) -> list[bool]:
        """Whether each candidate is a confirm keyword (`confirm_keywords`: it never decides alone)."""
        return list(self._state.confirm)

    @property
    def total(self) -> float:
        """Sum of the messages' values (see the module docstring)."""
        return sum(self._state.values)

    def _value(self, m: int) -> float:
        message = self.messages[m]
        current = message.current
        asked = False
        if message.unscored:
            routed = current or self.default
        else:
            answer = message.answer if self.llm else KEYWORD_JUDGE
            decisive = self._state.decisive[m] if self.confirm_role else None
            opening = None
            if message.opening is not None and current in self._two_topic:
                opening = self._opening_scores(message.opening)
            agent, asked = verdict(self._state.scores[m], current, self.rules, answer, decisive, opening)
            routed = agent or self.default
        cost = self.call_cost if asked and self.llm else 0.0  # the keyword classifier calls no LLM
        if not asked and current is not None and routed != current:
            cost += self.keyword_switch_cost  # a switch by keywords alone risks more than the data shows
        if routed == message.target:
            return 1.0 - cost
        return (-self.switch_penalty if routed != (current or self.default) else 0.0) - cost

    def _opening_scores(self, present: Sequence[int]) -> dict[str, int]:
        """Decisive points per agent of the candidates in an opening sentence (confirm keywords
        never decide)."""
        out: dict[str, int] = {}
        weights, confirm = self._state.weights, self._state.confirm
        for c in present:
            if weights[c] and not (self.confirm_role and confirm[c]):
                agent = self.candidates[c].agent
                out[agent] = out.get(agent, 0) + weights[c]
        return out

    def _shift(self, m: int, agent: str, old: Option, new: Option, sign: int = 1) -> bool:
        """Move message `m`'s scores from `old` to `new` for `agent` (`sign` -1 undoes it); True
        when anything changed."""
        full = new[0] - old[0]
        decisive = (0 if new[1] else new[0]) - (0 if old[1] else old[0])
        if not full and not decisive:
            return False
        state = self._state
        scores, kept = state.scores[m], state.decisive[m]
        scores[agent] = scores.get(agent, 0) + sign * full
        kept[agent] = kept.get(agent, 0) + sign * decisive
        return True

    def gain(self, c: int, weight: int, confirm: bool = False) -> float:
        """How much the total changes if candidate `c` takes `weight` (as a confirm keyword when
        `confirm`); nothing is kept."""
        state = self._state
        old, new = (state.weights[c], state.confirm[c]), (weight, confirm)
        if old == new:
            return 0.0
        agent = self.candidates[c].agent
        change = 0.0
        for m in state.occurrences[c]:
            if self._shift(m, agent, old, new):
                change += self._value(m) - state.values[m]
                self._shift(m, agent, old, new, -1)
        return change

    def set(self, c: int, weight: int, confirm: bool = False) -> None:
        """Give candidate `c` its new weight (a confirm keyword when `confirm`) and update the
        affected messages."""
        state = self._state
        old, new = (state.weights[c], state.confirm[c]), (weight, confirm)
        agent = self.candidates[c].agent
        state.weights[c], state.confirm[c] = new
        for m in state.occurrences[c]:
            if self._shift(m, agent, old, new):
                state.values[m] = self._value(m)

    def select(self, min_gain: float = 2.0, passes: int = 2) -> None:
        """Coordinate ascent (module docstring); stops early when a pass changes nothing."""
        order = sorted(range(len(self.candidates)),
                       key=lambda c: (-self.candidates[c].messages, self.candidates[c].term, self.candidates[c].agent))
        state = self._state
        for _ in range(passes):
            changed = False
            for c in order:
                current: Option = (state.weights[c], state.confirm[c])
                best, best_gain = current, 0.0
                raise_gain = min_gain
                if any(state.weights[r] for r in self.related[c]):
                    raise_gain = max(min_gain, self.overlap_min_gain or 0.0)
                for option in self._allowed(c):
                    gain = self.gain(c, *option)
                    needed = raise_gain if self._rank(option) > self._rank(current) else 1e-9
                    if gain >= needed and gain > best_gain:
                        best, best_gain = option, gain
                if best != current:
                    self.set(c, *best)
                    changed = True
            if not changed:
                break

    def _rank(self, option: Option) -> int:
        """off < weak < confirm < strong (raising one needs `min_gain`)."""
        weight, confirm = option
        if weight == 0:
            return 0
        if weight < self.rules.strong_weight:
            return 1
        return 2 if confirm else 3

    def _allowed(self, c: int) -> tuple[Option, ...]:
        weights = self._state.weights
        if self.overlap_min_gain is None and any(weights[r] for r in self.related[c]):
            return ((0, False),)
        options: tuple[Option, ...] = ((0, False), (self.rules.weak_weight, False))
        if self.candidates[c].strong_ok:
            options += ((self.rules.strong_weight, False),)
            if self.confirm_role:
                options += ((self.rules.strong_weight, True),)
        return options

    def gate_effect(self, c: int) -> float:
        """The total lost if candidate `c` alone were turned off (0 for an off candidate)."""
        return -self.gain(c, 0)
