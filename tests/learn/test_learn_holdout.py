"""The holdout split is by conversation and deterministic; the table is the replay's own numbers."""

from __future__ import annotations

from pathlib import Path

import pytest

from stickyroute.learn.holdout import format_rows, measure, split_conversations
from stickyroute.replay.cli import RECOMMENDED
from stickyroute.replay.corpus import Conversation, Turn, load_agents, load_corpus

DATA = Path(__file__).parents[1] / "replay" / "data"


def convs(n: int) -> list[Conversation]:
    return [Conversation(f"c{i}", (Turn(f"turn of c{i}", "a"),)) for i in range(n)]


def test_split_holds_out_whole_conversations_deterministically() -> None:
    learn, held = split_conversations(convs(10), 0.3, seed=0)
    assert (len(learn), len(held)) == (7, 3)
    assert {c.id for c in learn}.isdisjoint({c.id for c in held})
    assert [c.id for c in held] == ["c3", "c4", "c6"]  # SHA-256 of "0:<id>" ranks them
    assert split_conversations(list(reversed(convs(10))), 0.3, seed=0)[1] == list(reversed(held))  # order-free
    assert [c.id for c in split_conversations(convs(10), 0.3, seed=1)[1]] != ["c3", "c4", "c6"]
    assert [c.id for c in learn] == sorted((c.id for c in learn), key=lambda i: int(i[1:]))  # input order kept


@pytest.mark.parametrize("fraction", [0.0, 1.0, -0.5, 2.0])
def test_fraction_must_be_strictly_between_0_and_1(fraction) -> None:
    with pytest.raises(ValueError, match="--holdout-fraction must be between 0 and 1"):
        split_conversations(convs(4), fraction)


def test_measure_replays_each_variant_with_both_judges() -> None:
    agents = load_agents(DATA / "hand_agents.toml")
    rows = measure(load_corpus(DATA / "hand.jsonl"), {"before": agents, "same": agents}, RECOMMENDED)
    assert [(r.keywords, r.judge) for r in rows] == [("before", "heuristic"), ("same", "heuristic"),
                                                     ("before", "oracle"), ("same", "oracle")]
    assert rows[0].row.as_dict() | {"strategy": "same"} == rows[1].row.as_dict()
    assert rows[0].oos_recall == 1.0  # the hand corpus has CLINC-style `oos` turns: all went to the default
    assert format_rows(rows).splitlines()[0].split() == ["keywords", "classifier", "acc%", "sw.recall%", "false/100",
                                                         "calls/100", "oos", "recall%"]
