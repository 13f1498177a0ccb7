"""Router: the async driver of routing decisions, shared by the server and `stickyroute replay`.

For each envelope: Layer 1 (`Layer1.match`), then, when it resolved to the channel default,
Layer 2 under the conversation's lease (`ConversationState.acquire`): the pure engine decides
(`engine.decide`); the classifier is awaited only when the engine asks (`engine.conclude` turns
its answer into the Decision); an explicit switch spends one of the sender's
`explicit_switches_per_minute` (`SwitchBudget`, shared by the replicas with Redis) or is refused
(`explicit_limited`); a message that cannot get its conversation's lease within the classifier's
`timeout_s` (or what is left of its request's classifier deadline, `routing.deadline`) is decided
without it (`engine.busy`: the route read, nothing written); one that would be classified after
that deadline is not (`classifier_timeout`, concluded as a failed classification);
a conversation whose shared state did not answer in time (`RouteUnavailable`) goes to the route
this process last saw, or the default, nothing written (`engine.unavailable`);
`ConversationState.commit` applies the decision's writes in one step (a
route just chosen is stamped with the reason that chose it; a refreshed one keeps its own).
Decisions of one conversation are serialised (the classifier await included); different
conversations run in parallel. The router writes no log line: the request's accounting does
(`stickyroute.observe`), once the request is answered.

A Layer-2 decision carries its `Conversation` (key and route version after it); `signal` applies
an agent's hint, handoff or `done` to that conversation (`signals.apply_signal`, written with
`ConversationState.swap` when no decision holds it, a released route swapped for none; retried
while one does, at most the classifier's `timeout_s`). A detour (issue #22) keeps the route it
stores as it was: the router stamps the reason only on a route another decision chose.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass

from stickyroute.classifier.base import Candidate, Classification, ClassificationRequest, Classifier, Outcome
from stickyroute.config.model import Config
from stickyroute.core.route import ConversationKey, Route
from stickyroute.routing.deadline import ClassifierDeadline
from stickyroute.routing.decision import DETOUR
from stickyroute.routing.engine import (
    Conversation,
    Decision,
    NeedsClassification,
    NeedsPermit,
    busy,
    conclude,
    decide,
    unavailable,
)
from stickyroute.routing.envelope import KEPT_TEXT_CHARS, Envelope
from stickyroute.routing.layer1 import Layer1
from stickyroute.routing.rules import ChannelRules
from stickyroute.routing.signals import Ignored, Released, Signal, apply_signal
from stickyroute.state.base import Lease, LeaseTimeout, RouteUnavailable
from stickyroute.state.budget import MemorySwitchBudget, SwitchBudget
from stickyroute.state.catalogue import RouteState
from stickyroute.state.steps import Writes


@dataclass(frozen=True, slots=True)
class Held:
    """A decision made under a lease the caller holds (`Router.decide_held`): the decision, the
    writes its conversation still needs, and whether a permit or the classifier was asked."""

    decision: Decision
    writes: Writes
    asked: bool


SIGNAL_RETRY_S = 0.02
"""How long `signal` waits before reading a conversation again that a decision held (seconds)."""


class Router:
    """Decides the agent of every envelope; one instance per running config.

    `rules` holds each channel's engine rules (`stickyroute.routing.rules.build_rules`); `state` keeps
    the routes; `classifier` is awaited only when the engine asks; `switches` counts explicit
    switches per sender (default: a bucket per sender in this process).
    """

    def __init__(self, config: Config, classifier: Classifier, state: RouteState,
                 rules: Mapping[str, ChannelRules], switches: SwitchBudget | None = None) -> None:
        self.config = config
        self.classifier = classifier
        self.state = state
        self.switches = switches if switches is not None else MemorySwitchBudget()
        self._remember_texts = config.classifier.context_messages > 0
        self._lease_wait_s = config.classifier.timeout_s
        self._signal_attempts = 1 + int(self._lease_wait_s / SIGNAL_RETRY_S)
        self._rules = dict(rules)
        self._candidates = {
            name: tuple(Candidate(a.name, a.description, a.aliases) for a in config.agents.values()
                        if a.name in channel_rules.agents)
            for name, channel_rules in self._rules.items()}
        """The agents the classifier may answer, per channel (reachable and not hidden)."""
        self._layer1 = {name: Layer1(channel) for name, channel in config.channels.items()}
        self._classify_now: Callable[[ClassificationRequest], Classification | None] | None = getattr(
            classifier, "classify_now", None)
        """The classifier's synchronous answer (`GuardedClassifier.classify_now`), when it has one."""

    def rules(self, channel: str) -> ChannelRules:
        """The engine rules of a channel."""
        return self._rules[channel]

    def lane(self, channel: str, envelope: Envelope) -> Hashable:
        """What must be decided in body order with `envelope`: its conversation (its messages
        share one route); envelopes of different lanes may be decided concurrently."""
        if not envelope.has_sender:
            return None
        return ConversationKey(channel, envelope.chat_id, envelope.thread_id, envelope.sender_id or "")

    async def decide(self, channel: str, envelope: Envelope, now: float,
                     deadline: ClassifierDeadline | None = None) -> Decision:
        """Decide where `envelope` goes at `now` (seconds), applying the decision's writes.
        `deadline`: the request's classifier deadline (`routing.deadline`), shared by its
        envelopes; None: each decision waits up to the classifier's `timeout_s` on its own."""
        layer1 = self._layer1[channel].match(envelope)
        if not layer1.is_default:
            return Decision(layer1.agent, layer1.reason)
        if not envelope.has_sender:
            return Decision(layer1.agent, "no_sender")
        key = ConversationKey(channel, envelope.chat_id, envelope.thread_id, envelope.sender_id or "")
        return await self._layer2(self._rules[channel], key, envelope, now, deadline)

    async def _acquire(self, key: ConversationKey, now: float, deadline: ClassifierDeadline | None) -> Lease:
        """The conversation's lease, waited for at most the lease wait, or what is left of the
        request's deadline (which a wait starts: the lease is first tried without waiting)."""
        if deadline is None:
            return await self.state.acquire(key, now, wait_s=self._lease_wait_s)
        if not deadline.started:
            try:
                return await self.state.acquire(key, now, wait_s=0.0)
            except LeaseTimeout:
                deadline.start()
        left = deadline.remaining()
        return await self.state.acquire(key, now, wait_s=min(self._lease_wait_s, left or 0.0))

    async def _layer2(self, rules: ChannelRules, key: ConversationKey, envelope: Envelope, now: float,
                      deadline: ClassifierDeadline | None) -> Decision:
        try:
            lease = await self._acquire(key, now, deadline)
        except LeaseTimeout:
            return busy(await self.state.read(key.channel, key.digest(), now), rules)
        except RouteUnavailable as exc:
            return unavailable(exc.route, rules)
        try:
            outcome, _asked = await self._outcome(rules, key, envelope, lease, now, deadline)
        except BaseException:
            await self.state.release(lease)
            raise
        writes = self._writes(outcome, envelope)
        await self.state.commit(lease, now, store=writes.store, forget=writes.forget, text=writes.text)
        return self._about(outcome, key, lease, writes)

    def wants_conversation(self, channel: str, envelope: Envelope) -> bool:
        """True when `envelope` is decided by Layer 2 under its conversation's lease (Layer 1
        resolved it to the channel default and it has a sender)."""
        return envelope.has_sender and self._layer1[channel].match(envelope).is_default

    async def decide_held(self, channel: str, envelope: Envelope, lease: Lease, now: float,
                          deadline: ClassifierDeadline | None = None) -> Held:
        """Decide a Layer-2 `envelope` whose conversation `lease` the caller already holds
        (`DeliverySteps.begin`); nothing is written: the caller writes `Held.writes` with its
        delivery (before the forward when `Held.asked`, else after it). The caller gives the
        lease back when this raises."""
        rules = self._rules[channel]
        outcome, asked = await self._outcome(rules, lease.key, envelope, lease, now, deadline)
        writes = self._writes(outcome, envelope)
        return Held(self._about(outcome, lease.key, lease, writes), writes, asked)

    async def _outcome(self, rules: ChannelRules, key: ConversationKey, envelope: Envelope, lease: Lease, now: float,
                       deadline: ClassifierDeadline | None) -> tuple[Decision, bool]:
        """The engine's outcome under `lease`, and whether a switch permit or the classifier was
        asked (an answer a later attempt might not get alike)."""
        outcome = decide(envelope, lease.route, rules, now)
        if isinstance(outcome, NeedsPermit):
            rate = rules.settings.explicit_switches_per_minute
            granted = await self.switches.take(key.channel, key.sender_id, rate, now)
            return (outcome.granted if granted else outcome.refused), True
        if isinstance(outcome, NeedsClassification):
            answer = await self._classify(rules.channel, outcome, lease.recent, deadline)
            return conclude(outcome, answer, rules, now), True
        return outcome, False

    def _writes(self, outcome: Decision, envelope: Envelope) -> Writes:
        text = envelope.text[:KEPT_TEXT_CHARS] if self._remember_texts and envelope.text else None
        store = outcome.store
        if store is not None and store.reason is None and outcome.reason != DETOUR:  # a route just chosen: why
            store = store.because(outcome.reason)
        return Writes(store, outcome.forget, text)

    @staticmethod
    def _about(outcome: Decision, key: ConversationKey, lease: Lease, writes: Writes) -> Decision:
        after = None if outcome.forget else (writes.store if writes.store is not None else lease.route)
        return outcome.about(Conversation(key, after.chosen_at if after is not None else None))

    async def signal(self, channel: str, digest: str, version: float | None, signal: Signal, now: float
                     ) -> Route | Released | Ignored:
        """Apply an agent's `signal` to the conversation of `channel` whose key digest is `digest`
        (its route `version`, None: any): the route written, the release of a `done`, or why it
        was ignored (`busy` when decisions kept holding the conversation). KeyError for an
        unknown channel."""
        rules = self._rules[channel]
        for _attempt in range(self._signal_attempts):
            route = await self.state.read(channel, digest, now)
            result = apply_signal(signal, route, version, rules, now)
            if isinstance(result, Ignored) or route is None:
                return result
            new = result.route if isinstance(result, Released) else result
            if await self.state.swap(channel, digest, route, new, now):
                return result
            await asyncio.sleep(SIGNAL_RETRY_S)
        return Ignored("busy: decisions kept holding the conversation")

    async def _classify(self, channel: str, need: NeedsClassification, context: tuple[str, ...],
                        deadline: ClassifierDeadline | None) -> Classification:
        left = None
        if deadline is not None:
            deadline.start()
            left = deadline.remaining()
            if not left:  # passed: not asked (reason classifier_timeout)
                return Classification(Outcome.DEADLINE)
        request = ClassificationRequest(channel, need.text, self._candidates[channel], need.current, context, left)
        if self._classify_now is not None:  # an offline classifier: answered here, no task, no timeout
            answer = self._classify_now(request)
            if answer is not None:
                return answer
        return await self.classifier.classify(request)
