"""Replay metrics from (gold turns, routed agents) per conversation; the two trivial baselines.

Definitions (issue 5), N = messages (turns), percentages 0-100, "per 100" = per 100 messages:

- correct(i): routed == gold, or gold is `oos` and routed is the default agent.
- accuracy = correct turns / N. accuracy_lenient also counts routed in the turn's `domains`.
- gold switch at turn i > 0: gold(i) != gold(i-1); its window runs to the next gold switch
  (exclusive) or the end of the conversation. The switch is *reached* when some turn k in the
  window is routed to gold(i); switch_recall = reached / switches; switch_delay = mean (k - i)
  over reached switches with k the first such turn (0 = routed right on the switch turn).
- false switch: turn i > 0 with routed(i) != routed(i-1) and not correct(i).
- boomerang: a return A -> B -> A within 3 messages: a change of route at turn k (routed(k) !=
  routed(k-1)) back to A = routed(j-1), where j is the previous change of route and k - j <= 2
  (the detour to B lasted 1 or 2 messages: A B A or A B B A).
- classifier_calls_per_100 = calls / N * 100; tokens = estimated prompt tokens (total).

Baselines: stay_first routes every turn to the first turn's gold (`oos` -> default agent): 0 calls.
classify_every routes every turn to its gold (100% by definition) with one call per turn whose
stripped text has at least `short_chars` (15) characters (corpus README, baseline (b)).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from stickyroute.replay.corpus import DEFAULT_AGENT, OOS, Conversation, Turn

BOOMERANG_DETOUR = 2
"""Longest detour (messages on B) that still counts as a boomerang A -> B -> A."""


@dataclass(slots=True)
class Tally:
    """Raw counts, summed over conversations (metrics are derived from these)."""

    messages: int = 0
    correct: int = 0
    correct_lenient: int = 0
    switches: int = 0
    reached: int = 0
    delay_sum: int = 0
    false_switches: int = 0
    boomerangs: int = 0
    calls: int = 0
    tokens: int = 0

    def add(self, other: Tally) -> None:
        for name in self.__slots__:
            setattr(self, name, getattr(self, name) + getattr(other, name))


def is_correct(turn: Turn, routed: str, default: str = DEFAULT_AGENT) -> bool:
    """routed == gold, or an `oos` turn routed to the default agent."""
    return routed == turn.gold or (turn.gold == OOS and routed == default)


def score_conversation(turns: Sequence[Turn], routed: Sequence[str], default: str = DEFAULT_AGENT) -> Tally:
    """Counts for one conversation (calls and tokens left at 0: the runner adds them)."""
    if len(turns) != len(routed):
        raise ValueError(f"{len(turns)} turns but {len(routed)} routed agents")
    tally = Tally(messages=len(turns))
    ok = [is_correct(t, r, default) for t, r in zip(turns, routed, strict=False)]
    tally.correct = sum(ok)
    tally.correct_lenient = sum(o or r in t.domains for o, t, r in zip(ok, turns, routed, strict=False))
    starts = [i for i in range(1, len(turns)) if turns[i].gold != turns[i - 1].gold]
    for n, start in enumerate(starts):
        end = starts[n + 1] if n + 1 < len(starts) else len(turns)
        tally.switches += 1
        target = turns[start].gold
        for k in range(start, end):
            if is_correct(turns[k], routed[k], default) and turns[k].gold == target:
                tally.reached += 1
                tally.delay_sum += k - start
                break
    last_change: int | None = None
    for k in range(1, len(routed)):
        if routed[k] == routed[k - 1]:
            continue
        if not ok[k]:
            tally.false_switches += 1
        if last_change is not None and k - last_change <= BOOMERANG_DETOUR and routed[k] == routed[last_change - 1]:
            tally.boomerangs += 1
        last_change = k
    return tally


@dataclass(frozen=True, slots=True)
class Row:
    """One line of the results table (`--format json` object)."""

    strategy: str
    settings: dict[str, object] = field(default_factory=dict)
    messages: int = 0
    accuracy: float = 0.0
    accuracy_lenient: float = 0.0
    switch_recall: float = 0.0
    switch_delay: float = 0.0
    false_switches_per_100: float = 0.0
    boomerangs_per_100: float = 0.0
    classifier_calls_per_100: float = 0.0
    tokens: int = 0

    def as_dict(self) -> dict[str, object]:
        return {name: getattr(self, name) for name in self.__slots__}


def row(strategy: str, settings: dict[str, object], tally: Tally) -> Row:
    """Derive the table row from raw counts (0 for rates over nothing)."""
    n = tally.messages

    def per(count: int, total: int) -> float:
        return round(100.0 * count / total, 2) if total else 0.0

    return Row(
        strategy=strategy,
        settings=settings,
        messages=n,
        accuracy=per(tally.correct, n),
        accuracy_lenient=per(tally.correct_lenient, n),
        switch_recall=per(tally.reached, tally.switches),
        switch_delay=round(tally.delay_sum / tally.reached, 3) if tally.reached else 0.0,
        false_switches_per_100=per(tally.false_switches, n),
        boomerangs_per_100=per(tally.boomerangs, n),
        classifier_calls_per_100=per(tally.calls, n),
        tokens=tally.tokens,
    )


def stay_first(conversations: Iterable[Conversation], default: str = DEFAULT_AGENT) -> Tally:
    """Baseline (a): every turn routed to the first turn's gold agent; no calls."""
    total = Tally()
    for conv in conversations:
        first = conv.turns[0].gold
        agent = default if first == OOS else first
        total.add(score_conversation(conv.turns, [agent] * len(conv.turns), default))
    return total


def classify_every(conversations: Iterable[Conversation], short_chars: int = 15,
                   tokens_of: Callable[[str], int] | None = None, default: str = DEFAULT_AGENT) -> Tally:
    """Baseline (b): every turn routed to its gold; one call per turn of >= short_chars stripped chars.

    `tokens_of(text)` estimates one call's prompt tokens (None: tokens stay 0).
    """
    total = Tally()
    for conv in conversations:
        routed = [default if t.gold == OOS else t.gold for t in conv.turns]
        tally = score_conversation(conv.turns, routed, default)
        for turn in conv.turns:
            if len(turn.text.strip()) >= short_chars:
                tally.calls += 1
                tally.tokens += tokens_of(turn.text) if tokens_of is not None else 0
        total.add(tally)
    return total
