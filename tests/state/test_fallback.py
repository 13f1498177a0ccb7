"""The memory fallback around Redis (a redis-server of the test's own, stopped and started): a
lease is committed to the backend it came from, keys claimed in memory end in memory, nothing
raises while Redis is down, and the health goes back up when Redis answers."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from prometheus_client import CollectorRegistry

from stickyroute.core.route import ConversationKey, Route
from stickyroute.reply import Reply
from stickyroute.state.base import ClaimState, ConversationLimits, StateUnavailable
from stickyroute.state.budget import MemoryBudget
from stickyroute.state.fallback import FallbackBudget, FallbackConversationState, FallbackDeliveryLog
from stickyroute.state.health import BackendHealth
from stickyroute.state.memory import MemoryConversationState, MemoryDeliveryLog
from stickyroute.state.redis import RedisBudget, RedisConversationState, RedisDeliveryLog, RedisStore
from tests.redis_server import OwnRedis
from tests.state.routes import RoutesUnderTest

T0 = 1_700_000_000.0
A = ConversationKey("telegram", "1", None, "1")
LIMITS = {"telegram": ConversationLimits(1800.0, 1000)}
OK = Reply(200, [], b"ok")
GUARD_S = 10.0


class Parts:
    def __init__(self, redis: OwnRedis) -> None:
        self.registry = CollectorRegistry()
        self.store = RedisStore(redis.url, "fb:", op_timeout_s=0.5)
        self.health = BackendHealth("redis", self.store.url, self.store.ping, self.registry, interval_s=0.05)
        self.memory = MemoryConversationState(LIMITS)
        self.conversations = RoutesUnderTest(FallbackConversationState(
            RedisConversationState(self.store, LIMITS), self.memory, self.health))
        self.memory_log = MemoryDeliveryLog()
        self.deliveries = FallbackDeliveryLog(RedisDeliveryLog(self.store), self.memory_log, self.health)
        self.budget = FallbackBudget(RedisBudget(self.store, 1.0), MemoryBudget(1.0), self.health)

    def gauge(self) -> float | None:
        return self.registry.get_sample_value("stickyroute_state_backend_up", {"backend": "redis"})


@pytest.fixture
async def parts() -> AsyncIterator[tuple[OwnRedis, Parts]]:
    with OwnRedis() as redis:
        made = Parts(redis)
        await made.health.start()
        yield redis, made
        await made.health.aclose()
        await made.conversations.aclose()


async def _until_up(health: BackendHealth) -> bool:
    async with asyncio.timeout(GUARD_S):
        while not health.up:  # noqa: ASYNC110 (the ping task flips it; a bounded poll)
            await asyncio.sleep(0.02)
    return health.up


async def test_a_redis_lease_is_committed_to_redis_and_a_memory_lease_to_memory(parts: tuple[OwnRedis, Parts]) -> None:
    redis, p = parts
    from_redis = await p.conversations.acquire(A, T0)
    redis.stop()
    await p.conversations.commit(from_redis, T0, store=Route("coder", T0, T0))  # lost, not raised
    down = (p.health.up, p.gauge())
    from_memory = await p.conversations.acquire(A, T0 + 1)
    await p.conversations.commit(from_memory, T0 + 1, store=Route("billing", T0 + 1, T0 + 1))
    during = await p.conversations.get(A, T0 + 2)
    redis.start()
    back = await _until_up(p.health)
    after = await p.conversations.get(A, T0 + 3)  # the new, empty Redis: the outage's route stayed in memory
    assert (down, during, back, p.gauge(), after, await RoutesUnderTest(p.memory).get(A, T0 + 3)) == (
        (False, 0.0), Route("billing", T0 + 1, T0 + 1), True, 1.0, None, Route("billing", T0 + 1, T0 + 1))


async def test_a_delivery_claimed_in_memory_ends_in_memory_after_redis_is_back(parts: tuple[OwnRedis, Parts]) -> None:
    redis, p = parts
    key = ("telegram", "42")
    redis.stop()
    claimed = await p.deliveries.claim([key], T0)
    spent = await p.budget.take("telegram", T0)
    redis.start()
    await _until_up(p.health)
    await p.deliveries.complete([key], OK, T0 + 1)
    assert ([c.state for c in claimed], spent, (await p.memory_log.claim([key], T0 + 2))[0].state,
            (await p.deliveries.claim([key], T0 + 2))[0].state) == (
        [ClaimState.FIRST], True, ClaimState.DONE, ClaimState.FIRST)


def _slow() -> StateUnavailable:
    exc = StateUnavailable("redis claim: no answer within op_timeout_ms = 50")
    exc.__cause__ = TimeoutError()
    return exc


async def test_a_slow_operation_degrades_only_when_the_probe_ping_fails_too(parts: tuple[OwnRedis, Parts]) -> None:
    redis, p = parts
    p.health.failed(_slow())  # Redis answers the probe: the slow operation only fell back for its request
    assert p.health._probe is not None
    await asyncio.wait_for(p.health._probe, GUARD_S)
    answered = p.health.up
    redis.stop()
    p.health.failed(_slow())
    await asyncio.wait_for(p.health._probe, GUARD_S)
    assert (answered, p.health.up, p.gauge()) == (True, False, 0.0)


async def test_a_connection_error_degrades_at_once() -> None:
    health = BackendHealth("redis", "redis://x", None, CollectorRegistry())
    refused = StateUnavailable("redis claim: ConnectionError: refused")
    refused.__cause__ = ConnectionError("refused")
    health.failed(refused)
    assert health.up is False
