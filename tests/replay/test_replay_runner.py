"""Corpus replay through the real Router with the oracle, noisy and heuristic judges."""

from __future__ import annotations

import math
from dataclasses import replace

from stickyroute.classifier.base import Candidate, ClassificationRequest, Outcome
from stickyroute.classifier.groq import system_prompt
from stickyroute.config.model import RoutingSettings, Strategy
from stickyroute.replay.corpus import Turn
from stickyroute.replay.judges import NoisyJudge, OracleJudge, TurnCursor
from stickyroute.replay.metrics import row
from stickyroute.replay.runner import evaluate, play

SEED = RoutingSettings(strategy=Strategy.STICKY_HEURISTIC)
REQUEST = ClassificationRequest("telegram", "anything at all", (Candidate("hotel"), Candidate("taxi")))


async def test_seed_sticky_heuristic_with_the_oracle(hand_corpus, hand_agents) -> None:
    played, tally = await play(hand_corpus, hand_agents, SEED, "oracle")
    # hand:1: classified hotel; taxi 6 vs hotel 0+4 diverges once (count 1 of 2): stays hotel;
    #         no keywords: neutral.
    # hand:2: "ok" is an acknowledgement (default, nothing cached); the train question is the
    #         first message (classified); "cab from the station": train's own keyword -> agreement;
    #         taxi 12 vs 4 -> counter 1; again -> counter 2 -> oracle says taxi -> switch.
    # hand:3: the oracle answers none for oos -> classified_default (right).
    assert [p.agents for p in played] == [
        ("hotel", "hotel", "hotel"),
        ("default", "train", "train", "train", "taxi"),
        ("default",),
    ]
    assert [p.reasons for p in played] == [
        ("classified", "divergence_pending", "neutral"),
        ("ack", "classified", "agreement", "divergence_pending", "llm_confirmed"),
        ("classified_default",),
    ]
    # correct 1 + 2 + 1 = 4 of 9; lenient adds hand:2 turn 2 (train is in its domains): 5 of 9;
    # switches 2, reached 1 (hand:2 at turn 4: delay 2); calls 4.
    candidates = tuple(Candidate(a.name, a.description) for a in hand_agents) + (Candidate("default"),)
    called = ["I need a hotel room for two nights", "When does the next train leave the station?",
              "Yes a taxi again, that cab for sure", "what is the meaning of life anyway"]
    tokens = sum(math.ceil((len(system_prompt(candidates)) + len(t)) / 4) for t in called)
    assert row("s", {}, tally).as_dict() | {"settings": None} == {
        "strategy": "s", "settings": None, "messages": 9, "accuracy": 44.44, "accuracy_lenient": 55.56,
        "switch_recall": 50.0, "switch_delay": 2.0, "false_switches_per_100": 0.0, "boomerangs_per_100": 0.0,
        "classifier_calls_per_100": 44.44, "tokens": tokens,
    }


def test_divergence_one_switches_at_the_first_divergence(hand_corpus, hand_agents) -> None:
    # hand:1 -> hotel taxi taxi (3 right, 2 calls); hand:2 -> default train train taxi taxi
    # (3 right: the agreement turn stays wrong; 2 calls); hand:3 right, 1 call.
    r = evaluate("d1", hand_corpus, hand_agents, replace(SEED, divergence_count=1))
    assert (r.accuracy, r.switch_recall, r.switch_delay, r.classifier_calls_per_100) == (77.78, 100.0, 0.5, 55.56)
    assert r.settings == {"strategy": "sticky_heuristic", "confidence_threshold": 6, "sticky_bonus": 4,
                          "divergence_count": 1, "first_message_margin": None, "early_confirm_margin": None,
                          "keyword_switch_margin": None, "contest_confirm": False, "agent_hints": "confirm"}


def test_off_routes_everything_to_the_default(hand_corpus, hand_agents) -> None:
    r = evaluate("off", hand_corpus, hand_agents, RoutingSettings())
    # only the oos turn is right on the default: 1 of 9.
    assert (r.accuracy, r.classifier_calls_per_100, r.tokens) == (11.11, 0.0, 0)


def test_explicit_only_classifies_once_per_session(hand_corpus, hand_agents) -> None:
    # one call per conversation (hand:2's "ok" is not classified): 3 calls; hotel x3 (1 right),
    # default train train train train (1 right: "ok" is train's), default (right): 3 of 9.
    r = evaluate("eo", hand_corpus, hand_agents, RoutingSettings(strategy=Strategy.EXPLICIT_ONLY))
    assert (r.accuracy, r.classifier_calls_per_100) == (33.33, 33.33)


def test_heuristic_judge(hand_corpus, hand_agents) -> None:
    # first messages by keywords: hotel (6), train (12), oos text has none -> classified_default;
    # then as with the oracle (the confirming message scores taxi 12): same routes, same calls.
    r = evaluate("h", hand_corpus, hand_agents, SEED, "heuristic")
    assert (r.accuracy, r.classifier_calls_per_100) == (44.44, 44.44)


async def test_oracle_answers_gold_and_none_for_general_and_oos() -> None:
    cursor = TurnCursor(Turn("x", "taxi"))
    judge = OracleJudge(cursor)
    assert (await judge.classify(REQUEST)).agent == "taxi"
    cursor.turn = Turn("thanks, bye", "taxi", general=True)
    assert (await judge.classify(REQUEST)).outcome is Outcome.NONE
    cursor.turn = Turn("what?", "oos")
    assert (await judge.classify(REQUEST)).outcome is Outcome.NONE


async def test_noisy_judge_with_p_one_always_answers_another_agent() -> None:
    cursor = TurnCursor(Turn("x", "hotel"))
    judge = NoisyJudge(cursor, 1.0, ("hotel", "taxi"), seed=3)
    assert [(await judge.classify(REQUEST)).agent for _ in range(5)] == ["taxi"] * 5


async def test_noisy_judge_with_p_zero_is_the_oracle() -> None:
    cursor = TurnCursor(Turn("x", "hotel"))
    judge = NoisyJudge(cursor, 0.0, ("hotel", "taxi", "train"), seed=3)
    assert [(await judge.classify(REQUEST)).agent for _ in range(5)] == ["hotel"] * 5


async def test_noisy_judge_is_seeded() -> None:
    async def answers(seed: int) -> list[str | None]:
        judge = NoisyJudge(TurnCursor(Turn("x", "hotel")), 0.5, ("hotel", "taxi", "train"), seed=seed)
        return [(await judge.classify(REQUEST)).agent for _ in range(40)]

    first = await answers(7)
    assert first == await answers(7)
    assert set(first) == {"hotel", "taxi", "train"}
    assert 10 <= first.count("hotel") <= 30  # p = 0.5 of 40, far from 0 or 40


def test_noisy_replay_is_reproducible(hand_corpus, hand_agents) -> None:
    a = evaluate("n", hand_corpus, hand_agents, SEED, "noisy:0.5", seed=11)
    b = evaluate("n", hand_corpus, hand_agents, SEED, "noisy:0.5", seed=11)
    assert a == b
    worst = evaluate("n", hand_corpus, hand_agents, SEED, "noisy:1.0", seed=11)
    # every classification is wrong: hand:3's none becomes an agent, the first routes are wrong.
    assert worst.accuracy < 44.44


def test_heuristic_judge_spends_no_tokens(hand_corpus, hand_agents) -> None:
    assert evaluate("h", hand_corpus, hand_agents, SEED, "heuristic").tokens == 0
