"""Dispatch: the one async driver of a webhook request, from inbound bytes to the relayed reply.

    inbound ─▶ verify (secret token / X-Hub-Signature-256) ─▶ parse (channels/) ─▶ redelivery?
            ─▶ route every envelope (router) ─▶ forward the same bytes (forwarder) ─▶ Outbound

Reads the clock once per request. Nothing the proxy parses can produce a 5xx: a body that is
not a known shape goes to the channel default unchanged (reason `unparsed`); only an agent that
is down (502) or too slow (504) does, so the platform retries and nothing is lost.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
from dataclasses import dataclass
from typing import Callable, Sequence
from urllib.parse import parse_qsl

from cachetools import TTLCache

from proxy import channels
from proxy.channels.whatsapp_split import sign, split_body
from proxy.config.model import Channel, ChannelType, Config
from proxy.routing.engine import Decision
from proxy.routing.envelope import Envelope
from proxy.errors import UnparsedUpdate, UpstreamError
from proxy.forwarding.forwarder import Forwarder, upstream_url
from proxy.forwarding.headers import TrustedProxies, upstream_request_headers
from proxy.state.delivery_memory import ClaimState, DeliveryMemory
from proxy.forwarding.replies import Outbound, agent_list_reply, text_reply
from proxy.routing.router import Router
from proxy.channels.security import check_meta_signature, check_telegram_secret, verification_reply

log = logging.getLogger("stickyroute.dispatch")
decision_log = logging.getLogger("stickyroute.decision")

DELIVERY_TTL_S = 24 * 3600.0
STORED_REPLIES_MAX_BYTES = 64 * 1024 * 1024
"""Memory for the stored replies of delivered updates (bytes; least recently used dropped)."""


RecordHook = Callable[["Inbound", float, Sequence[Decision | None]], None]
"""`recorder(inbound, now, decisions)`: called once per authenticated request when it is done,
with the decision of each envelope of the body in body order (None where none was kept)."""


@dataclass(frozen=True, slots=True)
class Inbound:
    """One inbound webhook request as the ASGI shell read it (body read once, bytes)."""

    method: str
    path: str
    raw_path: bytes
    query: bytes
    headers: list[tuple[bytes, bytes]]
    body: bytes
    client_ip: str
    scheme: str
    host: str


class Dispatcher:
    """Handles inbound requests of every channel; one per running config."""

    def __init__(self, config: Config, router: Router, forwarder: Forwarder, clock: Callable[[], float],
                 recorder: RecordHook | None = None) -> None:
        self.config = config
        self.router = router
        self.forwarder = forwarder
        self.clock = clock
        self.recorder = recorder
        self.trusted = TrustedProxies.from_cidrs(config.server.trusted_proxies)
        self.deliveries: DeliveryMemory[Outbound] = DeliveryMemory(
            ttl_s=DELIVERY_TTL_S, timer=clock, max_bytes=STORED_REPLIES_MAX_BYTES, sizeof=_stored_size)
        self._decisions: TTLCache[tuple[str, str], Decision] = TTLCache(maxsize=100_000, ttl=DELIVERY_TTL_S, timer=clock)

    async def handle(self, channel: Channel, inbound: Inbound) -> Outbound:
        """Answer one request on `channel`'s path (never raises for bad input)."""
        if inbound.method == "GET" and channel.type is ChannelType.WHATSAPP and channel.verify_token:
            answer = verification_reply(dict(parse_qsl(inbound.query.decode("latin-1"))), channel.verify_token)
            if answer is not None:
                return text_reply(answer[0], answer[1])
        if not self._authentic(channel, inbound):
            log.warning("rejected request on %s: authentication failed", channel.name)
            return text_reply(401, "unauthorized")
        now = self.clock()
        try:
            return await self._dispatch(channel, inbound, now)
        finally:
            if self.recorder is not None:
                self._record(self.recorder, channel, inbound, now)

    def _record(self, recorder: RecordHook, channel: Channel, inbound: Inbound, now: float) -> None:
        """Hand the request and its envelopes' decisions (body order, redeliveries: the first
        decision) to the recorder; parses the body again, which only a recording run pays for."""
        envelopes: tuple[Envelope, ...] = ()
        try:
            if inbound.method == "POST":
                envelopes = channels.parse(channel.type.value, inbound.body, channel.name)
        except UnparsedUpdate:
            pass
        decisions = [self._decisions.get((channel.name, e.delivery_id)) if e.delivery_id else None for e in envelopes]
        recorder(inbound, now, decisions)

    async def _dispatch(self, channel: Channel, inbound: Inbound, now: float) -> Outbound:
        """Forward an authenticated request: non-POST and unparsed bodies to the default, else route."""
        if inbound.method != "POST":
            return await self._forward(channel, inbound, Decision(channel.default_agent, "default"), inbound.body)
        try:
            envelopes = channels.parse(channel.type.value, inbound.body, channel.name)
        except UnparsedUpdate as exc:
            log.warning("unparsed update on %s forwarded to %s: %s", channel.name, channel.default_agent, exc)
            return await self._forward(channel, inbound, Decision(channel.default_agent, "unparsed"), inbound.body)
        if channel.type is ChannelType.TELEGRAM:
            return await self._single(channel, inbound, envelopes[0], now)
        return await self._batch(channel, inbound, envelopes, now)

    def _authentic(self, channel: Channel, inbound: Inbound) -> bool:
        if channel.type is ChannelType.TELEGRAM and channel.secret_token:
            return check_telegram_secret(inbound.headers, channel.secret_token)
        if channel.type is ChannelType.WHATSAPP and channel.app_secret and not _is_handshake(inbound):
            return check_meta_signature(inbound.body, inbound.headers, channel.app_secret)
        return True

    async def _decide(self, channel: Channel, envelope: Envelope, now: float) -> Decision:
        """The routing decision, reusing the first one for a redelivered update."""
        key = (channel.name, envelope.delivery_id) if envelope.delivery_id else None
        if key is not None and key in self._decisions:
            return self._decisions[key]
        decision = await self._route(channel, envelope, now)
        if key is not None:
            self._decisions[key] = decision
        return decision

    async def _route(self, channel: Channel, envelope: Envelope, now: float) -> Decision:
        """The router's decision; a bug while deciding sends the update to the default (never a 5xx)."""
        try:
            return await self.router.route(channel.name, envelope, now)
        except Exception:
            log.exception("routing failed on %s; forwarding to the default %s", channel.name, channel.default_agent)
            return Decision(channel.default_agent, "routing_error")

    async def _single(self, channel: Channel, inbound: Inbound, envelope: Envelope, now: float) -> Outbound:
        """A one-update POST (Telegram): redelivery memory keyed by `update_id`."""
        if envelope.delivery_id is None:
            decision = await self._route(channel, envelope, now)
            return await self._answer(channel, inbound, envelope, decision)
        key = (channel.name, envelope.delivery_id)
        claim = self.deliveries.begin(key)
        if claim.state is not ClaimState.FIRST:
            try:
                return self._redelivered(channel, await claim.wait())
            except Exception:  # the first attempt died without an answer: try again ourselves
                claim = self.deliveries.begin(key)
                if claim.state is not ClaimState.FIRST:
                    return self._redelivered(channel, await claim.wait())
        try:
            decision = await self._decide(channel, envelope, now)
            reply = await self._answer(channel, inbound, envelope, decision)
        except BaseException as exc:
            self.deliveries.fail(key, exc)
            raise
        if reply.ok:
            self.deliveries.complete(key, reply)
        else:
            self.deliveries.fail(key, reply)
        return reply

    def _redelivered(self, channel: Channel, reply: Outbound | None) -> Outbound:
        """Count and log a redelivery, answered with the first attempt's stored reply."""
        self.router.count(channel.name, "redelivery")
        status = reply.status if reply else 200
        decision_log.info("%s", json.dumps({"channel": channel.name, "reason": "redelivery", "status": status}))
        return _as_redelivery(reply)

    async def _answer(self, channel: Channel, inbound: Inbound, envelope: Envelope, decision: Decision) -> Outbound:
        if decision.list_agents:
            return agent_list_reply(self.config, envelope, decision.agent)
        return await self._forward(channel, inbound, decision, inbound.body)

    async def _batch(self, channel: Channel, inbound: Inbound, envelopes: tuple[Envelope, ...], now: float) -> Outbound:
        """A WhatsApp POST of 1..n items: forward whole, split per agent, or skip delivered parts."""
        keys = _item_keys(envelopes, inbound.body)
        ids = list(dict.fromkeys(keys))
        claims = self.deliveries.begin_many(channel.name, ids)
        waiting = [i for i, c in claims.items() if c.state is ClaimState.IN_FLIGHT]
        while waiting:  # wait for the attempts in flight; ids whose attempt failed are ours to retry
            await asyncio.gather(*(claims[i].wait() for i in waiting), return_exceptions=True)
            claims.update(self.deliveries.begin_many(channel.name, waiting))
            waiting = [i for i in waiting if claims[i].state is ClaimState.IN_FLIGHT]
        owned = [i for i, c in claims.items() if c.state is ClaimState.FIRST]
        if not owned:
            stored = {id(c.outcome): c.outcome for c in claims.values()}
            return self._redelivered(channel, next(iter(stored.values())) if len(stored) == 1 else None)
        if len(owned) < len(ids):
            log.info("batch on %s: %d of %d item(s) already delivered, forwarding the rest",
                     channel.name, len(ids) - len(owned), len(ids))
        mine = set(owned)
        pending = [(e, k) for e, k in zip(envelopes, keys) if k in mine]
        outcomes: dict[str, Outbound] = {}
        try:
            reply = await self._forward_items(channel, inbound, envelopes, pending, now, outcomes)
        except BaseException as exc:
            self.deliveries.fail_many(channel.name, [i for i in owned if i not in outcomes], exc)
            raise
        finally:
            for delivery_id, part in outcomes.items():
                if part.ok:
                    self.deliveries.complete((channel.name, delivery_id), part)
                else:
                    self.deliveries.fail((channel.name, delivery_id), part)
        return reply

    async def _forward_items(self, channel: Channel, inbound: Inbound, envelopes: tuple[Envelope, ...],
                             pending: list[tuple[Envelope, str]], now: float, outcomes: dict[str, Outbound]) -> Outbound:
        """Route `pending` (item, delivery key) pairs and forward them (whole body, or one re-signed
        part per agent); record each key's part reply in `outcomes`. 200 only when every part got a 2xx."""
        groups: dict[str, list[tuple[Envelope, Decision, str]]] = {}
        for envelope, key in pending:
            decision = await self._decide(channel, envelope, now)
            groups.setdefault(decision.agent, []).append((envelope, decision, key))
        whole = len(groups) == 1 and len(pending) == len(envelopes)
        if not whole:
            try:
                bodies = split_body(inbound.body, {a: [e.item_path for e, _, _ in items] for a, items in groups.items()})
                log.info("mixed batch on %s split into %d part(s)", channel.name, len(groups))
            except (ValueError, RecursionError) as exc:  # cannot rebuild it: the documented fallback
                log.warning("batch on %s cannot be split (%s); forwarded whole to the default %s",
                            channel.name, exc, channel.default_agent)
                items = [item for group in groups.values() for item in group]
                groups, whole = {channel.default_agent: items}, True
        parts = []
        for agent, items in groups.items():
            decision = Decision(agent, ",".join(dict.fromkeys(d.reason for _, d, _ in items)))
            body = inbound.body if whole else bodies[agent]
            parts.append(self._forward(channel, inbound, decision, body, signed=not whole))
        replies = await asyncio.gather(*parts)
        for (_agent, items), part in zip(groups.items(), replies):
            for _envelope, _decision, key in items:
                outcomes[key] = part
        if whole:
            return replies[0]
        if all(r.ok for r in replies):
            return text_reply(200, "ok")
        failed = [r.status for r in replies if not r.ok]
        return text_reply(502, f"{len(failed)} of {len(replies)} parts failed: {failed}")

    async def _forward(self, channel: Channel, inbound: Inbound, decision: Decision, body: bytes,
                       signed: bool = False) -> Outbound:
        agent = self.config.agents[decision.agent]
        exact = agent.channel_urls.get(channel.name)
        url = upstream_url(exact, b"", inbound.query) if exact else upstream_url(agent.url, inbound.raw_path, inbound.query)
        headers = upstream_request_headers(
            inbound.headers, client_ip=inbound.client_ip, scheme=inbound.scheme, host=inbound.host,
            peer_trusted=inbound.client_ip in self.trusted, agent=decision.agent, reason=decision.reason,
        )
        if signed:
            headers = [h for h in headers if h[0].lower() != b"x-hub-signature-256"]
            if channel.app_secret:
                headers.append((b"x-hub-signature-256", sign(body, channel.app_secret).encode()))
        try:
            reply = await self.forwarder.forward(inbound.method, url, headers, body)
        except UpstreamError as exc:
            log.warning("upstream %s failed for %s: %s", decision.agent, channel.name, exc)
            what = "timed out" if exc.status_code == 504 else "failed"
            return text_reply(exc.status_code, f"upstream {decision.agent} {what}", decision.reason)
        return reply  # hop-by-hop headers already stripped by the forwarder


