"""Router: the async driver of routing decisions, shared by the server and `stickyroute replay`.

For each envelope: Layer 1 (resolver), then, when it resolved to the channel default, Layer 2
(engine) under a per-conversation lock, awaiting the classifier only when the engine asks, then
applying the decision's writes to the route store. Decisions of one conversation key are
serialised (the classifier await included); different conversations run in parallel.
Every decision is logged as one structured line on the `stickyroute.decision` logger.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections import Counter, deque
from typing import Mapping

from cachetools import TTLCache

from proxy.classifier.base import Candidate, Classification, ClassificationRequest, Classifier
from proxy.config.model import Channel, Config, RoutingSettings
from proxy.routing.engine import ChannelRules, Decision, NeedsClassification, decide, resolve
from proxy.routing.envelope import Envelope
from proxy.routing.explicit import AgentNames
from proxy.routing.keywords import AgentKeywords, KeywordScorer
from proxy.routing.layer1 import Resolver
from proxy.routing.route import ConversationKey
from proxy.state.route_cache import PassedTime, RouteStore

log = logging.getLogger("stickyroute.decision")


def keyword_scorer(config: Config, settings: RoutingSettings) -> KeywordScorer:
    """The keyword gate over every agent of `config`, with `settings`' strong/weak weights."""
    return KeywordScorer(
        (AgentKeywords(a.name, a.keywords, a.weak_keywords) for a in config.agents.values()),
        strong_weight=settings.strong_weight,
        weak_weight=settings.weak_weight,
    )


def build_rules(config: Config, channel: Channel) -> ChannelRules:
    """The engine's view of one channel: settings, names, keyword scorer (built once)."""
    settings = channel.routing
    agents = config.agents.values()
    scorer = keyword_scorer(config, settings)
    return ChannelRules(
        channel=channel.name,
        platform=channel.type,
        default_agent=channel.default_agent,
        settings=settings,
        names=AgentNames((a.name, a.aliases) for a in agents),
        scorer=scorer,
        agents=tuple(config.agents),
        bot_username=channel.bot_username,
        acknowledgements=frozenset(a.casefold() for a in settings.acknowledgements),
    )


class _ChannelState:
    """Per-channel parts: resolver, rules, route store, conversation locks, recent texts."""

    def __init__(self, config: Config, channel: Channel, context_messages: int) -> None:
        self.channel = channel
        self.resolver = Resolver(channel)
        self.rules = build_rules(config, channel)
        self.store = RouteStore(channel.routing.ttl_s, channel.routing.max_conversations)
        self.locks: dict[ConversationKey, tuple[asyncio.Lock, int]] = {}
        self.recent: TTLCache[ConversationKey, deque[str]] | None = None
        self.recent_time = PassedTime()
        """The recent-texts cache runs on the routed `now`, like the route store (fake clocks, replays)."""
        if context_messages > 0:
            self.recent = TTLCache(
                maxsize=channel.routing.max_conversations, ttl=channel.routing.ttl_s, timer=self.recent_time
            )


class Router:
    """Decides the agent of every envelope; one instance per running config."""

    def __init__(self, config: Config, classifier: Classifier) -> None:
        self.config = config
        self.classifier = classifier
        self.candidates = tuple(Candidate(a.name, a.description, a.aliases) for a in config.agents.values())
        context = config.classifier.context_messages
        self._context_messages = context
        self._channels = {name: _ChannelState(config, ch, context) for name, ch in config.channels.items()}
        self.reasons: Counter[tuple[str, str]] = Counter()
        """Decisions counted by (channel, reason), for /stats."""

    def store(self, channel: str) -> RouteStore:
        """The route store of a channel (read-only use: tests, explain, stats)."""
        return self._channels[channel].store

    def rules(self, channel: str) -> ChannelRules:
        """The engine rules of a channel."""
        return self._channels[channel].rules

    async def route(self, channel: str, envelope: Envelope, now: float) -> Decision:
        """Decide where `envelope` goes at `now` (seconds), applying the decision's writes."""
        state = self._channels[channel]
        layer1 = state.resolver.resolve(envelope)
        key = None
        if envelope.has_sender:
            key = ConversationKey(channel, envelope.chat_id, envelope.thread_id, envelope.sender_id or "")
        if not layer1.is_default:
            decision = Decision(layer1.agent, layer1.reason)
        elif key is None:
            decision = Decision(layer1.agent, "no_sender")
        else:
            lock = self._acquire(state, key)
            try:
                async with lock:
                    decision = await self._decide(state, key, envelope, now)
            finally:
                self._release(state, key)
            self._log(state, key, envelope, decision)
            return decision
        self._log(state, key, envelope, decision)
        return decision

    async def _decide(self, state: _ChannelState, key: ConversationKey, envelope: Envelope, now: float) -> Decision:
        state.recent_time.value = now
        route = state.store.get(key, now)
        outcome = decide(envelope, route, state.rules, now)
        if isinstance(outcome, NeedsClassification):
            answer = await self._classify(state, key, outcome)
            outcome = resolve(outcome, answer, state.rules, now)
        if outcome.forget:
            state.store.delete(key, now)
        elif outcome.store is not None:
            state.store.put(key, outcome.store, now)
        if state.recent is not None and envelope.text:
            state.recent_time.value = now  # another conversation may have set it during the await
            texts = state.recent.get(key) or deque(maxlen=self._context_messages)
            texts.append(envelope.text)
            state.recent[key] = texts
        return outcome

    async def _classify(self, state: _ChannelState, key: ConversationKey, need: NeedsClassification) -> Classification:
        context: tuple[str, ...] = ()
        if state.recent is not None:
            context = tuple(state.recent.get(key) or ())
        request = ClassificationRequest(state.channel.name, need.text, self.candidates, need.current, context)
        return await self.classifier.classify(request)

    @staticmethod
    def _acquire(state: _ChannelState, key: ConversationKey) -> asyncio.Lock:
        lock, users = state.locks.get(key, (None, 0))
        if lock is None:
            lock = asyncio.Lock()
        state.locks[key] = (lock, users + 1)
        return lock

    @staticmethod
    def _release(state: _ChannelState, key: ConversationKey) -> None:
        lock, users = state.locks[key]
        if users <= 1:
            del state.locks[key]
        else:
            state.locks[key] = (lock, users - 1)

    def count(self, channel: str, reason: str) -> None:
        """Count a decision made outside the router (a redelivery answered from memory)."""
        self.reasons[(channel, reason)] += 1

    def _log(self, state: _ChannelState, key: ConversationKey | None, envelope: Envelope, decision: Decision) -> None:
        self.count(state.channel.name, decision.reason)
        if not log.isEnabledFor(logging.INFO):
            return
        line: dict[str, object] = {
            "channel": state.channel.name,
            "conversation": key.hashed() if key is not None else None,
            "kind": envelope.kind.value,
            "agent": decision.agent,
            "reason": decision.reason,
        }
        if decision.scores:
            line["scores"] = dict(decision.scores)
        if state.channel.routing.log_text and envelope.text:
            line["text"] = envelope.text
        log.info("%s", json.dumps(line, ensure_ascii=False))


def reason_counts(router: Router) -> Mapping[str, Mapping[str, int]]:
    """Decision counts per channel and reason: {channel: {reason: n}}."""
    out: dict[str, dict[str, int]] = {}
    for (channel, reason), n in sorted(router.reasons.items()):
        out.setdefault(channel, {})[reason] = n
    return out
