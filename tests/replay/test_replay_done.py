"""Simulated `done` and non-sticky agents in replay (issue #22): after the last turn of a gold
segment the agent that got it says `done` with recall R (falsely with probability P after any other
turn), so the next message is decided from scratch; `--non-sticky` makes an agent a detour."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from stickyroute.cli.main import main
from stickyroute.replay.agents_file import ExtraPacks
from stickyroute.replay.cli import RECOMMENDED, parse_rates
from stickyroute.replay.corpus import Conversation, Turn, load_agents, load_corpus
from stickyroute.replay.runner import evaluate, play

DATA = Path(__file__).parent / "data"
HAND, HAND_AGENTS = DATA / "hand.jsonl", DATA / "hand_agents.toml"
TRIP = Conversation("trip", (Turn("I need a hotel room for two nights", "hotel"),
                             Turn("Also book me a taxi to get there", "taxi"),
                             Turn("It should arrive by 5 pm please", "taxi"),
                             Turn("and one more hotel room for my friend", "hotel")))


def reasons(rates: tuple[float, float] | None, judge: str = "oracle", agents_extra: ExtraPacks | None = None,
            conversation: Conversation = TRIP) -> tuple[tuple[str, ...], tuple[str, ...], int]:
    played, tally = asyncio.run(play([conversation], load_agents(HAND_AGENTS, agents_extra), RECOMMENDED, judge,
                                     agent_done=rates))
    return played[0].agents, played[0].reasons, tally.calls


@pytest.mark.parametrize(
    ("rates", "expected"),
    [
        pytest.param(None, (("hotel", "taxi", "taxi", "hotel"), ("keywords", "llm_confirmed", "neutral", "keywords"),
                            1), id="no-done"),
        pytest.param((0.0, 0.0), (("hotel", "taxi", "taxi", "hotel"),
                                  ("keywords", "llm_confirmed", "neutral", "keywords"), 1), id="zero-rates"),
        pytest.param((0.0, 1.0), (("hotel", "taxi", "taxi", "hotel"), ("keywords", "keywords", "neutral", "keywords"),
                                  0), id="done-at-each-segment-end"),
        pytest.param((1.0, 1.0), (("hotel", "taxi", "taxi", "hotel"),
                                  ("keywords", "keywords", "classified", "keywords"), 1),
                     id="a-false-done-after-every-turn"),
    ],
)
def test_done_at_the_end_of_a_gold_segment(rates, expected) -> None:
    assert reasons(rates) == expected


def test_done_is_seeded() -> None:
    conversations, agents = load_corpus("eval/corpus/dev.jsonl", 60), load_agents("eval/corpus/agents.toml")
    one = evaluate("a", conversations, agents, RECOMMENDED, seed=3, agent_done=(0.05, 0.9))
    two = evaluate("b", conversations, agents, RECOMMENDED, seed=3, agent_done=(0.05, 0.9))
    none = evaluate("c", conversations, agents, RECOMMENDED, seed=3)
    assert one.as_dict() | {"strategy": ""} == two.as_dict() | {"strategy": ""}
    assert (one.accuracy > none.accuracy, one.classifier_calls_per_100 < none.classifier_calls_per_100) == (True, True)


def test_a_non_sticky_agent_is_a_detour() -> None:
    assert reasons(None, agents_extra=ExtraPacks(None, non_sticky=frozenset({"taxi"}))) == (
        ("hotel", "taxi", "hotel", "hotel"), ("keywords", "detour", "neutral", "agreement"), 1)


def test_the_agent_done_option_names_itself() -> None:
    assert parse_rates("0.05,0.9", "--agent-done") == (0.05, 0.9)
    with pytest.raises(ValueError, match=r"--agent-done: expected P,R with both between 0 and 1, got '1,2'"):
        parse_rates("1,2", "--agent-done")


def test_the_replay_command_takes_done_and_non_sticky(capsys) -> None:
    code = main(["replay", str(HAND), "--agents", str(HAND_AGENTS), "--strategy", "recommended",
                 "--agent-done", "0,1", "--non-sticky", "taxi"])
    out = capsys.readouterr().out.splitlines()
    assert (code, out[0]) == (0, f"{HAND}: 3 conversations, classifier oracle, agent done P,R = 0,1, non-sticky taxi")


def test_an_unknown_non_sticky_agent_is_an_error(capsys) -> None:
    code = main(["replay", str(HAND), "--agents", str(HAND_AGENTS), "--non-sticky", "taxi,bus"])
    assert (code, capsys.readouterr().err) == (2, f"replay: {HAND_AGENTS}: (non-sticky): no agent named \"bus\" "
                                                  "in the file\n")