def _item_keys(envelopes: tuple[Envelope, ...], body: bytes) -> list[str]:
    """The redelivery key of each item: its delivery id (wamid, status id + status), or for an
    item without one (an account event) its place in this exact body, so a retried POST finds it."""
    digest = hashlib.sha256(body).hexdigest()[:16]
    return [e.delivery_id or f"{digest}:{'/'.join(map(str, e.item_path))}" for e in envelopes]


def _stored_size(reply: Outbound) -> int:
    """Approximate bytes one stored reply holds (body, headers, bookkeeping)."""
    return 256 + len(reply.body) + sum(len(n) + len(v) + 32 for n, v in reply.headers)


def _is_handshake(inbound: Inbound) -> bool:
    """Meta's GET verification (a `hub.mode` query parameter): it carries no signature (T14)."""
    return inbound.method == "GET" and "hub.mode" in dict(parse_qsl(inbound.query.decode("latin-1")))


def _as_redelivery(reply: Outbound | None) -> Outbound:
    """The stored answer of the first attempt, marked as a redelivery."""
    if reply is None:
        return text_reply(200, "ok", reason="redelivery")
    headers = [h for h in reply.headers if h[0].lower() != b"x-stickyroute-reason"]
    return Outbound(reply.status, headers + [(b"x-stickyroute-reason", b"redelivery")], reply.body)
