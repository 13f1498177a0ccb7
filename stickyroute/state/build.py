"""Build the state backends a running config asks for (`[state]`), and probe Redis for `check`.

    state = build_state(config, registry)     memory, or Redis behind the memory fallback
    await state.start()                       ping: unreachable is a logged warning, not a crash
    state.conversations / state.views / state.deliveries / state.steps / state.budget /
    state.switches / state.health
    await state.aclose()

    probe(config.state) -> None | "cannot reach Redis at ...: <exact error>"   (sync, for `check`;
                                                  cluster: each primary; sentinel: the master they name)

Lock and claim lifetimes come from the config: a decision may hold its conversation for the
classifier's `timeout_s` plus `LOCK_MARGIN_S`; an attempt's delivery claim is a lease of
`[state] claim_lease_s`, renewed every third of it while the attempt runs (then a replica that
died mid-attempt frees it within one lease and the platform's retry is forwarded again).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from prometheus_client import CollectorRegistry

from stickyroute.config.model import Config, StateSettings
from stickyroute.state.base import DeliveryLog, StateUnavailable, limits_for
from stickyroute.state.budget import ClassifierBudget, MemoryBudget, MemorySwitchBudget, SwitchBudget
from stickyroute.state.catalogue import RouteState
from stickyroute.state.fallback import (
    FallbackBudget,
    FallbackConversationState,
    FallbackDeliveryLog,
    FallbackSwitchBudget,
)
from stickyroute.state.fallback_steps import FallbackDeliverySteps
from stickyroute.state.health import BackendHealth
from stickyroute.state.memory import MemoryConversationState, MemoryDeliveryLog, MemoryDeliverySteps
from stickyroute.state.steps import DeliverySteps
from stickyroute.state.views import RouteViews

LOCK_MARGIN_S = 2.0
PROBE_TIMEOUT_S = 2.0


@dataclass(slots=True)
class StateBackends:
    """The state of one running config: every protocol, and the shared backend's health.

    `conversations` is the per-message step and the route catalogue (one object); `views` the
    operators' views over that catalogue (`stickyroute.state.views`)."""

    conversations: RouteState
    views: RouteViews
    deliveries: DeliveryLog
    steps: DeliverySteps
    budget: ClassifierBudget
    switches: SwitchBudget
    health: BackendHealth
    shared: bool

    async def start(self) -> None:
        """Ping the shared backend (a failure is logged and the process starts degraded)."""
        await self.health.start()

    async def aclose(self) -> None:
        """Stop the health ping and close every backend (the Redis pool once per component)."""
        await self.health.aclose()
        await self.conversations.aclose()
        await self.deliveries.aclose()
        await self.budget.aclose()
        await self.switches.aclose()


def lock_ttl_s(config: Config) -> float:
    """How long one decision may hold a conversation (seconds)."""
    return config.classifier.timeout_s + LOCK_MARGIN_S


def claim_ttl_s(config: Config) -> float:
    """How long a delivery claim lives without renewal (seconds): `[state] claim_lease_s`."""
    return config.state.claim_lease_s


def topology_of(settings: StateSettings) -> dict[str, Any]:
    """`RedisStore`'s keyword arguments for `[state] mode`, `sentinels` and `master`."""
    return {"mode": settings.mode, "sentinels": settings.sentinels, "master": settings.master}


def build_state(config: Config, registry: CollectorRegistry | None = None) -> StateBackends:
    """The backends of `config.state` (Redis is not contacted here: see `StateBackends.start`)."""
    limits = limits_for(config)
    recent = config.classifier.context_messages
    rate = config.classifier.calls_per_minute
    settings = config.state
    ttl_s = settings.delivery_ttl_hours * 3600.0
    memory = (MemoryConversationState(limits, recent),
              MemoryDeliveryLog(ttl_s=ttl_s, max_reply_bytes=settings.delivery_log_max_bytes), MemoryBudget(rate),
              MemorySwitchBudget())
    local_steps = MemoryDeliverySteps(memory[0], memory[1])
    if not settings.shared:
        return StateBackends(memory[0], RouteViews(memory[0]), memory[1], local_steps, *memory[2:],
                             BackendHealth("memory", "(this process)", None, registry), shared=False)
    from stickyroute.state.redis import (
        RedisBudget,
        RedisConversationState,
        RedisDeliveryLog,
        RedisDeliverySteps,
        RedisStore,
        RedisSwitchBudget,
    )

    store = RedisStore(settings.url, settings.key_prefix, settings.op_timeout_s, **topology_of(settings))
    health = BackendHealth("redis", store.url, store.ping, registry, when_unavailable=settings.when_unavailable)
    conversations = RedisConversationState(store, limits, recent, lock_ttl_s(config))
    log = RedisDeliveryLog(store, ttl_s=ttl_s, claim_ttl_s=claim_ttl_s(config))
    deliveries = FallbackDeliveryLog(log, memory[1], health)
    routes = FallbackConversationState(conversations, memory[0], health, limits)
    return StateBackends(
        routes,
        RouteViews(routes, also_prune=[memory[0]]),  # what an outage wrote in memory is pruned too
        deliveries,
        FallbackDeliverySteps(RedisDeliverySteps(conversations, log), local_steps, health, deliveries),
        FallbackBudget(RedisBudget(store, rate), memory[2], health),
        FallbackSwitchBudget(RedisSwitchBudget(store), memory[3], health),
        health, shared=True)


def probe(settings: StateSettings) -> str | None:
    """None when the configured Redis answers PING (or the backend is memory), else what failed,
    with the exact error: on a cluster every primary is pinged (and a silent one named), on
    Sentinel the master the sentinels name. Runs its own event loop: for the `check` command, not inside a loop."""
    if not settings.shared:
        return None
    from stickyroute.state.redis import RedisStore

    async def ping() -> str | None:
        store = RedisStore(settings.url, settings.key_prefix, max(settings.op_timeout_s, PROBE_TIMEOUT_S),
                           **topology_of(settings))
        try:
            await store.ping()
            silent = await store.silent_primaries()
        except StateUnavailable as exc:
            return (f"cannot reach Redis at {store.url} ({exc}); the proxy would start on its per-process "
                    "memory fallback and switch to Redis when it answers")
        finally:
            await store.aclose()
        if silent:
            return (f"Redis {store.url}: {'; '.join(silent)}; until a replica takes over, the updates whose "
                    "keys live in its slots answer 503 or are routed from the last route seen")
        return None

    return asyncio.run(ping())
