"""Play a corpus through the real `stickyroute.routing.router.Router` under one RoutingSettings.

Each conversation is its own Telegram private chat: sender id = chat id = 1000 + its index,
one TEXT envelope per user turn with delivery id = a running update id, routed with
`await router.decide("telegram", envelope, now)` on a FakeClock that advances `gap_s` seconds
(default 30) between turns and one hour between conversations. Judges read the current turn
from the shared `TurnCursor`.

Simulated agents (`agent_hints=(P, R)`, issue #12): after each turn, the agent that got it says
"not mine" (no suggestion) through `Router.signal` with probability R when the turn's gold is
another agent, and with probability P when it was its own (a false hint); seeded by `seed`.

Simulated `done` (`agent_done=(P, R)`, issue #22): after each turn that ends a gold segment (the
next turn's gold is another agent), the agent that got it says `done` with probability R when it
was that segment's agent (its task is over); after any other turn, with probability P (a false
`done`, mid-task or about a turn that was not its own). Seeded by `seed`, drawn from their own
generator so the hints' draws stay the same.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Sequence
from dataclasses import asdict, dataclass

from stickyroute.classifier.base import Classifier
from stickyroute.classifier.keywords import KeywordClassifier
from stickyroute.clock import FakeClock
from stickyroute.config.model import Agent, RoutingSettings
from stickyroute.replay.corpus import CHANNEL, DEFAULT_AGENT, Conversation, Turn, replay_config
from stickyroute.replay.judges import CountingClassifier, NoisyJudge, OracleJudge, TurnCursor
from stickyroute.replay.metrics import Row, Tally, is_correct, row, score_conversation
from stickyroute.replay.offline import offline_router
from stickyroute.routing.engine import Decision
from stickyroute.routing.envelope import Envelope, MessageKind
from stickyroute.routing.keywords import KeywordScorer
from stickyroute.routing.router import Router
from stickyroute.routing.rules import keyword_scorer
from stickyroute.routing.signals import Signal, SignalKind

CONVERSATION_GAP_S = 3600.0
FIRST_SENDER = 1000


@dataclass(frozen=True, slots=True)
class Played:
    """The routed agent and reason of every turn of one conversation."""

    conversation: str
    agents: tuple[str, ...]
    reasons: tuple[str, ...]


def make_judge(spec: str, cursor: TurnCursor, router_agents: Sequence[str], seed: int,
               scorer: KeywordScorer | None = None, threshold: int = 6) -> Classifier:
    """`oracle` | `noisy:P` | `keywords` (alias `heuristic`) | `groq` -> a Classifier (groq needs
    GROQ_API_KEY)."""
    agents = tuple(a for a in router_agents if a != DEFAULT_AGENT)
    if spec == "oracle":
        return OracleJudge(cursor)
    if spec.startswith("noisy:"):
        return NoisyJudge(cursor, float(spec.split(":", 1)[1]), agents, seed)
    if is_keywords(spec):
        if scorer is None:
            raise ValueError("the keywords judge needs a keyword scorer")
        return KeywordClassifier(scorer.decisive, threshold)
    if spec == "groq":
        import os

        from stickyroute.classifier.factory import build_classifier
        from stickyroute.clock import monotonic
        from stickyroute.config.model import ClassifierSettings

        classifier, _line = build_classifier(ClassifierSettings(provider="groq"),
                                             scorer.scores if scorer else (lambda _t: {}), threshold, os.environ,
                                             clock=monotonic)
        return classifier
    raise ValueError(f"unknown classifier {spec!r}: expected oracle, noisy:P, keywords or groq")


def is_keywords(spec: str) -> bool:
    """The keyword classifier's judge names: `keywords` and its old name `heuristic`."""
    return spec in ("keywords", "heuristic")


def settings_dict(settings: RoutingSettings) -> dict[str, object]:
    """The knobs a row reports (strategy, threshold, bonus, divergence and opt-in knobs)."""
    raw = asdict(settings)
    keep = ("confidence_threshold", "sticky_bonus", "divergence_count", "first_message_margin",
            "early_confirm_margin", "keyword_switch_margin", "contest_confirm")
    out: dict[str, object] = {"strategy": settings.strategy.value}
    out.update({k: raw[k] for k in keep})
    out["agent_hints"] = settings.agent_hints.value
    return out


