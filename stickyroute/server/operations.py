"""The admin API's operations on the running service (`stickyroute.admin.ports.AdminOps`).

Conversations are read and written through the state backend (memory or Redis, the same calls);
a pin or a reset holds the conversation's lease like a decision does, so it never interleaves
with one, and is logged as a decision line with reason `admin`. A pin to a human desk starts the
desk's hold (issue #22); a reset ends any hold. Each route shows whether a desk holds it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stickyroute.admin.errors import ApiError, unprocessable
from stickyroute.admin.sessions import Sessions
from stickyroute.admin.throttle import AuthThrottle
from stickyroute.config.ids import normalise_id
from stickyroute.config.listeners import AdminSettings
from stickyroute.config.model import Channel
from stickyroute.core.route import ConversationKey, Route
from stickyroute.observe.ring import Subscription
from stickyroute.routing.engine import Decision, NeedsClassification, NeedsPermit
from stickyroute.routing.envelope import Envelope, MessageKind
from stickyroute.routing.explain import explain_outcome
from stickyroute.routing.layer1 import Layer1
from stickyroute.server.core import ServiceCore
from stickyroute.server.reload import reload_config
from stickyroute.state.base import Lease, LeaseTimeout, RouteUnavailable

__all__ = ["Operations"]

Json = dict[str, Any]
LEASE_WAIT_S = 5.0
"""How long a pin or reset waits for a decision of the conversation in progress (then 409)."""


class Operations:
    """`AdminOps` over one `Service` (always its current runtime's config)."""

    def __init__(self, service: ServiceCore) -> None:
        self.service = service
        self.sessions = Sessions()
        self.throttle = AuthThrottle()

    def token(self) -> str | None:
        return self.service.config.admin.token

    def admin(self) -> AdminSettings:
        return self.service.config.admin

    def now(self) -> float:
        return self.service.clock()

    def readiness(self) -> str:
        return self.service.readiness()

    async def metrics(self) -> tuple[bytes, str]:
        return await self.service.metrics()

    async def stats(self) -> Mapping[str, object]:
        return await self.service.stats_snapshot()

    def status(self) -> Json:
        service, runtime = self.service, self.service.runtime
        return {
            "status": service.readiness(),
            "config": {"hash": runtime.digest, "path": runtime.config.path, "loaded_at": runtime.loaded_at,
                       "overrides": service.overrides.shown()},
            "state": service.state.health.snapshot(),
            "channels": [{"name": c.name, "type": c.type.value, "paths": list(c.paths),
                          "default_agent": c.default_agent, "strategy": c.routing.strategy.value,
                          "agents": list(runtime.rules[c.name].agents)} for c in runtime.config.channels.values()],
            "decision_stream_subscribers": service.accounting.ring.subscribers,
        }

    def series(self, minutes: float) -> Json:
        return self.service.accounting.series.window(self.service.clock(), minutes * 60.0)

    async def agents(self) -> list[Json]:
        config = self.service.config
        now = self.service.clock()
        live = {name: await self.service.state.views.census(name, now) for name in config.channels}
        demo = self.service.demo
        return [{"name": a.name, "description": a.description, "aliases": list(a.aliases), "hidden": a.hidden,
                 "channels": [c.name for c in config.channels.values() if c.allows(a.name)],
                 "live_conversations": {name: counts.get(a.name, 0) for name, counts in live.items()},
                 "demo": ({"paused": a.name in demo.paused} if demo is not None and a.name in demo.names else None)}
                for a in config.agents.values()]

    def _channel(self, name: str) -> Channel:
        channel = self.service.config.channels.get(name)
        if channel is None:
            known = ", ".join(self.service.config.channels)
            raise ApiError(404, "not found", f"no channel {name!r} in the running config (channels: {known})")
        return channel

    def _held(self, route: Route, now: float) -> bool:
        """A human desk of the running config holds `route` at `now`."""
        desk = self.service.config.agents.get(route.agent)
        return desk is not None and desk.human and route.held(now)

    def _route_json(self, channel: Channel, hashed: str, route: Route, now: float) -> Json:
        held = self._held(route, now)
        return {"conversation": hashed, "channel": channel.name, "agent": route.agent, "reason": route.reason,
                "explicit": route.explicit, "counter": route.counter, "candidate": route.candidate,
                "chosen_at": route.chosen_at, "last_active": route.last_active,
                "expires_at": route.expires_at(channel.routing.ttl_s), "held": held,
                "held_until": route.last_active + route.hold_s if held and route.hold_s is not None else None}

    async def conversations(self, channel: str | None, agent: str | None, limit: int,
                            held: bool | None = None) -> list[Json]:
        config = self.service.config
        if agent is not None and agent not in config.agents:
            raise ApiError(404, "not found", f"no agent {agent!r} in the running config")
        channels = [self._channel(channel)] if channel is not None else list(config.channels.values())
        now = self.service.clock()
        found: list[tuple[Channel, str, Route]] = []
        for one in channels:
            routes = await self.service.state.views.scan(one.name, now, agent=agent,
                                                           limit=limit if held is None else None)
            found += [(one, h, r) for h, r in routes if held is None or self._held(r, now) == held]
        found.sort(key=lambda item: item[2].last_active, reverse=True)
        return [self._route_json(c, h, r, now) for c, h, r in found[:limit]]

    def _key(self, channel: Channel, chat: str, sender: str, thread: str | None) -> ConversationKey:
        ids = [normalise_id(v) for v in (chat, sender, thread)]
        if not ids[0] or not ids[1] or (thread is not None and not ids[2]):
            raise unprocessable("chat, sender, thread: expected platform ids")
        return ConversationKey(channel.name, ids[0], ids[2], ids[1])

    async def conversation(self, channel: str, chat: str, sender: str, thread: str | None) -> Json:
        found = self._channel(channel)
        key = self._key(found, chat, sender, thread)
        route = await self.service.state.views.route_of(key, self.service.clock())
        envelope = Envelope(found.name, MessageKind.TEXT, sender_id=key.sender_id, chat_id=key.chat_id,
                            thread_id=key.thread_id, sender_aliases=(key.sender_id,))
        layer1 = Layer1(found).match(envelope)
        ids = {"chat": key.chat_id, "thread": key.thread_id, "sender": key.sender_id}
        if route is None:
            raise ApiError(404, "not found", f"no live route for conversation {key.hashed()}",
                           conversation=key.hashed(), layer1={"agent": layer1.agent, "reason": layer1.reason}, **ids)
        return {**self._route_json(found, key.hashed(), route, self.service.clock()), **ids,
                "layer1": {"agent": layer1.agent, "reason": layer1.reason}}

    async def pin(self, channel: str, chat: str, sender: str, thread: str | None, agent: str,
                  explicit: bool) -> Json:
        found = self._channel(channel)
        key = self._key(found, chat, sender, thread)
        if agent not in self.service.config.agents:
            raise unprocessable(f"agent: no agent {agent!r} in the running config")
        if not found.allows(agent):
            raise unprocessable(f"agent: {agent!r} is not reachable on channel {found.name} (not in its agents)")
        now = self.service.clock()
        lease = await self._lease(key, now)
        desk = self.service.config.agents[agent]
        route = Route(agent, chosen_at=now, last_active=now, explicit=explicit, reason="admin",
                      hold_s=desk.hold_s if desk.human else None)
        await self.service.conversations.commit(lease, now, store=route)
        line = self.service.accounting.admin(found.name, key.hashed(), agent, "pin", now, explicit)
        return {"route": self._route_json(found, key.hashed(), route, now),
                "previous": self._route_json(found, key.hashed(), lease.route, now) if lease.route else None,
                "log": line}

    async def reset(self, channel: str, chat: str, sender: str, thread: str | None) -> Json:
        found = self._channel(channel)
        key = self._key(found, chat, sender, thread)
        now = self.service.clock()
        lease = await self._lease(key, now)
        if lease.route is None:
            await self.service.conversations.release(lease)
            raise ApiError(404, "not found", f"no live route for conversation {key.hashed()}",
                           conversation=key.hashed())
        await self.service.conversations.commit(lease, now, forget=True)
        line = self.service.accounting.admin(found.name, key.hashed(), None, "reset", now)
        return {"route": None, "previous": self._route_json(found, key.hashed(), lease.route, now), "log": line}

    async def _lease(self, key: ConversationKey, now: float) -> Lease:
        try:
            return await self.service.conversations.acquire(key, now, LEASE_WAIT_S)
        except LeaseTimeout:
            raise ApiError(409, "conflict", f"conversation {key.hashed()} is being decided; retry") from None
        except RouteUnavailable:  # Redis up but late: never written from this process's memory
            raise ApiError(503, "state unavailable", f"Redis did not answer in time for conversation "
                           f"{key.hashed()}; retry") from None

    def decisions(self, limit: int, channel: str | None) -> list[Json]:
        return self.service.accounting.ring.recent(limit, channel)

    def decisions_after(self, last_id: int) -> list[Json]:
        return self.service.accounting.ring.after(last_id)

    def subscribe(self) -> Subscription:
        return self.service.accounting.ring.subscribe()

    async def agent_hint(self, authorization: str | None, body: bytes) -> tuple[int, Json]:
        return await self.service.runtime.dispatcher.signals.from_api(authorization, body, self.service.clock())

    def explain(self, channel: str, text: str, current: str | None, candidate: str | None, counter: int) -> Json:
        config = self.service.config
        self._channel(channel)
        for field, agent in (("current", current), ("candidate", candidate)):
            if agent is not None and agent not in config.agents:
                raise unprocessable(f"{field}: no agent {agent!r} in the running config")
        lines, outcome = explain_outcome(self.service.runtime.rules[channel], text, current, candidate, counter)
        return {"channel": channel, "text": text, "lines": lines, "outcome": _outcome_json(outcome)}

    async def reload(self) -> Json:
        return (await reload_config(self.service)).as_dict()

    def demo_agents(self) -> list[Json]:
        demo = self.service.demo
        if demo is None or not demo.names:
            raise ApiError(404, "not found", "no demo agents in this process (start it with serve --demo-agents)")
        return demo.as_list()

    async def pause(self, name: str, paused: bool) -> Json:
        demo = self.service.demo
        if demo is None or name not in demo.names:
            raise ApiError(404, "not found", f"no demo agent {name!r} in this process (serve --demo-agents)")
        if paused:
            await demo.pause(name)
        else:
            await demo.resume(name)
        return next(agent for agent in demo.as_list() if agent["name"] == name)


def _outcome_json(outcome: Decision | NeedsClassification | NeedsPermit) -> Json:
    if isinstance(outcome, NeedsPermit):
        return {"agent": outcome.granted.agent, "reason": outcome.granted.reason,
                "if_over_the_switch_limit": {"agent": outcome.refused.agent, "reason": outcome.refused.reason}}
    if isinstance(outcome, NeedsClassification):
        return {"asks_classifier": outcome.purpose.value, "current": outcome.current, "candidate": outcome.candidate}
    return {"agent": outcome.agent, "reason": outcome.reason}
