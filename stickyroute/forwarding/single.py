"""One message of a known conversation in two state steps (`DeliverySteps`; two round trips on
Redis):

    begin (claim the delivery, hold the conversation) ─▶ Router.decide_held ─▶ Leg.forward
    ─▶ finish (commit the decision's writes, complete or fail the delivery)

A decision that asked the classifier or a switch permit is committed with the first decision kept
on the delivery before the forward (`note`), so a retry after a crash goes to the same agent; any
other decision is made again alike from the conversation the attempt held. A claim taken without
the conversation (another request holds it, a first decision exists, Layer 1 decides) goes the
dispatcher's usual way. The claim and the conversation are renewed while the attempt runs. The
agent signals of the reply (hint, handoff, done) are applied once the decision is written.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Protocol

from stickyroute.channels import ChannelAdapter
from stickyroute.config.model import Channel, Config
from stickyroute.core.delivery import DecisionMemo, DeliveryKey
from stickyroute.core.route import ConversationKey
from stickyroute.forwarding.inbound import Inbound
from stickyroute.forwarding.keepalive import Keeper
from stickyroute.forwarding.late import LateAnswers
from stickyroute.forwarding.pending import Item, Pending
from stickyroute.hints.service import DEFERRED
from stickyroute.reply import Reply
from stickyroute.routing.deadline import ClassifierDeadline
from stickyroute.routing.engine import Decision
from stickyroute.routing.envelope import Envelope
from stickyroute.routing.router import Router
from stickyroute.state.base import Claim, ClaimState, DeliveryLog, Lease
from stickyroute.state.steps import DeliverySteps, Writes

__all__ = ["Host", "deliver_one"]

log = logging.getLogger("stickyroute.dispatch")
Lates = dict[DeliveryKey, "asyncio.Future[Reply]"]


class Host(Protocol):
    """What `deliver_one` uses of its dispatcher."""

    config: Config
    router: Router
    steps: DeliverySteps | None
    keeper: Keeper
    late: LateAnswers
    deliveries: DeliveryLog
    settle_s: float
    timer: Callable[[], float]

    async def _settled(self, adapter: ChannelAdapter, channel: Channel, inbound: Inbound,
                       envelopes: Sequence[Envelope], keys: list[DeliveryKey], claims: dict[DeliveryKey, Claim],
                       now: float, pending: Pending) -> Reply: ...

    async def _send(self, adapter: ChannelAdapter, channel: Channel, inbound: Inbound, items: list[Item],
                    total: int, outcomes: dict[DeliveryKey, Reply], lates: Lates, now: float,
                    attempts: dict[DeliveryKey, int]) -> Reply: ...


async def deliver_one(self: Host, adapter: ChannelAdapter, channel: Channel, inbound: Inbound, envelope: Envelope,
                      key: DeliveryKey, conversation: ConversationKey, now: float, pending: Pending) -> Reply:
    """One message of a known conversation: begin (claim + hold), decide, forward, finish
    (commit + complete | fail); see the module docstring."""
    assert self.steps is not None
    steps = self.steps
    hold = self.router.wants_conversation(channel.name, envelope)
    begun = await steps.begin(key, conversation, now, hold=hold)
    lease = begun.lease
    if begun.claim.local:
        pending.state = "memory"
    if lease is None:
        claim = begun.claim
        if claim.state is ClaimState.IN_FLIGHT:  # raises DeliveryUnconfirmed as claim_all does
            claim = await self.deliveries.settle(key, now, self.settle_s)
        stop = self.keeper.hold([key])
        try:
            return await self._settled(adapter, channel, inbound, [envelope], [key], {key: claim}, now, pending)
        finally:
            stop()
    stop = self.keeper.hold([key], lease)
    decisions = pending.decisions if pending.decisions is not None else []
    outcomes = pending.outcomes
    lates: Lates = {}
    writes = Writes()
    decision: Decision | None = None
    held: Lease | None = lease
    later: list[Callable[[], Awaitable[None]]] = []  # the reply's agent signals, once the decision is written
    try:
        deadline = ClassifierDeadline(self.config.classifier.timeout_s, self.timer)
        asked = False
        try:
            made = await self.router.decide_held(channel.name, envelope, lease, now, deadline)
            decision, writes, asked = made.decision, made.writes, made.asked
        except Exception:
            log.exception("routing failed on %s; forwarding to the default %s", channel.name,
                          channel.default_agent)
            decision = Decision(channel.default_agent, "routing_error")
        if asked:  # a decision a retry might not make alike: kept on the delivery before the forward
            held = None
            await steps.note(key, lease, writes, DecisionMemo(decision.agent, decision.reason), now)
        pending.items.append((envelope, decision, key))
        decisions.append(decision)
        hold_signals = DEFERRED.set(later) if held is not None else None
        try:
            reply = await self._send(adapter, channel, inbound, pending.items, 1, outcomes, lates, now,
                                     {key: begun.claim.attempt})
        finally:
            if hold_signals is not None:
                DEFERRED.reset(hold_signals)
    finally:
        stop()
        memo = DecisionMemo(decision.agent, decision.reason) if decision is not None else None
        exchange = lates.get(key)
        if held is not None and memo is not None:
            await steps.finish(key, held, writes, outcomes.get(key), memo, now, keep=exchange is not None)
        elif held is not None:  # cut short before a decision: give the conversation back, fail the key
            await steps.finish(key, held, Writes(), None, None, now)
        else:
            await self.late.end([key], outcomes, {key: memo} if memo is not None else {}, now, lates)
            exchange = None
        if exchange is not None and memo is not None:
            self.late.watch(exchange, [key], {key: memo})
    for apply in later:
        await apply()
    return reply
