"""`gate.predict` decides exactly as the engine does with the keyword classifier (counter at 0)."""

from __future__ import annotations

import itertools
from dataclasses import replace

import pytest

from stickyroute.classifier.base import Classification, Outcome
from stickyroute.classifier.keywords import KeywordClassifier
from stickyroute.config.model import Agent, Channel, ChannelType, Config, RoutingSettings, Strategy
from stickyroute.core.route import Route
from stickyroute.learn.gate import GateRules, is_unscored, predict
from stickyroute.replay.cli import RECOMMENDED
from stickyroute.routing.engine import NeedsClassification, conclude, decide
from stickyroute.routing.envelope import Envelope, MessageKind
from stickyroute.routing.explicit import AgentNames
from stickyroute.routing.rules import build_rules

AGENTS = ("a", "b", "c", "d")  # d is the channel default
TEXT = "a message long enough to be scored"
SETTINGS = {
    "recommended": RECOMMENDED,
    "seed": RoutingSettings(strategy=Strategy.STICKY_HEURISTIC),
    "early": replace(RoutingSettings(strategy=Strategy.STICKY_HEURISTIC), early_confirm_margin=6),
    "explicit_only": RoutingSettings(strategy=Strategy.EXPLICIT_ONLY),
}


class _FixedScores:
    confirming = False

    def __init__(self, scores: dict[str, int]) -> None:
        self.fixed = scores

    def scores(self, _text: str) -> dict[str, int]:
        return dict(self.fixed)

    def decisive(self, _text: str) -> dict[str, int]:
        return dict(self.fixed)


def engine_agent(scores: dict[str, int], current: str | None, settings: RoutingSettings,
                 offsets: dict[str, int] | None = None) -> str:
    agents = {n: Agent(n, "http://127.0.0.1:9/x", sticky_bonus_offset=(offsets or {}).get(n, 0)) for n in AGENTS}
    channel = Channel("telegram", ChannelType.TELEGRAM, ("/t",), "d", routing=settings)
    rules = replace(build_rules(Config("x", agents, {"telegram": channel}), channel, lists_agents=True), scorer=_FixedScores(scores))
    envelope = Envelope("telegram", MessageKind.TEXT, delivery_id="1", sender_id="1", chat_id="1", text=TEXT)
    route = Route(current, chosen_at=0.0, last_active=0.0) if current is not None else None
    out = decide(envelope, route, rules, 1.0)
    if isinstance(out, NeedsClassification):
        chosen = KeywordClassifier(lambda _t: scores, settings.confidence_threshold).choose(TEXT, AGENTS)
        answer = Classification(Outcome.AGENT, chosen) if chosen else Classification(Outcome.NONE)
        out = conclude(out, answer, rules, 1.0)
    return out.agent


POINTS = (0, 1, 6, 7, 12, 13)


@pytest.mark.parametrize("name", SETTINGS)
def test_predict_matches_the_engine_on_every_score_combination(name) -> None:
    settings = SETTINGS[name]
    rules = GateRules.from_settings(settings)
    mismatches = []
    for a, b, c in itertools.product(POINTS, repeat=3):
        scores = {k: v for k, v in (("a", a), ("b", b), ("c", c)) if v}
        for current in (None, "a", "b", "d"):
            expected = engine_agent(scores, current, settings)
            if (predict(scores, current, rules) or "d") != expected:
                mismatches.append((scores, current, expected))
    assert mismatches == []


@pytest.mark.parametrize("offsets", [{"a": 1}, {"a": 6, "b": 2}])
@pytest.mark.parametrize("name", ["recommended", "early"])
def test_predict_matches_the_engine_with_sticky_bonus_offsets(name, offsets) -> None:
    settings = SETTINGS[name]
    rules = replace(GateRules.from_settings(settings), sticky_offsets=tuple(sorted(offsets.items())))
    mismatches = []
    for a, b, c in itertools.product(POINTS, repeat=3):
        scores = {k: v for k, v in (("a", a), ("b", b), ("c", c)) if v}
        for current in (None, "a", "b", "d"):
            expected = engine_agent(scores, current, settings, offsets)
            if (predict(scores, current, rules) or "d") != expected:
                mismatches.append((scores, current, expected))
    assert mismatches == []


@pytest.mark.parametrize("scores, current, expected", [
    ({"a": 6}, None, "a"),                 # one clear keyword winner: a first message goes there
    ({"a": 6, "b": 6}, None, None),        # a tie: the default
    ({"a": 1}, None, None),                # weak keywords alone never reach the threshold
    ({"b": 6}, "a", "b"),                  # one keyword of another agent: a tie with the bonus, confirmed
    ({"a": 1, "b": 6}, "a", "a"),          # the current agent's weak keyword holds the route
    ({"a": 6, "b": 12}, "a", "b"),         # a clear majority switches
    ({"b": 12}, "a", "b"),
])
def test_predict_under_the_shipped_settings(scores, current, expected) -> None:
    assert predict(scores, current, GateRules.from_settings(RECOMMENDED)) == expected


@pytest.mark.parametrize("text, unscored", [
    ("thanks!", True), ("short one", True), ("/agent a and some words", True), ("@b can you look at this", True),
    ("a message long enough to be scored", False),
])
def test_unscored_messages_are_the_ones_the_engine_never_scores(text, unscored) -> None:
    names = AgentNames((n, ()) for n in AGENTS)
    assert is_unscored(text, GateRules.from_settings(RECOMMENDED), names) is unscored


def test_a_short_first_message_reaches_no_keyword_and_no_alias_so_no_pack_can_route_it() -> None:
    """README "Learning keywords": CLINC150's messages under 15 characters stay on the default."""
    import asyncio

    from stickyroute.replay.corpus import Conversation, Turn
    from stickyroute.replay.runner import play

    meta = Agent("meta", "http://127.0.0.1:9/x", aliases=("scrap",), keywords=("scrap", "cancel"))
    turns = ("scrap", "command cancel", "cancel that order now please")
    conversations = [Conversation(str(i), (Turn(text, "meta"),)) for i, text in enumerate(turns)]
    for judge in ("heuristic", "oracle"):
        played, _tally = asyncio.run(play(conversations, [meta], RECOMMENDED, judge))
        assert [(p.agents[0], p.reasons[0]) for p in played] == [
            ("default", "short"), ("default", "short"), ("meta", "keywords")]
