"""State backends under the contract suite, and the constants the contract tests share.

`conversations` is a backend's routes (`RoutesUnderTest`: step, catalogue and views) with TTL `TTL_S` and room for `MAX_CONVERSATIONS` routes
on channels `telegram` and `whatsapp`, keeping `RECENT` texts per conversation; `deliveries` a
DeliveryLog keeping answers `DELIVERY_TTL_S`; `switches` a SwitchBudget. Add a backend by adding its name to `BACKENDS` and
a branch to the two factories: the contract tests run on it unchanged.

`redis` runs on the real test Redis (tests/redis_server.py) under a private key prefix that
`aclose()` flushes; without a Redis it is skipped loudly (a failure when CI is set).
"""

from __future__ import annotations

from stickyroute.state.base import ConversationLimits, DeliveryLog
from stickyroute.state.budget import MemorySwitchBudget, SwitchBudget
from stickyroute.state.memory import MemoryConversationState, MemoryDeliveryLog
from stickyroute.state.redis import RedisConversationState, RedisDeliveryLog, RedisStore, RedisSwitchBudget
from tests.redis_server import flush_prefix, private_prefix, require_redis
from tests.state.routes import RoutesUnderTest

T0 = 1_700_000_000.0
TTL_S = 1800.0
MAX_CONVERSATIONS = 1000
RECENT = 2
DELIVERY_TTL_S = 24 * 3600.0
CHANNELS = ("telegram", "whatsapp")
BACKENDS = ["memory", "redis"]
TEST_OP_TIMEOUT_S = 2.0
"""Generous per-operation bound on the shared test machine (the product default is 50 ms)."""


def redis_store() -> RedisStore:
    """A store on the test Redis under a fresh private prefix (skips when there is no Redis)."""
    return RedisStore(require_redis(), private_prefix(), TEST_OP_TIMEOUT_S)


class _FlushingConversations(RedisConversationState):
    async def aclose(self) -> None:
        await flush_prefix(require_redis(), self._keys.prefix)
        await super().aclose()


class _FlushingDeliveries(RedisDeliveryLog):
    async def aclose(self) -> None:
        await flush_prefix(require_redis(), self._keys.prefix)
        await super().aclose()


def make_conversations(backend: str, recent: int = RECENT) -> RoutesUnderTest:
    limits = {channel: ConversationLimits(TTL_S, MAX_CONVERSATIONS) for channel in CHANNELS}
    if backend == "memory":
        return RoutesUnderTest(MemoryConversationState(limits, recent_messages=recent))
    if backend == "redis":
        return RoutesUnderTest(_FlushingConversations(redis_store(), limits, recent_messages=recent))
    raise ValueError(backend)


class _FlushingSwitches(RedisSwitchBudget):
    async def aclose(self) -> None:
        await flush_prefix(require_redis(), self._store.keys.prefix)
        await super().aclose()


def make_switches(backend: str) -> SwitchBudget:
    if backend == "memory":
        return MemorySwitchBudget()
    if backend == "redis":
        return _FlushingSwitches(redis_store())
    raise ValueError(backend)


def make_deliveries(backend: str) -> DeliveryLog:
    if backend == "memory":
        return MemoryDeliveryLog(ttl_s=DELIVERY_TTL_S)
    if backend == "redis":
        return _FlushingDeliveries(redis_store(), ttl_s=DELIVERY_TTL_S)
    raise ValueError(backend)
