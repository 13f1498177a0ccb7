"""`learn --holdout-fraction F`: learn on part of a corpus, measure before/after on the rest.

The split is by conversation (no conversation is in both parts) and deterministic: conversations
are ranked by SHA-256 of `"<seed>:<id>"` and the first round(F * n) are held out, so the split
does not depend on file order and the same seed always holds out the same conversations.
`split_by_intent` does the same within each intent (the first turn's `intent`, CLINC150): every
intent has examples on both sides, so a keyword learned from one intent's wording is measured
on other examples of that intent, not only on paraphrases it was tuned on.

The measurement is the replay's own (`stickyroute.replay.runner.play`, `metrics.row`): the held-out
conversations routed under the given settings (the shipped `RECOMMENDED` by default) with the
keyword classifier (no LLM) and with the oracle judge, for the agents as they were ("before")
and for each "after" variant (the learned packs merged into the agents' lists, or alone).
`oos_recall`: the share of `oos` turns (CLINC150: no agent should take them) routed to the
default agent; None when the held-out part has none.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

from stickyroute.config.model import Agent, RoutingSettings
from stickyroute.replay.corpus import DEFAULT_AGENT, OOS, Conversation
from stickyroute.replay.metrics import Row, row
from stickyroute.replay.runner import play, settings_dict

JUDGES = ("heuristic", "oracle")


class _HasId(Protocol):
    @property
    def id(self) -> str: ...


T = TypeVar("T", bound=_HasId)


def split_conversations(conversations: Sequence[T], fraction: float, seed: int = 0) -> tuple[list[T], list[T]]:
    """(learning part, held-out part), each in the input order (module docstring).

    Raises ValueError unless 0 < fraction < 1.
    """
    if not 0.0 < fraction < 1.0:
        raise ValueError(f"--holdout-fraction must be between 0 and 1 (exclusive), got {fraction}")
    ranked = sorted(conversations, key=lambda c: hashlib.sha256(f"{seed}:{c.id}".encode()).hexdigest())
    held = {c.id for c in ranked[:round(fraction * len(conversations))]}
    return [c for c in conversations if c.id not in held], [c for c in conversations if c.id in held]


def split_by_intent(conversations: Sequence[Conversation], fraction: float, seed: int = 0
                    ) -> tuple[list[Conversation], list[Conversation]]:
    """(learning part, held-out part) split within each intent of the first turn (conversations
    without one form one group), each part in input order; ValueError unless 0 < fraction < 1."""
    groups: dict[str | None, list[Conversation]] = {}
    for conv in conversations:
        groups.setdefault(conv.turns[0].intent if conv.turns else None, []).append(conv)
    held: set[str] = set()
    for members in groups.values():
        held.update(c.id for c in split_conversations(members, fraction, seed)[1])
    return [c for c in conversations if c.id not in held], [c for c in conversations if c.id in held]


@dataclass(frozen=True, slots=True)
class HoldoutRow:
    """One line of the before/after table: which keywords, which classifier, the replay's row."""

    keywords: str
    judge: str
    row: Row
    oos_recall: float | None


def measure(held: Sequence[Conversation], variants: Mapping[str, Sequence[Agent]], settings: RoutingSettings,
            judges: Sequence[str] = JUDGES) -> list[HoldoutRow]:
    """Replay `held` under every (judge, keywords variant) pair, judges outermost."""
    out = []
    for judge in judges:
        for name, agents in variants.items():
            played, tally = asyncio.run(play(held, agents, settings, judge))
            oos = [(t, routed) for conv, p in zip(held, played, strict=True)
                   for t, routed in zip(conv.turns, p.agents, strict=True) if t.gold == OOS]
            recall = sum(routed == DEFAULT_AGENT for _t, routed in oos) / len(oos) if oos else None
            out.append(HoldoutRow(name, judge, row(name, settings_dict(settings), tally), recall))
    return out


def format_rows(rows: Sequence[HoldoutRow]) -> str:
    """A fixed-width table: keywords, classifier, accuracy, false switches, calls, oos recall."""
    header = ("keywords", "classifier", "acc%", "sw.recall%", "false/100", "calls/100", "oos recall%")
    cells = [header] + [(
        r.keywords, r.judge, f"{r.row.accuracy:.2f}", f"{r.row.switch_recall:.2f}",
        f"{r.row.false_switches_per_100:.2f}", f"{r.row.classifier_calls_per_100:.2f}",
        "-" if r.oos_recall is None else f"{100 * r.oos_recall:.2f}") for r in rows]
    widths = [max(len(line[i]) for line in cells) for i in range(len(header))]
    return "\n".join(
        "  ".join(v.ljust(w) if i < 2 else v.rjust(w) for i, (v, w) in enumerate(zip(line, widths, strict=True)))
        for line in cells)
