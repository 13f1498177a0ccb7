"""`DeliverySteps` on both backends, and the claim lease on Redis: begin holds the conversation
with the claim, finish commits and completes, a renewed claim outlives its lease, a dead
holder's claim frees one lease after its last renewal (times on the caller's clock, no sleep)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import redis.exceptions
from redis.asyncio import Redis

from stickyroute.core.delivery import DecisionMemo
from stickyroute.core.route import ConversationKey, Route
from stickyroute.reply import Reply
from stickyroute.state.base import Claim, ClaimState, ConversationLimits, ConversationState, StateUnavailable
from stickyroute.state.memory import MemoryConversationState, MemoryDeliveryLog, MemoryDeliverySteps
from stickyroute.state.redis import RedisConversationState, RedisDeliveryLog, RedisDeliverySteps, RedisStore
from stickyroute.state.steps import DeliverySteps, Writes
from tests.redis_server import flush_prefix, private_prefix, require_redis
from tests.state.routes import RoutesUnderTest

T0 = 1_700_000_000.0
LIMITS = {"telegram": ConversationLimits(1800.0, 1000)}
OK = Reply(200, [], b'{"ok":true}')
CONV = ConversationKey("telegram", "42", None, "7")
ROUTE = Route("coder", T0, T0, reason="explicit")
MEMO = DecisionMemo("coder", "explicit")


class Backend:
    def __init__(self, name: str) -> None:
        self.name = name
        if name == "memory":
            self.conversations: ConversationState = MemoryConversationState(LIMITS)
            self.deliveries: MemoryDeliveryLog | RedisDeliveryLog = MemoryDeliveryLog()
            self.steps: DeliverySteps = MemoryDeliverySteps(self.conversations, self.deliveries)
        else:
            self.prefix = private_prefix()
            store = RedisStore(require_redis(), self.prefix, 2.0)
            conversations = RedisConversationState(store, LIMITS)
            log = RedisDeliveryLog(store, claim_ttl_s=5.0)
            self.conversations, self.deliveries = conversations, log
            self.steps = RedisDeliverySteps(conversations, log)

    async def aclose(self) -> None:
        if self.name == "redis":
            await flush_prefix(require_redis(), self.prefix)
        await self.conversations.aclose()


@pytest.fixture(params=["memory", "redis"])
async def backend(request: pytest.FixtureRequest) -> AsyncIterator[Backend]:
    made = Backend(request.param)
    yield made
    await made.aclose()


async def test_begin_holds_the_conversation_finish_commits_and_completes(backend: Backend) -> None:
    steps, key, other = backend.steps, ("telegram", "1"), ("telegram", "2")
    begun = await steps.begin(key, CONV, T0, hold=True)
    assert (begun.claim, begun.lease is not None) == (Claim(ClaimState.FIRST), True)
    assert begun.lease is not None and begun.lease.route is None
    busy = await steps.begin(other, CONV, T0, hold=True)  # the conversation is held: claim only
    assert (busy.claim, busy.lease) == (Claim(ClaimState.FIRST), None)
    assert (await steps.begin(key, CONV, T0, hold=True)).claim == Claim(ClaimState.IN_FLIGHT)
    await steps.finish(key, begun.lease, Writes(store=ROUTE), OK, MEMO, T0 + 1)
    assert await RoutesUnderTest(backend.conversations).get(CONV, T0 + 1) == ROUTE
    assert (await steps.begin(key, CONV, T0 + 2, hold=True)).claim == Claim(ClaimState.DONE, OK, MEMO)
    await backend.deliveries.fail([other], None, T0 + 2)
    again = await steps.begin(other, CONV, T0 + 3, hold=True)  # free again after finish
    assert again.lease is not None and again.lease.route == ROUTE


async def test_a_noted_decision_is_the_retry_s_first_decision(backend: Backend) -> None:
    steps, key = backend.steps, ("telegram", "5")
    begun = await steps.begin(key, CONV, T0, hold=True)
    assert begun.lease is not None
    await steps.note(key, begun.lease, Writes(store=ROUTE), MEMO, T0)
    await backend.deliveries.fail([key], None, T0 + 1, {key: MEMO})
    retry = await steps.begin(key, CONV, T0 + 2, hold=True)
    assert (retry.claim, retry.lease) == (Claim(ClaimState.FIRST, memo=MEMO, attempt=2), None)  # the memo decides


async def test_a_renewed_claim_outlives_its_lease_and_a_dead_holder_s_frees_within_one() -> None:
    prefix = private_prefix()
    limits = LIMITS
    holder, survivor = (RedisDeliveryLog(RedisStore(require_redis(), prefix, 2.0), claim_ttl_s=5.0) for _ in range(2))
    steps = RedisDeliverySteps(RedisConversationState(holder.store, limits), holder)
    other = RedisDeliverySteps(RedisConversationState(survivor.store, limits), survivor)
    key = ("telegram", "9")
    begun = await steps.begin(key, CONV, T0, hold=True)
    await holder.renew([key], T0 + 4.0, begun.lease)  # the forward runs on: renewed at a third... and more
    assert (await other.begin(key, CONV, T0 + 8.9, hold=True)).claim == Claim(ClaimState.IN_FLIGHT)
    # the holder dies: no more renewals; one lease after the last one the retry holds it
    late = await other.begin(key, CONV, T0 + 9.0, hold=True)
    assert late.claim == Claim(ClaimState.FIRST, attempt=2)
    raw = Redis.from_url(require_redis())
    lock_ms = await raw.pttl(holder.store.keys.lock(CONV))  # Redis's own clock: the lock lives one lease too
    await raw.aclose()
    assert 0 < lock_ms <= 5000
    await flush_prefix(require_redis(), prefix)
    await holder.aclose()
    await survivor.aclose()


async def test_a_begin_whose_reply_is_lost_gives_the_conversation_back(monkeypatch: pytest.MonkeyPatch) -> None:
    prefix = private_prefix()
    store = RedisStore(require_redis(), prefix, 2.0)
    conversations, log = RedisConversationState(store, LIMITS), RedisDeliveryLog(store, claim_ttl_s=5.0)
    steps = RedisDeliverySteps(conversations, log)
    evalsha = store._wire.evalsha  # type: ignore[union-attr]
    lost = [True]

    async def reply_lost_once(*args: object) -> object:
        result = await evalsha(*args)  # type: ignore[arg-type]
        if lost:
            lost.clear()
            raise redis.exceptions.ConnectionError("connection reset after the script ran")
        return result

    monkeypatch.setattr(store._wire, "evalsha", reply_lost_once)
    with pytest.raises(StateUnavailable):
        await steps.begin(("telegram", "1"), CONV, T0, hold=True)
    await conversations.aclose()  # waits for the background give-back
    raw = Redis.from_url(require_redis())
    held = await raw.exists(store.keys.lock(CONV))
    await raw.aclose()
    await flush_prefix(require_redis(), prefix)
    assert held == 0
