"""The memory backend's own bounds (not part of the contract: Redis bounds memory by expiry):
routes per channel (LRU at `max_conversations`), stored answers by total size in bytes."""

from __future__ import annotations

from stickyroute.core.route import ConversationKey, Route
from stickyroute.reply import Reply
from stickyroute.state.base import ClaimState, ConversationLimits
from stickyroute.state.memory import MemoryConversationState, MemoryDeliveryLog
from tests.state.routes import RoutesUnderTest

T0 = 1_700_000_000.0
TTL = 1800.0


def key(n: int) -> ConversationKey:
    return ConversationKey("telegram", str(n), None, str(n))


def route(at: float = T0) -> Route:
    return Route("coder", chosen_at=at, last_active=at)


def state(max_conversations: int) -> RoutesUnderTest:
    return RoutesUnderTest(MemoryConversationState({"telegram": ConversationLimits(TTL, max_conversations)}))


async def test_least_recently_used_route_is_evicted_at_max_conversations() -> None:
    routes = state(2)
    for n in (1, 2, 3):
        await routes.put(key(n), route(), T0)
    assert [await routes.get(key(n), T0) is not None for n in (1, 2, 3)] == [False, True, True]


async def test_a_read_makes_a_route_recently_used() -> None:
    routes = state(2)
    await routes.put(key(1), route(), T0)
    await routes.put(key(2), route(), T0)
    await routes.get(key(1), T0)
    await routes.put(key(3), route(), T0)
    assert [await routes.get(key(n), T0) is not None for n in (1, 2, 3)] == [True, False, True]


async def test_expired_routes_are_dropped_before_a_live_one_is_evicted() -> None:
    routes = state(2)
    await routes.put(key(1), route(T0), T0)
    await routes.put(key(2), route(T0 - TTL), T0 - TTL)
    await routes.get(key(2), T0 - TTL)  # the expired one is the most recently used
    await routes.put(key(3), route(T0), T0)
    assert [await routes.get(key(n), T0) is not None for n in (1, 2, 3)] == [True, False, True]


async def test_the_store_keeps_routes_by_digest_and_no_raw_id() -> None:
    routes = state(2)
    for n in range(1, 11):
        await routes.put(key(n), route(), T0)
        await routes.get(key(1), T0)  # key 1 read every time: the least recently used is another
    held = list(routes.backend._routes["telegram"])  # type: ignore[attr-defined]
    assert ([await routes.find("telegram", key(n).digest(), T0) is not None for n in (1, 9, 10)],
            sorted(held)) == ([True, False, True], sorted([key(1).digest(), key(10).digest()]))


async def test_stored_answers_are_bounded_by_size_least_recently_used_first() -> None:
    reply = Reply(200, [], b"x" * 1000)
    log = MemoryDeliveryLog(max_reply_bytes=3 * reply.size())
    for n in range(4):
        await log.claim([("telegram", str(n))], T0)
        await log.complete([("telegram", str(n))], reply, T0)
    states = [(await log.claim([("telegram", str(n))], T0 + 1))[0].state for n in range(4)]
    assert (states, await log.size(T0 + 1)) == ([ClaimState.FIRST] + [ClaimState.DONE] * 3, 3)


async def test_an_answer_larger_than_the_bound_reaches_waiters_but_is_not_stored() -> None:
    log = MemoryDeliveryLog(max_reply_bytes=1000)
    big = Reply(200, [], b"x" * 5000)
    await log.claim([("telegram", "1")], T0)
    await log.complete([("telegram", "1")], big, T0)
    assert ((await log.claim([("telegram", "1")], T0 + 1))[0].state, await log.size(T0 + 1)) == (ClaimState.FIRST, 0)


async def test_the_size_of_a_stored_answer_is_within_a_third_of_its_real_memory() -> None:
    """Issue #10: the delivery log's byte bound must be the memory it really takes (the soak showed
    the older estimate at about half of it)."""
    import gc
    import tracemalloc

    def fresh(text: bytes) -> bytes:
        return bytes(bytearray(text))

    log = MemoryDeliveryLog()
    count = 5000
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for n in range(count):
            key = ("telegram", str(10_000_000 + n))
            await log.claim([key], T0)
            headers = [(fresh(b"content-type"), fresh(b"application/json; charset=utf-8")),
                       (fresh(b"date"), fresh(b"Tue, 01 Dec 2026 06:00:00 GMT")), (fresh(b"server"), fresh(b"agent/1.0"))]
            await log.complete([key], Reply(200, headers, fresh(b'{"ok": true, "agent": "support"}')), T0)
        gc.collect()
        real = (tracemalloc.get_traced_memory()[0] - before) / count
    finally:
        tracemalloc.stop()
    estimated = await log.stored_bytes(T0) / count
    assert 0.75 < estimated / real < 1.33, (estimated, real)