AgentHintRates = tuple[float, float]
"""(P, R): probability of a false "not mine" on an agent's own turn, recall on another's."""


async def _simulated_hint(router: Router, decision: Decision, turn: Turn, rates: AgentHintRates,
                          rng: random.Random, now: float) -> None:
    """The agent that got `turn` says "not mine" per `rates` (see the module docstring)."""
    conversation = decision.conversation
    wrong = not is_correct(turn, decision.agent)
    if rng.random() >= (rates[1] if wrong else rates[0]) or conversation is None or conversation.version is None:
        return
    await router.signal(CHANNEL, conversation.key.digest(), conversation.version,
                        Signal(SignalKind.NOT_MINE, decision.agent), now)


async def _simulated_done(router: Router, decision: Decision, turns: Sequence[Turn], index: int,
                          rates: AgentHintRates, rng: random.Random, now: float) -> None:
    """The agent that got `turns[index]` says `done` per `rates` (see the module docstring)."""
    conversation = decision.conversation
    ends = index + 1 < len(turns) and turns[index + 1].gold != turns[index].gold
    finished = ends and decision.agent == turns[index].gold
    if rng.random() >= (rates[1] if finished else rates[0]) or conversation is None or conversation.version is None:
        return
    await router.signal(CHANNEL, conversation.key.digest(), conversation.version,
                        Signal(SignalKind.DONE, decision.agent), now)


async def play(conversations: Sequence[Conversation], agents: Sequence[Agent], settings: RoutingSettings,
               judge: str = "oracle", seed: int = 0, gap_s: float = 30.0, agent_hints: AgentHintRates | None = None,
               agent_done: AgentHintRates | None = None) -> tuple[list[Played], Tally]:
    """Route every turn of every conversation; (per-conversation results, summed counts).
    `agent_hints` (P, R) adds simulated agents that hint, `agent_done` (P, R) agents that say
    `done` (module docstring)."""
    config = replay_config(agents, settings)
    cursor = TurnCursor()
    scorer = keyword_scorer(config, settings)
    inner = make_judge(judge, cursor, tuple(config.agents), seed, scorer, settings.confidence_threshold)
    counting = CountingClassifier(inner, config.classifier.context_messages, estimate=not is_keywords(judge))
    router = offline_router(config, counting)
    clock = FakeClock()
    rng = random.Random(seed)
    done_rng = random.Random(f"done:{seed}")
    played: list[Played] = []
    total = Tally()
    update_id = 1
    for index, conv in enumerate(conversations):
        user = str(FIRST_SENDER + index)
        routed: list[str] = []
        reasons: list[str] = []
        calls_before, tokens_before = counting.calls, counting.tokens
        for position, turn in enumerate(conv.turns):
            cursor.turn = turn
            envelope = Envelope(CHANNEL, MessageKind.TEXT, delivery_id=str(update_id), sender_id=user,
                                chat_id=user, text=turn.text)
            update_id += 1
            decision = await router.decide(CHANNEL, envelope, clock())
            routed.append(decision.agent)
            reasons.append(decision.reason)
            if agent_hints is not None:
                await _simulated_hint(router, decision, turn, agent_hints, rng, clock() + 1.0)
            if agent_done is not None:
                await _simulated_done(router, decision, conv.turns, position, agent_done, done_rng, clock() + 1.0)
            clock.advance(gap_s)
        cursor.turn = None
        clock.advance(CONVERSATION_GAP_S)
        tally = score_conversation(conv.turns, routed)
        tally.calls = counting.calls - calls_before
        tally.tokens = counting.tokens - tokens_before
        total.add(tally)
        played.append(Played(conv.id, tuple(routed), tuple(reasons)))
    return played, total


def evaluate(name: str, conversations: Sequence[Conversation], agents: Sequence[Agent],
             settings: RoutingSettings, judge: str = "oracle", seed: int = 0, gap_s: float = 30.0,
             agent_hints: AgentHintRates | None = None, agent_done: AgentHintRates | None = None) -> Row:
    """One table row: `play` then `metrics.row` (runs its own event loop)."""
    _played, tally = asyncio.run(play(conversations, agents, settings, judge, seed, gap_s, agent_hints, agent_done))
    return row(name, settings_dict(settings), tally)
