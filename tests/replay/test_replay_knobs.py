"""The opt-in `keyword_switch_margin` knob added for the replay's tuning (engine.py)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from stickyroute.config.model import RoutingSettings, Strategy
from stickyroute.replay.corpus import load_agents, replay_config
from stickyroute.replay.explain import explain
from stickyroute.replay.runner import evaluate

DATA = Path(__file__).parent / "data"
BASE = RoutingSettings(strategy=Strategy.STICKY_HEURISTIC)


def decision(settings: RoutingSettings, text: str) -> str:
    config = replay_config(load_agents(DATA / "hand_agents.toml"), settings)
    return explain(config, "telegram", text, current="hotel").splitlines()[-1]


@pytest.mark.parametrize(("margin", "text", "expected"), [
    (None, "a cab, the taxi", "decision: hotel (divergence_pending)"),     # seed: off
    (8, "a cab, the taxi", "decision: taxi (keywords)"),                   # 12 - (0 + 4) = 8 >= 8
    (9, "a cab, the taxi", "decision: hotel (divergence_pending)"),        # 8 < 9
    (6, "a cab to the train", "decision: hotel (neutral)"),                # taxi 6 = train 6: no divergence
    # train 12 beats the runner-up taxi 6 (not the current hotel 0 + 4) by 6:
    (6, "the taxi to the train station", "decision: train (keywords)"),
    (7, "the taxi to the train station", "decision: hotel (divergence_pending)"),
])
def test_keyword_switch_margin(margin, text, expected) -> None:
    assert decision(replace(BASE, keyword_switch_margin=margin), text) == expected


def test_keyword_switch_saves_the_confirming_call(hand_corpus, hand_agents) -> None:
    # divergence 1 costs 5 calls (see test_replay_runner); with margin 8 the switch of hand:2
    # (taxi 12 vs train 0+4) needs no call, the one of hand:1 (taxi 6 vs 4) still does: 4 calls.
    r = evaluate("k", hand_corpus, hand_agents, replace(BASE, divergence_count=1, keyword_switch_margin=8))
    assert (r.accuracy, r.classifier_calls_per_100) == (77.78, 44.44)
