"""Shared data of the replay tests: the hand-made corpus (data/hand.jsonl) and its agents."""

from __future__ import annotations

from pathlib import Path

import pytest

from stickyroute.config.model import Agent
from stickyroute.replay.corpus import Conversation, load_agents, load_corpus

DATA = Path(__file__).parent / "data"


@pytest.fixture
def hand_corpus() -> list[Conversation]:
    return load_corpus(DATA / "hand.jsonl")


@pytest.fixture
def hand_agents() -> tuple[Agent, ...]:
    return load_agents(DATA / "hand_agents.toml")
