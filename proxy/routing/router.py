"""Router: the async driver of routing decisions, shared by the server and `stickyroute replay`.

For each envelope: Layer 1 (`Layer1.match`), then, when it resolved to the channel default,
Layer 2 under the conversation's lease (`ConversationState.acquire`): the pure engine decides
(`engine.decide`), the classifier is awaited only when the engine asks, `engine.conclude` turns
its answer into the Decision, and `ConversationState.commit` applies the decision's writes in one
step. Decisions of one conversation are serialised (the classifier await included); different
conversations run in parallel. A message that cannot get its conversation's lease within the
classifier's `timeout_s` is decided without it (`engine.busy`: the route read, nothing written).
Every decision is logged as one structured line on the `stickyroute.decision` logger and counted
per (channel, reason).
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import Mapping

from proxy.classifier.base import Candidate, Classification, ClassificationRequest, Classifier
from proxy.config.model import Config
from proxy.routing.engine import Decision, NeedsClassification, busy, conclude, decide
from proxy.routing.envelope import Envelope
from proxy.routing.layer1 import Layer1
from proxy.routing.rules import ChannelRules
from proxy.state.base import ConversationState, LeaseTimeout
from proxy.state.route import ConversationKey

log = logging.getLogger("stickyroute.decision")
_ENCODE = json.JSONEncoder(ensure_ascii=False).encode
"""One encoder for every decision line (`json.dumps` with options builds a new one per call)."""


class Router:
    """Decides the agent of every envelope; one instance per running config.

    `rules` holds each channel's engine rules (`proxy.routing.rules.build_rules`); `state` keeps
    the routes; `classifier` is awaited only when the engine asks.
    """

    def __init__(self, config: Config, classifier: Classifier, state: ConversationState,
                 rules: Mapping[str, ChannelRules]) -> None:
        self.config = config
        self.classifier = classifier
        self.state = state
        self.candidates = tuple(Candidate(a.name, a.description, a.aliases) for a in config.agents.values())
        self._remember_texts = config.classifier.context_messages > 0
        self._lease_wait_s = config.classifier.timeout_s
        self._rules = dict(rules)
        self._layer1 = {name: Layer1(channel) for name, channel in config.channels.items()}
        self.reasons: Counter[tuple[str, str]] = Counter()
        """Decisions counted by (channel, reason), for /stats."""

    def rules(self, channel: str) -> ChannelRules:
        """The engine rules of a channel."""
        return self._rules[channel]

    async def decide(self, channel: str, envelope: Envelope, now: float) -> Decision:
        """Decide where `envelope` goes at `now` (seconds), applying the decision's writes."""
        layer1 = self._layer1[channel].match(envelope)
        key = None
        if envelope.has_sender:
            key = ConversationKey(channel, envelope.chat_id, envelope.thread_id, envelope.sender_id or "")
        if not layer1.is_default:
            decision = Decision(layer1.agent, layer1.reason)
        elif key is None:
            decision = Decision(layer1.agent, "no_sender")
        else:
            decision = await self._layer2(self._rules[channel], key, envelope, now)
        self._log(channel, key, envelope, decision)
        return decision

    async def _layer2(self, rules: ChannelRules, key: ConversationKey, envelope: Envelope, now: float) -> Decision:
        try:
            lease = await self.state.acquire(key, now, wait_s=self._lease_wait_s)
        except LeaseTimeout:
            return busy(await self.state.get(key, now), rules)
        try:
            outcome = decide(envelope, lease.route, rules, now)
            if isinstance(outcome, NeedsClassification):
                answer = await self._classify(rules.channel, outcome, lease.recent)
                outcome = conclude(outcome, answer, rules, now)
        except BaseException:
            await self.state.release(lease)
            raise
        text = envelope.text if self._remember_texts else None
        await self.state.commit(lease, now, store=outcome.store, forget=outcome.forget, text=text)
        return outcome

    async def _classify(self, channel: str, need: NeedsClassification, context: tuple[str, ...]) -> Classification:
        request = ClassificationRequest(channel, need.text, self.candidates, need.current, context)
        return await self.classifier.classify(request)

    def count(self, channel: str, reason: str) -> None:
        """Count a decision made outside the router (a redelivery answered from the log)."""
        self.reasons[(channel, reason)] += 1

    def _log(self, channel: str, key: ConversationKey | None, envelope: Envelope, decision: Decision) -> None:
        self.count(channel, decision.reason)
        if not log.isEnabledFor(logging.INFO):
            return
        line: dict[str, object] = {
            "channel": channel,
            "conversation": key.hashed() if key is not None else None,
            "kind": envelope.kind.value,
            "agent": decision.agent,
            "reason": decision.reason,
        }
        if decision.scores:
            line["scores"] = dict(decision.scores)
        if self._rules[channel].settings.log_text and envelope.text:
            line["text"] = envelope.text
        log.info("%s", _ENCODE(line))


def reason_counts(router: Router) -> Mapping[str, Mapping[str, int]]:
    """Decision counts per channel and reason: {channel: {reason: n}}."""
    out: dict[str, dict[str, int]] = {}
    for (channel, reason), n in sorted(router.reasons.items()):
        out.setdefault(channel, {})[reason] = n
    return out
