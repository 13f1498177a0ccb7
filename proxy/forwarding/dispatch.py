"""Dispatch: the one async driver of a webhook request, from inbound bytes to the relayed reply.

    inbound ─▶ adapter.handshake? ─▶ adapter.authenticate ─▶ adapter.parse ─▶ DeliveryLog.claim
            ─▶ Router.decide per item (first decisions reused) ─▶ one body, or adapter.split per
               agent ─▶ Leg.forward ─▶ DeliveryLog.complete | fail ─▶ Reply

Knows no platform: every platform question goes to the channel's adapter (`proxy.channels`).
One path for one or many envelopes. Reads the clock once per request. Nothing the proxy parses
can produce a 5xx: a body that is not a known shape goes to the channel default unchanged (reason
`unparsed`); only an agent that is down (502) or too slow (504) does, so the platform retries
and nothing is lost. The platform gets a 2xx only when every item reached an agent with a 2xx.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable, Sequence

from proxy.channels import ADAPTERS, BodyPart, ChannelAdapter, Request, SplitError
from proxy.config.model import Channel, Config
from proxy.errors import UnparsedUpdate, UpstreamError, UpstreamTimeout
from proxy.forwarding.inbound import Inbound
from proxy.forwarding.late import LateAnswers
from proxy.forwarding.leg import Forwarding
from proxy.forwarding.offload import Breather, chunks, offload
from proxy.forwarding.replies import as_redelivery, text_reply
from proxy.reply import Reply
from proxy.routing.engine import Decision
from proxy.routing.envelope import Envelope
from proxy.routing.router import Router
from proxy.state.base import Claim, ClaimState, DecisionMemo, DeliveryKey, DeliveryLog

log = logging.getLogger("stickyroute.dispatch")
decision_log = logging.getLogger("stickyroute.decision")

RecordHook = Callable[[Inbound, float, Sequence[Decision | None]], None]
"""`serve --record`: called once per authenticated request when it is answered, with the decision
of each envelope of the body in body order (a redelivered item: its first decision, or None)."""
_Item = tuple[Envelope, Decision, DeliveryKey]
_Lates = dict[DeliveryKey, "asyncio.Future[Reply]"]


class Dispatcher:
    """Handles inbound requests of every channel; one per running config.

    `clock()` returns seconds (wall time: routes and deliveries). `settle_s` bounds how long a
    retry waits for an earlier attempt still in flight (default: the upstream deadline plus the
    classifier timeout, plus one second).
    """

    def __init__(self, config: Config, router: Router, deliveries: DeliveryLog, leg: Forwarding,
                 clock: Callable[[], float], recorder: RecordHook | None = None, settle_s: float | None = None) -> None:
        self.config = config
        self.router = router
        self.deliveries = deliveries
        self.leg = leg
        self.clock = clock
        self.recorder = recorder
        self.late = LateAnswers(deliveries, clock)
        upstream = config.upstream
        self.settle_s = settle_s if settle_s is not None else (
            upstream.connect_timeout_s + upstream.timeout_s + config.classifier.timeout_s + 1.0)

    async def handle(self, channel: Channel, inbound: Inbound) -> Reply:
        """Answer one request on `channel`'s path (never raises for bad input)."""
        adapter = ADAPTERS[channel.type]
        answer = adapter.handshake(channel, inbound.method, inbound.query)
        if answer is not None:
            return answer
        size = len(inbound.body)
        request = Request(inbound.method, inbound.query, inbound.headers, inbound.body)
        if not await offload(size, adapter.authenticate, channel, request):
            log.warning("rejected request on %s: authentication failed", channel.name)
            return text_reply(401, "unauthorized")
        now = self.clock()
        decisions: list[Decision | None] = []
        try:
            return await self._route(adapter, channel, inbound, now, decisions)
        finally:
            if self.recorder is not None:
                self.recorder(inbound, now, decisions)

    async def _route(self, adapter: ChannelAdapter, channel: Channel, inbound: Inbound, now: float,
                     decisions: list[Decision | None]) -> Reply:
        """Forward an authenticated request: non-POST and unparsed bodies to the default, else
        deliver its envelopes; `decisions` gets each envelope's decision (for the recorder)."""
        if inbound.method != "POST":
            return await self._forward(channel, inbound, Decision(channel.default_agent, "default"))
        try:
            envelopes = await offload(len(inbound.body), adapter.parse, inbound.body, inbound.headers, channel.name)
        except UnparsedUpdate as exc:
            log.warning("unparsed update on %s forwarded to %s: %s", channel.name, channel.default_agent, exc)
            return await self._forward(channel, inbound, Decision(channel.default_agent, "unparsed"))
        return await self._deliver(adapter, channel, inbound, envelopes, now, decisions)

    async def _deliver(self, adapter: ChannelAdapter, channel: Channel, inbound: Inbound,
                       envelopes: Sequence[Envelope], now: float, decisions: list[Decision | None]) -> Reply:
        """Claim the envelopes' deliveries, forward the ones this request holds, answer."""
        keys = [(channel.name, i) for i in adapter.delivery_ids(envelopes, inbound.body)]
        distinct = list(dict.fromkeys(keys))
        claims: dict[DeliveryKey, Claim] = {}
        async for chunk in chunks(distinct):
            claims.update(zip(chunk, await self.deliveries.claim(chunk, now), strict=True))
        waiting = [k for k, c in claims.items() if c.state is ClaimState.IN_FLIGHT]
        if waiting:
            settled = await asyncio.gather(*(self.deliveries.settle(k, now, self.settle_s) for k in waiting))
            claims.update(zip(waiting, settled, strict=True))
        owned = [k for k, c in claims.items() if c.state is ClaimState.FIRST]
        earlier = [_answer_of(c) for c in claims.values() if c.state is not ClaimState.FIRST]
        if not owned:
            decisions.extend(Decision(c.memo.agent, c.memo.reason) if c.memo is not None else None
                             for c in (claims[k] for k in keys))
            return self._redelivered(channel, earlier)
        if earlier:
            log.info("batch on %s: %d of %d item(s) answered earlier, forwarding the rest",
                     channel.name, len(earlier), len(claims))
        mine = set(owned)
        items: list[_Item] = []
        outcomes: dict[DeliveryKey, Reply] = {}
        lates: _Lates = {}
        try:
            breathe = Breather()
            for envelope, key in zip(envelopes, keys, strict=True):
                await breathe()
                if key in mine:
                    decision = await self._decide(channel, envelope, claims[key], now)
                    items.append((envelope, decision, key))
                    decisions.append(decision)
                else:
                    memo = claims[key].memo
                    decisions.append(Decision(memo.agent, memo.reason) if memo is not None else None)
            reply = await self._send(adapter, channel, inbound, items, len(envelopes), outcomes, lates)
        finally:
            memos = {key: DecisionMemo(d.agent, d.reason) for _e, d, key in items}
            await self._end(owned, outcomes, memos, now, lates)
        if len(outcomes) == len(owned) and not earlier and len({id(r) for r in outcomes.values()}) == 1:
            return reply
        return _summary(list({id(r): r for r in outcomes.values()}.values()) + earlier)

    async def _decide(self, channel: Channel, envelope: Envelope, claim: Claim, now: float) -> Decision:
        """The router's decision, or the first attempt's (a retry goes where the first went);
        a bug while deciding sends the item to the default (never a 5xx)."""
        if claim.memo is not None:
            return Decision(claim.memo.agent, claim.memo.reason)
        try:
            return await self.router.decide(channel.name, envelope, now)
        except Exception:
            log.exception("routing failed on %s; forwarding to the default %s", channel.name, channel.default_agent)
            return Decision(channel.default_agent, "routing_error")

    async def _send(self, adapter: ChannelAdapter, channel: Channel, inbound: Inbound, items: list[_Item],
                    total: int, outcomes: dict[DeliveryKey, Reply], lates: _Lates) -> Reply:
        """Forward `items`: the body unchanged when they are all of it and go to one agent, else
        one part per agent; record each item's part reply in `outcomes`."""
        if len(items) == 1 and items[0][1].list_agents:
            envelope, decision, key = items[0]
            listing = adapter.agent_list(envelope, tuple(self.config.agents.values()), decision.agent)
            if listing is not None:
                outcomes[key] = listing
                return listing
        groups: dict[str, list[_Item]] = {}
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
            self._forward(channel, inbound, Decision(agent, ",".join(dict.fromkeys(d.reason for _e, d, _k in group))),
                          parts[agent] if parts is not None else None, late, index)
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
                       late: list[asyncio.Future[Reply] | None] | None = None, index: int = 0) -> Reply:
        """The agent's reply, or the proxy's error answer; an exchange still running after its 504
        goes to `late[index]` (None: nobody keeps its answer)."""
        agent = self.config.agents[decision.agent]
        try:
            return await self.leg.forward(inbound, agent, channel.name, decision.reason, part)
        except UpstreamError as exc:
            log.warning("upstream %s failed for %s: %s", decision.agent, channel.name, exc)
            if isinstance(exc, UpstreamTimeout) and exc.late is not None:
                if late is None:
                    self.late.ignore(exc.late)
                else:
                    late[index] = exc.late
            what = _WHAT.get(exc.kind, "failed")
            return text_reply(exc.status_code, f"upstream {decision.agent} {what}", decision.reason)

    async def _end(self, owned: list[DeliveryKey], outcomes: dict[DeliveryKey, Reply],
                   memos: dict[DeliveryKey, DecisionMemo], now: float, lates: _Lates) -> None:
        """Complete the keys whose part got a 2xx, fail the others (None: no answer at all); the
        keys of a part still awaited after its 504 stay in flight until its late answer."""
        by_reply: dict[int, tuple[Reply, list[DeliveryKey]]] = {}
        for key, reply in outcomes.items():
            by_reply.setdefault(id(reply), (reply, []))[1].append(key)
        for reply, keys in by_reply.values():
            exchange = lates.get(keys[0])
            if exchange is not None:
                self.late.watch(exchange, keys, _memos_of(keys, memos))
                continue
            async for chunk in chunks(keys):
                if reply.ok:
                    await self.deliveries.complete(chunk, reply, now, _memos_of(chunk, memos))
                else:
                    await self.deliveries.fail(chunk, reply, now, _memos_of(chunk, memos))
        unanswered = [k for k in owned if k not in outcomes]
        async for chunk in chunks(unanswered):
            await self.deliveries.fail(chunk, None, now, _memos_of(chunk, memos))

    def _redelivered(self, channel: Channel, answers: list[Reply]) -> Reply:
        """Every item was answered by an earlier attempt: its answer again, not forwarded."""
        self.router.count(channel.name, "redelivery")
        distinct = list({(r.status, tuple(r.headers), r.body): r for r in answers}.values())
        reply = distinct[0] if len(distinct) == 1 else None
        if reply is None and not all(r.ok for r in distinct):
            reply = _summary(distinct)
        decision_log.info("%s", json.dumps({"channel": channel.name, "reason": "redelivery",
                                            "status": reply.status if reply else 200}))
        return as_redelivery(reply)


_WHAT = {"timeout": "timed out", "unreachable": "unreachable", "pool_exhausted": "has no free connection"}


def _memos_of(keys: Sequence[DeliveryKey], memos: dict[DeliveryKey, DecisionMemo]) -> dict[DeliveryKey, DecisionMemo]:
    return {k: memos[k] for k in keys if k in memos}


def _answer_of(claim: Claim) -> Reply:
    """The answer an earlier attempt gave (DONE, FAILED), or 504 while it is still in flight."""
    if claim.reply is not None:
        return claim.reply
    return text_reply(504, "an earlier attempt of this update is still in flight")


def _summary(replies: list[Reply]) -> Reply:
    """The platform's answer for a split batch: 200 only when every part got a 2xx, else 502."""
    if all(r.ok for r in replies):
        return text_reply(200, "ok")
    failed = [r.status for r in replies if not r.ok]
    return text_reply(502, f"{len(failed)} of {len(replies)} parts failed: {failed}")
