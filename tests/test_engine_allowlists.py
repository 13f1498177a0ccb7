"""Who may be chosen (issue #11), through the pure engine (`tests.scenario.Playbook`): a channel's
`agents` list, `hidden` agents, `explicit_denied`, `explicit_limited` (per-sender
`explicit_switches_per_minute`), routes to agents the channel no longer reaches, and the
`switched` flag of every decision that moves a conversation.

Rows state the exact (agent, reason) of each decision, the classifier calls and the route left
as (agent, explicit, candidate, counter) or None.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from stickyroute.config.model import Strategy
from stickyroute.routing.rules import build_rules
from tests.scenario import (
    MIN,
    OTHER_USER,
    Playbook,
    ScriptedClassifier,
    Step,
    agent,
    agents,
    make_config,
    text,
)

OFF, ONLY, HEUR = Strategy.OFF, Strategy.EXPLICIT_ONLY, Strategy.STICKY_HEURISTIC
ROSTER = agents(
    agent("general"),
    agent("coder", keywords=("python", "refactor", "stack trace")),
    agent("billing", aliases=("accounts",), keywords=("invoice", "refund")),
    agent("support", keywords=("password", "login", "locked out")),
    agent("internal", keywords=("audit", "ledger"), hidden=True),
)
ON_CHANNEL = ("general", "coder", "billing", "internal")
"""The channel's `agents` list: support is not reachable here; internal is, but hidden."""


def playbook(strategy: Strategy = HEUR, answers: Any = None, allowed: Sequence[str] | None = ON_CHANNEL,
             **settings: Any) -> Playbook:
    return Playbook(make_config(strategy, roster=ROSTER, allowed=allowed, **settings), ScriptedClassifier(answers))


def test_layer2_agents_are_the_reachable_ones_that_are_not_hidden() -> None:
    config = make_config(HEUR, roster=ROSTER, allowed=ON_CHANNEL)
    rules = build_rules(config, config.channels["telegram"], lists_agents=True)
    everyone = make_config(HEUR, roster=ROSTER)
    open_rules = build_rules(everyone, everyone.channels["telegram"], lists_agents=True)
    assert (rules.agents, rules.reachable, rules.choosable, open_rules.agents, open_rules.reachable) == (
        ("general", "coder", "billing"), frozenset(ON_CHANNEL), frozenset({"general", "coder", "billing"}),
        ("general", "coder", "billing", "support"), frozenset(ROSTER))
    assert (rules.scorer.scores("audit the ledger, reset my password"), rules.scorer.scores("refund my invoice")) == (
        {}, {"billing": 12})


EXPLICIT_CASES = [
    pytest.param(["/agent support"], OFF, [("general", "explicit_denied")], None, id="not-on-the-channel"),
    pytest.param(["/agent internal"], OFF, [("general", "explicit_denied")], None, id="hidden"),
    pytest.param(["/agent coder", "/agent support please"], OFF,
                 [("coder", "explicit"), ("coder", "explicit_denied")], ("coder", True, None, 0),
                 id="denied-keeps-the-explicit-route"),
    pytest.param(["/agent accounts"], OFF, [("billing", "explicit")], ("billing", True, None, 0), id="alias-allowed"),
    pytest.param(["@support can you check my login"], ONLY, [("general", "classified_default")],
                 ("general", False, None, 0), id="mention-of-a-denied-agent-is-ignored"),
    pytest.param(["hi @support and @coder, the stack trace"], OFF, [("coder", "explicit")], ("coder", True, None, 0),
                 id="the-allowed-mention-wins"),
    pytest.param(["@internal audit the ledger please"], OFF, [("general", "default")], None,
                 id="mention-of-a-hidden-agent-is-ignored"),
]


@pytest.mark.parametrize(("steps", "strategy", "expected", "left"), EXPLICIT_CASES)
async def test_explicit_switches_reach_only_allowed_agents(
        steps: list[Step], strategy: Strategy, expected: list[tuple[str, str]],
        left: tuple[str, bool, str | None, int] | None) -> None:
    scenario = playbook(strategy, answers="support")  # the classifier's "support" is not a candidate: none
    assert (await scenario.play(steps), scenario.state()) == (expected, left)


async def test_the_classifier_is_offered_only_reachable_visible_agents() -> None:
    scenario = playbook(ONLY, answers="coder")
    assert await scenario.play(["something long enough to classify"]) == [("coder", "classified")]
    assert [c.name for c in scenario.classifier.calls[0].candidates] == ["general", "coder", "billing"]


async def test_keywords_of_hidden_and_unreachable_agents_never_score() -> None:
    scenario = playbook(HEUR, answers=None, first_message_margin=0)
    assert await scenario.play(["please audit the ledger entries", "my password login is locked out"]) == [
        ("general", "classified_default"), ("general", "neutral")]
    assert scenario.calls == 1


