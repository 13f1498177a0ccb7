"""Dispatch: the one async driver of a webhook request, from inbound bytes to the relayed reply.

    inbound ─▶ adapter.handshake? ─▶ adapter.authenticate ─▶ adapter.parse ─▶ DeliveryLog.claim
            ─▶ Router.decide per item (first decisions reused; `lanes`) ─▶ one body, or adapter.split
               per agent ─▶ Leg.forward ─▶ DeliveryLog.complete | fail ─▶ Reply
One message of a known conversation: two state steps (`forwarding/single.py`). Claims are renewed
while their attempt runs (`Keeper`); first decisions are kept before the forward (`note`).

Knows no platform: every platform question goes to the channel's adapter (`stickyroute.channels`).
One path for one or many envelopes. Reads the wall clock once per request (and a monotonic timer
around each forward). Nothing the proxy parses can produce a 5xx: a body that is not a known shape
goes to the channel default unchanged (reason `unparsed`); only an agent that is down (502) or too
slow (504) does, or a delivery the shared state did not confirm (503 + `Retry-After`, reason
`state_unavailable`: never claimed in per-process memory while Redis is up), so the platform
retries and nothing is lost. Every forward names its deliveries and their attempt
(`X-Stickyroute-Delivery`, `X-Stickyroute-Attempt`). The platform gets a 2xx only when
every item reached an agent with a 2xx.

Every request is accounted for in one place (`stickyroute.observe.Accounting.request`, in `handle`'s
`finally`): each routed item with the status its part got, or the request as a whole (handshake,
401, non-POST, unparsed, redelivery); a request cut short (cancelled at the shutdown deadline)
is accounted as the 503 the server answers for it. Each forward is timed and its failure kind
counted (`Accounting.upstream`, in `_forward`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence

from prometheus_client import CollectorRegistry

from stickyroute import clock as clocks
from stickyroute.channels import ADAPTERS, BodyPart, ChannelAdapter, Request, SplitError
from stickyroute.config.model import Agent, Channel, Config
from stickyroute.core.delivery import DecisionMemo, DeliveryKey
from stickyroute.core.route import ConversationKey
from stickyroute.errors import UnparsedUpdate, UpstreamError, UpstreamTimeout
from stickyroute.forwarding.claims import claim_all
from stickyroute.forwarding.headers import delivery_headers
from stickyroute.forwarding.inbound import Inbound
from stickyroute.forwarding.keepalive import Keeper
from stickyroute.forwarding.lanes import run_lanes
from stickyroute.forwarding.late import LateAnswers
from stickyroute.forwarding.leg import REPLY_DROPPED, Forwarding
from stickyroute.forwarding.offload import offload
from stickyroute.forwarding.pending import Item, Pending, deliveries_of, merged
from stickyroute.forwarding.replies import answer_of, redelivered, summary, text_reply, unconfirmed
from stickyroute.forwarding.single import deliver_one
from stickyroute.hints import AgentSignals
from stickyroute.observe import Accounting
from stickyroute.reply import Reply
from stickyroute.routing.deadline import ClassifierDeadline
from stickyroute.routing.decision import STATE_UNAVAILABLE
from stickyroute.routing.engine import Decision
from stickyroute.routing.envelope import Envelope
from stickyroute.routing.router import Router
from stickyroute.state.base import Claim, ClaimState, DeliveryLog, DeliveryUnconfirmed
from stickyroute.state.steps import DeliverySteps

log = logging.getLogger("stickyroute.dispatch")
CUT_STATUS = 503
"""What a request cut short (cancelled) is accounted as: the server answers it 503."""

RecordHook = Callable[[Inbound, float, Sequence[Decision | None]], None]
"""`serve --record`: called once per authenticated request when it is answered, with the decision
of each envelope of the body in body order (a redelivered item: its first decision, or None)."""
_Lates = dict[DeliveryKey, "asyncio.Future[Reply]"]


class Dispatcher:
    """Handles inbound requests of every channel; one per running config.

    `clock()` returns seconds (wall time: routes and deliveries); `timer()` seconds on a
    monotonic clock (upstream latency). `settle_s` bounds how long a retry waits for an earlier
    attempt still in flight (default: the longest upstream deadline of any channel plus the
    classifier timeout, plus one second). `accounting` gets every request and forward (default:
    its own, unexported).
    `signals` takes agent hints and handoffs out of replies and gives forwards their conversation
    token (default: one for this config with a per-process secret unless `[hints] secret`).
    """

    def __init__(self, config: Config, router: Router, deliveries: DeliveryLog, leg: Forwarding,
                 clock: Callable[[], float], recorder: RecordHook | None = None, settle_s: float | None = None,
                 accounting: Accounting | None = None, timer: Callable[[], float] = clocks.monotonic,
                 signals: AgentSignals | None = None, steps: DeliverySteps | None = None,
                 lease_s: float | None = None) -> None:
        self.config, self.steps, self.keeper = config, steps, Keeper(deliveries, clock, lease_s)
        self.router = router
        self.deliveries = deliveries
        self.leg, self.clock, self.timer, self.recorder = leg, clock, timer, recorder
        self.late = LateAnswers(deliveries, clock, self.keeper)
        self.accounting = accounting if accounting is not None else Accounting(CollectorRegistry(), clock)
        self.signals = signals if signals is not None else AgentSignals(config, router,
                                                                        released=self.accounting.released)
        deadline = max(u.connect_timeout_s + u.timeout_s for u in (
            config.upstream, *(c.upstream for c in config.channels.values() if c.upstream is not None)))
        self.settle_s = settle_s if settle_s is not None else deadline + config.classifier.timeout_s + 1.0
        self._listed: dict[str, tuple[Agent, ...]] = {
            name: tuple(config.agents[a] for a in router.rules(name).agents) for name in config.channels}
        """The agents `/agent` alone lists on each channel (reachable, not hidden)."""

    async def handle(self, channel: Channel, inbound: Inbound) -> Reply:
        """Answer one request on `channel`'s path (never raises for bad input)."""
        now = self.clock()
        pending = Pending()
        reply: Reply | None = None
        try:
            reply = await self._answer(channel, inbound, now, pending)
            return reply
        finally:
            status = reply.status if reply is not None else CUT_STATUS
            self.accounting.request(channel, now, pending.entries(status), status, inbound.method, pending.state)
            if self.recorder is not None and pending.decisions is not None:
                self.recorder(inbound, now, pending.decisions)

    async def _answer(self, channel: Channel, inbound: Inbound, now: float, pending: Pending) -> Reply:
        adapter = ADAPTERS[channel.type]
        request = Request(inbound.method, inbound.query, inbound.headers, inbound.body)
        answer = adapter.handshake(channel, request, now)
        if answer is not None:
            pending.verdict = Decision("", "handshake")
            return answer
        if not await offload(len(inbound.body), adapter.authenticate, channel, request, now):
            log.warning("rejected request on %s: authentication failed", channel.name)
            pending.verdict = Decision("", "unauthorized")
            return text_reply(401, "unauthorized")
        pending.decisions = []
        return await self._route(adapter, channel, inbound, now, pending)

    async def _route(self, adapter: ChannelAdapter, channel: Channel, inbound: Inbound, now: float,
                     pending: Pending) -> Reply:
        """Forward an authenticated request: non-POST and unparsed bodies to the default, else
        deliver its envelopes."""
        if inbound.method != "POST":
            pending.verdict = Decision(channel.default_agent, "default")
            return await self._forward(channel, inbound, pending.verdict)
        try:
            envelopes = await offload(len(inbound.body), adapter.parse, inbound.body, inbound.headers, channel.name)
        except UnparsedUpdate as exc:
            log.warning("unparsed update on %s forwarded to %s: %s", channel.name, channel.default_agent, exc)
            pending.verdict = Decision(channel.default_agent, "unparsed")
            return await self._forward(channel, inbound, pending.verdict)
        return await self._deliver(adapter, channel, inbound, envelopes, now, pending)

    async def _deliver(self, adapter: ChannelAdapter, channel: Channel, inbound: Inbound,
                       envelopes: Sequence[Envelope], now: float, pending: Pending) -> Reply:
        """Claim the envelopes' deliveries, forward the ones this request holds, answer."""
        keys = [(channel.name, i) for i in adapter.delivery_ids(envelopes, inbound.body)]
        conversation = self.router.lane(channel.name, envelopes[0]) if len(envelopes) == 1 else None
        try:
            if self.steps is not None and isinstance(conversation, ConversationKey):
                return await deliver_one(self, adapter, channel, inbound, envelopes[0], keys[0], conversation, now,
                                         pending)
            claims = await claim_all(self.deliveries, list(dict.fromkeys(keys)), now, self.settle_s)
        except DeliveryUnconfirmed:  # counted and logged (a summary line) by the state's health
            pending.verdict = Decision("", STATE_UNAVAILABLE)
            return unconfirmed()
        stop = self.keeper.hold(list(claims))  # renews only the claims this process holds
        try:
            return await self._settled(adapter, channel, inbound, envelopes, keys, claims, now, pending)
        finally:
            stop()

    async def _settled(self, adapter: ChannelAdapter, channel: Channel, inbound: Inbound,
                       envelopes: Sequence[Envelope], keys: list[DeliveryKey], claims: dict[DeliveryKey, Claim],
                       now: float, pending: Pending) -> Reply:
        """Forward the items whose claims this request holds (the others are answered), answer."""
        if any(c.local for c in claims.values()):
            pending.state = "memory"
        owned = [k for k, c in claims.items() if c.state is ClaimState.FIRST]
        earlier = [answer_of(c) for c in claims.values() if c.state is not ClaimState.FIRST]
        decisions = pending.decisions if pending.decisions is not None else []
        if not owned:
            firsts = [claims[k].memo for k in keys]
            decisions.extend(Decision(m.agent, m.reason) if m is not None else None for m in firsts)
            agents = {m.agent for m in firsts if m is not None}
            pending.verdict = Decision(agents.pop() if len(agents) == 1 else "", "redelivery")
            return redelivered(earlier)
        if earlier:
            log.info("batch on %s: %d of %d item(s) answered earlier, forwarding the rest",
                     channel.name, len(earlier), len(claims))
        mine = set(owned)
        items = pending.items
        outcomes = pending.outcomes
        lates: _Lates = {}
        try:
            todo = [(envelope, key) for envelope, key in zip(envelopes, keys, strict=True) if key in mine]
            decided: list[Decision | None] = [None] * len(todo)
            deadline = ClassifierDeadline(self.config.classifier.timeout_s, self.timer)  # one per request

            async def run(i: int) -> None:  # conversations concurrently, each in body order
                decided[i] = await self._decide(channel, todo[i][0], claims[todo[i][1]], now, deadline)

            try:
                await run_lanes(len(todo), lambda i: self.router.lane(channel.name, todo[i][0]), run)
            finally:  # cut short (the drain deadline): what was decided keeps its memo
                items.extend((e, d, k) for (e, k), d in zip(todo, decided, strict=True) if d is not None)
            made = iter(decided)
            for key in keys:
                memo = claims[key].memo
                decisions.append(next(made) if key in mine else Decision(memo.agent, memo.reason) if memo else None)
            kept = {k: DecisionMemo(d.agent, d.reason) for _e, d, k in items  # Layer 1's decide alike
                    if d.conversation is not None and claims[k].memo is None and self.keeper.period_s}
            if kept:  # a shared backend: the first decisions outlive this process
                await self.deliveries.note(kept, now)
            attempts = {k: claims[k].attempt for k in owned}
            reply = await self._send(adapter, channel, inbound, items, len(envelopes), outcomes, lates, now, attempts)
        finally:
            memos = {key: DecisionMemo(d.agent, d.reason) for _e, d, key in items}
            await self.late.end(owned, outcomes, memos, now, lates)
        if len(outcomes) == len(owned) and not earlier and len({id(r) for r in outcomes.values()}) == 1:
            return reply
        return summary(list({id(r): r for r in outcomes.values()}.values()) + earlier)

    async def _decide(self, channel: Channel, envelope: Envelope, claim: Claim, now: float,
                      deadline: ClassifierDeadline) -> Decision:
        """The router's decision, or the first attempt's (a retry goes where the first went, unless
        a reload removed that agent); a bug while deciding sends the item to the default (never
        a 5xx)."""
        if claim.memo is not None and claim.memo.agent in self.config.agents:
            return Decision(claim.memo.agent, claim.memo.reason)
        try:
            return await self.router.decide(channel.name, envelope, now, deadline)
        except Exception:
            log.exception("routing failed on %s; forwarding to the default %s", channel.name, channel.default_agent)
            return Decision(channel.default_agent, "routing_error")

    async def _send(self, adapter: ChannelAdapter, channel: Channel, inbound: Inbound, items: list[Item],
                    total: int, outcomes: dict[DeliveryKey, Reply], lates: _Lates, now: float,
                    attempts: dict[DeliveryKey, int]) -> Reply:
        """Forward `items`: the body unchanged when they are all of it and go to one agent, else
        one part per agent, each with its deliveries' ids and `attempts` (headers); record each
        item's part reply in `outcomes`."""
        if len(items) == 1 and (items[0][1].list_agents or items[0][0].to_proxy):
            envelope, decision, key = items[0]
            listing = adapter.agent_list(envelope, self._listed[channel.name], decision.agent)
            if listing is not None:
                outcomes[key] = listing
                return listing
        groups: dict[str, list[Item]] = {}
        for item in items:
            groups.setdefault(item[1].agent, []).append(item)
        parts: dict[str, BodyPart] | None = None
        if len(groups) > 1 or len(items) < total:
            try:
                paths = {a: [e.item_path for e, _d, _k in g] for a, g in groups.items()}
                parts = await offload(len(inbound.body), adapter.split, channel, inbound.body, paths)
                log.info("mixed batch on %s split into %d part(s)", channel.name, len(groups))
            except SplitError as exc:  # cannot rebuild it: the documented fallback
                log.warning("batch on %s cannot be split (%s); forwarded whole to the default %s",
                            channel.name, exc, channel.default_agent)
                groups = {channel.default_agent: items}
        late: list[asyncio.Future[Reply] | None] = [None] * len(groups)
        sends = [
            self._forward(channel, inbound, merged(agent, group), parts[agent] if parts is not None else None,
                          late, index, now, deliveries_of(group, attempts))
            for index, (agent, group) in enumerate(groups.items())
        ]
        replies = [await sends[0]] if len(sends) == 1 else await asyncio.gather(*sends)
        for group, reply, exchange in zip(groups.values(), replies, late, strict=True):
            for _envelope, _decision, key in group:
                outcomes[key] = reply
                if exchange is not None:
                    lates[key] = exchange
        return replies[0]

    async def _forward(self, channel: Channel, inbound: Inbound, decision: Decision, part: BodyPart | None = None,
                       late: list[asyncio.Future[Reply] | None] | None = None, index: int = 0,
                       now: float | None = None, deliveries: Sequence[tuple[str, str, int]] = ()) -> Reply:
        """The agent's reply (agent signals taken out: `self.signals`), or the proxy's error
        answer; an exchange still running after its 504 goes to `late[index]` (None: nobody keeps
        its answer). `deliveries`: (channel, delivery id, attempt) of the items it carries, sent
        as `X-Stickyroute-Delivery` / `X-Stickyroute-Attempt`."""
        agent = self.config.agents[decision.agent]
        conversation = decision.conversation
        extra = self.signals.request_headers(channel.name, agent, conversation, now) if now is not None else []
        extra = [*extra, *delivery_headers(deliveries)]
        started = self.timer()
        try:
            reply = await self.leg.forward(inbound, agent, channel.name, decision.reason, part, extra)
        except UpstreamError as exc:
            self.accounting.upstream(agent.name, self.timer() - started, exc.kind)
            log.warning("upstream %s failed for %s: %s", decision.agent, channel.name, exc)
            if isinstance(exc, UpstreamTimeout) and exc.late is not None:
                if late is None:
                    self.late.ignore(exc.late)
                else:
                    late[index] = exc.late
            what = _WHAT.get(exc.kind, "failed")
            return text_reply(exc.status_code, f"upstream {decision.agent} {what}", decision.reason)
        dropped = reply.header(REPLY_DROPPED) is not None  # over the reply cap: relayed without its body
        self.accounting.upstream(agent.name, self.timer() - started, "too_large" if dropped else None)
        return await self.signals.from_reply(channel.name, agent.name, conversation, reply,
                                             now if now is not None else self.clock())


_WHAT = {"timeout": "timed out", "refused": "unreachable", "pool_exhausted": "has no free connection"}
