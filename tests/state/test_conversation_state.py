"""ConversationState contract (every backend): routes with an inactivity TTL on the given `now`,
one decision at a time per conversation (acquire -> commit | release), recent texts, counts."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest

from stickyroute.core.route import ConversationKey, Route
from stickyroute.state.base import ConversationState, LeaseTimeout
from tests.state.backends import RECENT, T0, TTL_S

A = ConversationKey("telegram", "111", None, "111")
B = ConversationKey("telegram", "222", None, "222")
GUARD_S = 5.0


def route(agent: str = "coder", at: float = T0, **kw: object) -> Route:
    return Route(agent, chosen_at=at, last_active=at, **kw)  # type: ignore[arg-type]


async def _let_other_tasks_run() -> None:
    for _ in range(10):
        await asyncio.sleep(0)


# --- routes ------------------------------------------------------------------------------------


async def test_missing_key_is_none(conversations: ConversationState) -> None:
    assert await conversations.get(A, T0) is None


async def test_put_then_get_returns_the_route_with_every_field(conversations: ConversationState) -> None:
    full = Route("coder", chosen_at=T0 - 60.5, last_active=T0, explicit=True, candidate="billing", counter=3)
    await conversations.put(A, full, T0)
    assert (await conversations.get(A, T0 + 1), await conversations.count("telegram", T0 + 1)) == (full, 1)


@pytest.mark.parametrize(
    ("idle_s", "alive"),
    [
        pytest.param(0.0, True, id="same-instant"),
        pytest.param(TTL_S - 0.5, True, id="just-before-ttl"),
        pytest.param(TTL_S, False, id="exactly-ttl-expired"),
        pytest.param(TTL_S + 3600, False, id="long-after"),
    ],
)
async def test_route_lives_until_idle_for_ttl(conversations: ConversationState, idle_s: float, alive: bool) -> None:
    await conversations.put(A, route(), T0)
    assert (await conversations.get(A, T0 + idle_s) is not None) is alive


async def test_ttl_counts_from_last_active_not_from_the_write(conversations: ConversationState) -> None:
    await conversations.put(A, route(at=T0 - 1000), T0)
    assert (await conversations.get(A, T0 + TTL_S - 1001), await conversations.get(A, T0 + TTL_S - 1000)) == (
        route(at=T0 - 1000), None)


async def test_writing_a_newer_last_active_extends_the_route(conversations: ConversationState) -> None:
    await conversations.put(A, route(), T0)
    await conversations.put(A, replace(route(), last_active=T0 + 1000), T0 + 1000)
    assert await conversations.get(A, T0 + TTL_S + 500) == replace(route(), last_active=T0 + 1000)


async def test_reading_does_not_extend_the_route(conversations: ConversationState) -> None:
    await conversations.put(A, route(), T0)
    await conversations.get(A, T0 + TTL_S - 1)
    assert await conversations.get(A, T0 + TTL_S) is None


async def test_writing_an_already_expired_route_drops_the_old_one(conversations: ConversationState) -> None:
    await conversations.put(A, route(), T0)
    await conversations.put(A, route(at=T0 - 2 * TTL_S), T0 + 10)
    assert await conversations.get(A, T0 + 10) is None


async def test_expiry_is_per_key(conversations: ConversationState) -> None:
    await conversations.put(A, route(), T0)
    await conversations.put(B, route(at=T0 + 1000), T0 + 1000)
    assert (await conversations.get(A, T0 + TTL_S), await conversations.get(B, T0 + TTL_S)) == (
        None, route(at=T0 + 1000))


async def test_delete_forgets_and_a_missing_key_is_no_error(conversations: ConversationState) -> None:
    await conversations.put(A, route(), T0)
    await conversations.delete(A, T0 + 1)
    await conversations.delete(B, T0 + 1)
    assert (await conversations.get(A, T0 + 2), await conversations.count("telegram", T0 + 2)) == (None, 0)


@pytest.mark.parametrize(
    "other",
    [
        ConversationKey("whatsapp", "111", None, "111"),
        ConversationKey("telegram", "-100", None, "111"),
        ConversationKey("telegram", "111", "7", "111"),
        ConversationKey("telegram", "111", None, "999"),
    ],
    ids=["channel", "chat", "thread", "sender"],
)
async def test_keys_differ_by_every_part(conversations: ConversationState, other: ConversationKey) -> None:
    await conversations.put(A, route("coder"), T0)
    await conversations.put(other, route("billing"), T0)
    assert ((await conversations.get(A, T0)).agent, (await conversations.get(other, T0)).agent) == ("coder", "billing")


async def test_count_is_per_channel_and_only_live_routes(conversations: ConversationState) -> None:
    await conversations.put(A, route(), T0)
    await conversations.put(B, route(at=T0 + 100), T0 + 100)
    await conversations.put(ConversationKey("whatsapp", "1", None, "1"), route(), T0)
    assert (await conversations.count("telegram", T0 + 100), await conversations.count("telegram", T0 + TTL_S),
            await conversations.count("whatsapp", T0)) == (2, 1, 1)


# --- decisions: acquire, commit, release ---------------------------------------------------------


async def test_lease_carries_the_live_route(conversations: ConversationState) -> None:
    await conversations.put(A, route(), T0)
    lease = await conversations.acquire(A, T0 + 5)
    await conversations.release(lease)
    expired = await conversations.acquire(A, T0 + TTL_S)
    await conversations.release(expired)
    assert ((lease.key, lease.route), expired.route) == ((A, route()), None)


@pytest.mark.parametrize(
    ("store", "forget", "expected"),
    [
        pytest.param(route("billing", at=T0 + 5), False, route("billing", at=T0 + 5), id="store"),
        pytest.param(None, True, None, id="forget"),
        pytest.param(None, False, route(), id="neither-keeps"),
    ],
)
async def test_commit_applies_the_decision(conversations: ConversationState, store: Route | None, forget: bool,
                                           expected: Route | None) -> None:
    await conversations.put(A, route(), T0)
    lease = await conversations.acquire(A, T0 + 5)
    await conversations.commit(lease, T0 + 5, store=store, forget=forget)
    assert await conversations.get(A, T0 + 6) == expected


async def test_a_second_decision_waits_for_the_first_commit_and_sees_its_route(conversations: ConversationState) -> None:
    first = await conversations.acquire(A, T0)
    second = asyncio.ensure_future(conversations.acquire(A, T0 + 1))
    await _let_other_tasks_run()
    waited = second.done()
    await conversations.commit(first, T0, store=route("coder", counter=1, candidate="ops"))
    lease = await asyncio.wait_for(second, GUARD_S)
    await conversations.release(lease)
    assert (waited, lease.route) == (False, route("coder", counter=1, candidate="ops"))


async def test_different_conversations_do_not_wait_for_each_other(conversations: ConversationState) -> None:
    held = await conversations.acquire(A, T0)
    other = await asyncio.wait_for(conversations.acquire(B, T0), GUARD_S)
    await conversations.release(other)
    await conversations.release(held)
    assert other.key == B


async def test_acquire_gives_up_after_wait_s_and_leaves_the_holder_alone(conversations: ConversationState) -> None:
    held = await conversations.acquire(A, T0)
    with pytest.raises(LeaseTimeout):
        await asyncio.wait_for(conversations.acquire(A, T0, wait_s=0.05), GUARD_S)
    await conversations.commit(held, T0, store=route())
    lease = await asyncio.wait_for(conversations.acquire(A, T0 + 1, wait_s=GUARD_S), GUARD_S)
    await conversations.release(lease)
    assert lease.route == route()


async def test_release_writes_nothing_and_lets_the_next_decision_in(conversations: ConversationState) -> None:
    await conversations.put(A, route(), T0)
    lease = await conversations.acquire(A, T0 + 1)
    await conversations.release(lease)
    again = await asyncio.wait_for(conversations.acquire(A, T0 + 2), GUARD_S)
    await conversations.release(again)
    assert again.route == route()


async def test_a_cancelled_waiter_does_not_block_the_conversation(conversations: ConversationState) -> None:
    held = await conversations.acquire(A, T0)
    cancelled = asyncio.ensure_future(conversations.acquire(A, T0))
    await _let_other_tasks_run()
    cancelled.cancel()
    with pytest.raises(asyncio.CancelledError):
        await cancelled
    await conversations.commit(held, T0, store=route())
    lease = await asyncio.wait_for(conversations.acquire(A, T0 + 1), GUARD_S)
    await conversations.release(lease)
    assert lease.route == route()


async def test_recent_texts_keep_the_last_n_and_start_empty(conversations: ConversationState) -> None:
    seen = []
    for i, text in enumerate(["one", "two", "three"]):
        lease = await conversations.acquire(A, T0 + i)
        seen.append(lease.recent)
        await conversations.commit(lease, T0 + i, text=text)
    lease = await conversations.acquire(A, T0 + 3)
    await conversations.release(lease)
    assert (seen, lease.recent, RECENT) == ([(), ("one",), ("one", "two")], ("two", "three"), 2)


async def test_recent_texts_are_kept_without_a_route_and_per_conversation(conversations: ConversationState) -> None:
    lease = await conversations.acquire(A, T0)
    await conversations.commit(lease, T0, text="first")
    mine, other = await conversations.acquire(A, T0 + 1), await conversations.acquire(B, T0 + 1)
    await conversations.release(mine)
    await conversations.release(other)
    assert (mine.route, mine.recent, other.recent) == (None, ("first",), ())


async def test_recent_texts_are_dropped_after_ttl_of_inactivity(conversations: ConversationState) -> None:
    lease = await conversations.acquire(A, T0)
    await conversations.commit(lease, T0, text="first")
    later = await conversations.acquire(A, T0 + TTL_S)
    await conversations.release(later)
    assert later.recent == ()
