"""Simulated agents that hint in replay (issue #12): `--agent-hints P,R` is seeded, P=R=0 changes
nothing, recall on misrouted turns moves them, and the option is checked."""

from __future__ import annotations

from dataclasses import replace

import pytest

from stickyroute.config.model import AgentHints
from stickyroute.replay.cli import RECOMMENDED, parse_rates
from stickyroute.replay.corpus import load_agents, load_corpus
from stickyroute.replay.runner import evaluate

CORPUS = "eval/corpus/dev.jsonl"
AGENTS = "eval/corpus/agents.toml"


@pytest.fixture(scope="module")
def corpus():
    return load_corpus(CORPUS, 150), load_agents(AGENTS)


def test_no_hints_at_zero_rates_equals_hints_off(corpus) -> None:
    conversations, agents = corpus
    off = evaluate("off", conversations, agents, replace(RECOMMENDED, agent_hints=AgentHints.OFF))
    zero = evaluate("zero", conversations, agents, RECOMMENDED, agent_hints=(0.0, 0.0))
    assert (zero.accuracy, zero.classifier_calls_per_100) == (off.accuracy, off.classifier_calls_per_100)


def test_hints_are_seeded_and_confirm_with_full_recall_gains_accuracy(corpus) -> None:
    conversations, agents = corpus
    settings = replace(RECOMMENDED, agent_hints=AgentHints.CONFIRM)
    off = evaluate("off", conversations, agents, replace(RECOMMENDED, agent_hints=AgentHints.OFF))
    one = evaluate("a", conversations, agents, settings, seed=3, agent_hints=(0.05, 0.9))
    two = evaluate("b", conversations, agents, settings, seed=3, agent_hints=(0.05, 0.9))
    assert one.as_dict() | {"strategy": ""} == two.as_dict() | {"strategy": ""}
    assert (one.accuracy > off.accuracy, one.classifier_calls_per_100 > off.classifier_calls_per_100) == (True, True)


@pytest.mark.parametrize(("text", "rates"), [("0,0.5", (0.0, 0.5)), ("0.05, 0.9", (0.05, 0.9))])
def test_rates_parse(text: str, rates: tuple[float, float]) -> None:
    assert parse_rates(text) == rates


@pytest.mark.parametrize("text", ["0.5", "a,b", "0,1.5", "-0.1,0.5", "0,0.5,1"])
def test_bad_rates_say_what_is_expected(text: str) -> None:
    with pytest.raises(ValueError, match=r"--agent-hints: expected P,R with both between 0 and 1"):
        parse_rates(text)