LIMIT_CASES = [
    pytest.param(2.0, ["/agent coder", "/agent billing", "/agent coder"],
                 [("coder", "explicit"), ("billing", "explicit"), ("billing", "explicit_limited")],
                 ("billing", True, None, 0), id="third-in-a-minute-limited"),
    pytest.param(2.0, ["/agent coder", "/agent billing", (30.0, "/agent coder")],
                 [("coder", "explicit"), ("billing", "explicit"), ("coder", "explicit")],
                 ("coder", True, None, 0), id="refilled-after-30-s"),
    pytest.param(1.0, ["/agent coder", "@billing the invoice"],
                 [("coder", "explicit"), ("coder", "explicit_limited")], ("coder", True, None, 0),
                 id="a-mention-counts-too"),
    pytest.param(1.0, ["/agent coder", "/agent auto", "/agent nobody"],
                 [("coder", "explicit"), ("general", "auto_reset"), ("general", "default")], None,
                 id="auto-and-unknown-spend-nothing"),
    pytest.param(0.0, ["/agent coder"], [("general", "explicit_limited")], None, id="zero-never"),
]


@pytest.mark.parametrize(("rate", "steps", "expected", "left"), LIMIT_CASES)
async def test_explicit_switches_per_minute_per_sender(
        rate: float, steps: list[Step], expected: list[tuple[str, str]],
        left: tuple[str, bool, str | None, int] | None) -> None:
    scenario = playbook(OFF, explicit_switches_per_minute=rate)
    assert (await scenario.play(steps), scenario.state()) == (expected, left)


async def test_the_switch_limit_is_per_sender() -> None:
    scenario = playbook(OFF, explicit_switches_per_minute=1.0)
    assert await scenario.play(["/agent coder", "/agent billing", text("/agent billing", sender=OTHER_USER)]) == [
        ("coder", "explicit"), ("coder", "explicit_limited"), ("billing", "explicit")]


UNREACHABLE_ROUTE_CASES = [
    pytest.param("ok", [("general", "ack")], id="ack-goes-to-the-default"),
    pytest.param("something long enough to classify", [("coder", "classified")], id="first-message-again"),
]


@pytest.mark.parametrize(("message", "expected"), UNREACHABLE_ROUTE_CASES)
async def test_a_route_to_an_agent_the_channel_no_longer_reaches_is_no_route(
        message: str, expected: list[tuple[str, str]]) -> None:
    scenario = playbook(ONLY, answers="coder")
    scenario.seed("support", age_s=MIN)  # written before a reload took support off the channel
    assert await scenario.play([message]) == expected


async def test_a_route_to_a_hidden_agent_of_the_channel_holds() -> None:
    scenario = playbook(ONLY, answers="coder")
    scenario.seed("internal", age_s=MIN, explicit=True)  # an operator's pin
    assert await scenario.play(["something long enough to classify"]) == [("internal", "explicit_pin")]


SWITCHED_CASES = [
    pytest.param(OFF, None, [], ["/agent coder"], [True], id="explicit-from-the-default"),
    pytest.param(OFF, None, [], ["/agent general"], [False], id="explicit-to-where-it-is"),
    pytest.param(OFF, None, [], ["/agent coder", "/agent coder"], [True, False], id="explicit-again"),
    pytest.param(OFF, None, [], ["/agent coder", "/agent auto"], [True, True], id="auto-reset-away"),
    pytest.param(OFF, None, [], ["/agent auto"], [False], id="auto-reset-at-the-default"),
    pytest.param(ONLY, "coder", [], ["something long enough to classify"], [False], id="first-classification"),
    pytest.param(HEUR, "billing", ["coder"], ["refund my invoice please", "the invoice and the refund again"],
                 [False, True], id="llm-confirmed"),
    pytest.param(HEUR, "coder", ["coder"], ["refund my invoice please", "the invoice and the refund again"],
                 [False, False], id="llm-rejected"),
    pytest.param(Strategy.STICKY_TTL, "coder", ["billing"], ["something long enough to classify"],
                 [True], id="reclassified-elsewhere"),
    pytest.param(Strategy.STICKY_TTL, "billing", ["billing"], ["something long enough to classify"],
                 [False], id="reclassified-same"),
]


@pytest.mark.parametrize(("strategy", "answers", "seed", "steps", "switched"), SWITCHED_CASES)
async def test_a_decision_says_whether_it_switched_the_conversation(
        strategy: Strategy, answers: Any, seed: list[str], steps: list[Step], switched: list[bool]) -> None:
    scenario = playbook(strategy, answers=answers, allowed=None)
    for agent_ in seed:  # chosen 31 minutes ago (sticky_ttl classifies again), active a minute ago
        scenario.seed(agent_, age_s=31 * MIN, idle_s=MIN)
    seen = []
    for step in steps:
        after, item = step if isinstance(step, tuple) else (0.0, step)
        seen.append((await scenario.send(item, after)).switched)
    assert seen == switched


async def test_a_keyword_switch_is_a_switch() -> None:
    scenario = playbook(HEUR, allowed=None, keyword_switch_margin=6)
    scenario.seed("coder", age_s=MIN)
    decision = await scenario.send("refund my invoice, the invoice refund")
    assert (decision.agent, decision.reason, decision.switched) == ("billing", "keywords", True)
