"""No silent fallback: while Redis is up, a late reply is never replaced by this process's memory
(a claim is refused, a route comes from what this process last saw, a write is lost), a declared
outage serves from memory or refuses (`when_unavailable`), and every one of them is counted and
summarised in one log line per interval. A redis-server of the test's own, paused with CLIENT
PAUSE to make its replies late while it stays up."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterator

import pytest
from prometheus_client import CollectorRegistry
from redis import Redis

from stickyroute.core.route import ConversationKey, Route
from stickyroute.state.base import (
    ClaimState,
    ConversationLimits,
    DeliveryUnconfirmed,
    RouteUnavailable,
    SlotUnavailable,
)
from stickyroute.state.fallback import FallbackConversationState, FallbackDeliveryLog
from stickyroute.state.health import BackendHealth
from stickyroute.state.memory import MemoryConversationState, MemoryDeliveryLog
from stickyroute.state.redis import RedisConversationState, RedisDeliveryLog, RedisStore
from tests.redis_server import OwnRedis
from tests.state.routes import RoutesUnderTest

T0 = 1_700_000_000.0
A = ConversationKey("telegram", "1", None, "1")
B = ConversationKey("telegram", "2", None, "2")
LIMITS = {"telegram": ConversationLimits(1800.0, 1000)}
PAUSE_MS = 3000
"""Long enough that the op (50 ms of loop time) is late on any machine; ended by CLIENT UNPAUSE."""


class Parts:
    def __init__(self, redis: OwnRedis, when_unavailable: str = "memory") -> None:
        self.registry = CollectorRegistry()
        self.store = RedisStore(redis.url, "nsf:", op_timeout_s=0.05)
        self.health = BackendHealth("redis", self.store.url, self.store.ping, self.registry, interval_s=0.05,
                                    when_unavailable=when_unavailable)
        self.memory = MemoryConversationState(LIMITS)
        self.conversations = RoutesUnderTest(FallbackConversationState(
            RedisConversationState(self.store, LIMITS), self.memory, self.health, LIMITS))
        self.memory_log = MemoryDeliveryLog()
        self.deliveries = FallbackDeliveryLog(RedisDeliveryLog(self.store), self.memory_log, self.health)

    def counted(self, operation: str, cause: str) -> float | None:
        return self.registry.get_sample_value("stickyroute_state_fallbacks_total",
                                              {"operation": operation, "cause": cause})


@pytest.fixture
def redis() -> Iterator[OwnRedis]:
    with OwnRedis() as own:
        yield own


@pytest.fixture
async def parts(redis: OwnRedis) -> AsyncIterator[Parts]:
    made = Parts(redis)
    await made.health.start()
    yield made
    await made.health.aclose()
    await made.conversations.aclose()


def pause(redis: OwnRedis) -> Redis:
    client = Redis.from_url(redis.url)
    client.execute_command("CLIENT", "PAUSE", PAUSE_MS, "ALL")
    return client


def unpause(client: Redis) -> None:
    client.execute_command("CLIENT", "UNPAUSE")
    client.close()


async def test_a_claim_redis_did_not_confirm_is_refused_never_claimed_in_memory(redis: OwnRedis,
                                                                                parts: Parts) -> None:
    key = ("telegram", "42")
    paused = pause(redis)
    try:
        with pytest.raises(DeliveryUnconfirmed):
            await parts.deliveries.claim([key], T0)
    finally:
        unpause(paused)
    in_memory = (await parts.memory_log.claim([key], T0))[0].state  # nobody claimed it there
    assert (in_memory, parts.counted("claim", "timeout"), dict(parts.health.counts).get(("claim", "outage"))) == (
        ClaimState.FIRST, 1.0, None)


async def test_a_route_redis_did_not_answer_is_the_one_this_process_last_saw(redis: OwnRedis, parts: Parts) -> None:
    lease = await parts.conversations.acquire(A, T0)
    await parts.conversations.commit(lease, T0, store=Route("coder", T0, T0))
    paused = pause(redis)
    try:
        with pytest.raises(RouteUnavailable) as seen:
            await parts.conversations.acquire(A, T0 + 1)
        with pytest.raises(RouteUnavailable) as unseen:
            await parts.conversations.acquire(B, T0 + 1)
        read = await parts.conversations.get(A, T0 + 1)
    finally:
        unpause(paused)
    written = await RoutesUnderTest(parts.memory).get(A, T0 + 1)
    assert (seen.value.route, unseen.value.route, read, written, parts.counted("acquire", "timeout"),
            parts.counted("read", "timeout")) == (Route("coder", T0, T0), None, Route("coder", T0, T0), None, 2.0, 1.0)


async def test_a_route_last_seen_is_forgotten_when_it_expires_or_is_dropped(parts: Parts) -> None:
    for key, forget in ((A, False), (B, True)):
        lease = await parts.conversations.acquire(key, T0)
        await parts.conversations.commit(lease, T0, store=Route("coder", T0, T0))
        if forget:
            lease = await parts.conversations.acquire(key, T0 + 1)
            await parts.conversations.commit(lease, T0 + 1, forget=True)
    assert (parts.conversations.backend.last_seen(A, T0 + 1799), parts.conversations.backend.last_seen(A, T0 + 1800),
            parts.conversations.backend.last_seen(B, T0 + 2)) == (Route("coder", T0, T0), None, None)


@pytest.mark.parametrize(("when_unavailable", "claimed", "cause"), [
    ("memory", ClaimState.FIRST, "outage"),
    ("refuse", None, "refused"),
])
async def test_during_an_outage_deliveries_are_claimed_in_memory_or_refused(
        redis: OwnRedis, when_unavailable: str, claimed: ClaimState | None, cause: str) -> None:
    made = Parts(redis, when_unavailable)
    await made.health.start()
    redis.stop()
    try:
        state: ClaimState | None = (await made.deliveries.claim([("telegram", "7")], T0))[0].state
    except DeliveryUnconfirmed:
        state = None
    finally:
        await made.health.aclose()
        await made.conversations.aclose()
    assert (state, made.health.up, made.counted("outage", "error"), made.counted("claim", cause),
            made.health.snapshot()) == (
        claimed, False, 1.0, 1.0,
        {"backend": "redis", "up": False, "when_unavailable": when_unavailable,
         "fallbacks": {f"claim/{cause}": 1, "outage/error": 1}})


def test_fallbacks_are_counted_each_and_logged_once_per_summary(caplog: pytest.LogCaptureFixture) -> None:
    registry = CollectorRegistry()
    health = BackendHealth("redis", "redis://10.0.0.5:6379/0", None, registry)
    with caplog.at_level(logging.WARNING, logger="stickyroute.state"):
        for _ in range(100):
            health.fell_back("claim", "timeout")
        for _ in range(3):
            health.fell_back("acquire", "timeout")
        before = len(caplog.records)
        health.log_summary()
        health.log_summary()  # nothing new: no line
    lines = [r.getMessage() for r in caplog.records]
    assert (before, lines) == (0, [
        "state: 103 operation(s) not served by redis at redis://10.0.0.5:6379/0 since the last summary "
        "(acquire/timeout 3, claim/timeout 100); it answers"])
    assert [registry.get_sample_value("stickyroute_state_fallbacks_total", {"operation": op, "cause": "timeout"})
            for op in ("claim", "acquire")] == [100.0, 3.0]


async def test_the_summary_line_is_scheduled_once_per_interval(caplog: pytest.LogCaptureFixture) -> None:
    health = BackendHealth("redis", "redis://r:6379/0", None, CollectorRegistry(), summary_s=3600.0)
    health.fell_back("claim", "timeout")
    first = health._summary
    health.fell_back("claim", "timeout")
    assert first is not None and health._summary is first  # one timer for the interval, not one per fallback
    with caplog.at_level(logging.WARNING, logger="stickyroute.state"):
        await health.aclose()  # logs what the last summary did not
    assert ([r.getMessage() for r in caplog.records], health._summary) == (
        ["state: 2 operation(s) not served by redis at redis://r:6379/0 since the last summary (claim/timeout 2); "
         "it answers"], None)


class _SlotDown:
    """A shared delivery log whose every call fails as a cluster slot whose primary is down
    (connection refused to that node: `cause` ConnectionRefusedError) or late (TimeoutError)."""

    def __init__(self, cause: BaseException) -> None:
        self.cause = cause

    async def claim(self, keys: object, now: float) -> object:
        raise SlotUnavailable("redis cluster node 127.0.0.1:7001 (slot 866) failed") from self.cause

    async def aclose(self) -> None:
        return None


async def _answer_ping(_timeout_s: float) -> None:
    return None  # the other primaries answer: the backend as a whole is up


@pytest.mark.parametrize(("cause", "when_unavailable", "claimed", "counted"), [
    pytest.param(ConnectionRefusedError(111, "refused"), "memory", ClaimState.FIRST, "outage", id="node-down-memory"),
    pytest.param(ConnectionRefusedError(111, "refused"), "refuse", None, "refused", id="node-down-refuse"),
    pytest.param(TimeoutError(), "memory", None, "timeout", id="node-late"),
])
async def test_a_failed_cluster_node_is_an_outage_of_its_slots_only(cause: BaseException, when_unavailable: str,
                                                                    claimed: ClaimState | None, counted: str) -> None:
    """A primary that refuses connections is a declared outage of its slots: `when_unavailable`
    decides (memory: claimed in this process, at least once; refuse: 503), while the backend as a
    whole stays up; a late reply from it is not an outage: refused, as on a single server."""
    registry = CollectorRegistry()
    health = BackendHealth("redis", "redis://seed", _answer_ping, registry, when_unavailable=when_unavailable)
    deliveries = FallbackDeliveryLog(_SlotDown(cause), MemoryDeliveryLog(), health)  # type: ignore[arg-type]
    try:
        state: ClaimState | None = (await deliveries.claim([("telegram", "7")], T0))[0].state
    except DeliveryUnconfirmed:
        state = None
    finally:
        await health.aclose()
    assert (state, health.up, registry.get_sample_value(
        "stickyroute_state_fallbacks_total", {"operation": "claim", "cause": counted})) == (claimed, True, 1.0)
