"""ConversationState contract of issue #22, every backend: a human desk's hold round-trips and
keeps its route live past the TTL (through a decision, a read, a find, the views), until the
hold's end; an agent's `done` swaps the route for none; an operator's delete ends a hold."""

from __future__ import annotations

from stickyroute.core.route import ConversationKey, Route
from stickyroute.state.base import ConversationState
from tests.state.backends import T0, TTL_S

A = ConversationKey("telegram", "111", None, "111")
HOLD_S = 4 * 3600.0


def held(at: float = T0, **kw: object) -> Route:
    return Route("humans", chosen_at=at, last_active=at, explicit=True, reason="explicit", hold_s=HOLD_S,
                 **kw)  # type: ignore[arg-type]


def plain(at: float = T0) -> Route:
    return Route("coder", chosen_at=at, last_active=at, reason="classified")


async def test_a_hold_round_trips_with_every_field(conversations: ConversationState) -> None:
    full = held(candidate="billing", counter=1, hint="handoff", hint_agent=None)
    await conversations.put(A, full, T0)
    assert await conversations.get(A, T0 + 1) == full


async def test_a_held_route_lives_past_the_ttl_until_the_hold_ends(conversations: ConversationState) -> None:
    lease = await conversations.acquire(A, T0)
    await conversations.commit(lease, T0, store=held())
    later = T0 + TTL_S + 60
    lease = await conversations.acquire(A, later)
    seen_by_decision = lease.route
    await conversations.release(lease)
    assert (seen_by_decision, await conversations.get(A, later), await conversations.find("telegram", A.digest(), later),
            await conversations.count("telegram", later), [h for h, _r in await conversations.scan("telegram", later)],
            await conversations.census("telegram", later), await conversations.get(A, T0 + HOLD_S),
            await conversations.count("telegram", T0 + HOLD_S)) == (
        held(), held(), held(), 1, [A.hashed()], {"humans": 1}, None, 0)


async def test_a_route_without_a_hold_still_expires_at_the_ttl(conversations: ConversationState) -> None:
    await conversations.put(A, plain(), T0)
    assert (await conversations.get(A, T0 + TTL_S - 1), await conversations.get(A, T0 + TTL_S)) == (plain(), None)


async def test_a_hold_refreshed_by_a_decision_extends_from_its_activity(conversations: ConversationState) -> None:
    await conversations.put(A, held(), T0)
    lease = await conversations.acquire(A, T0 + HOLD_S - 10)
    await conversations.commit(lease, T0 + HOLD_S - 10, store=held().touched(T0 + HOLD_S - 10))
    assert (await conversations.get(A, T0 + 2 * HOLD_S - 11)) == held().touched(T0 + HOLD_S - 10)


async def test_done_swaps_the_route_for_none(conversations: ConversationState) -> None:
    lease = await conversations.acquire(A, T0)
    await conversations.commit(lease, T0, store=plain(), text="please refactor this")
    released = await conversations.swap("telegram", A.digest(), plain(), None, T0 + 5)
    after = (await conversations.get(A, T0 + 6), await conversations.find("telegram", A.digest(), T0 + 6),
             await conversations.count("telegram", T0 + 6), await conversations.scan("telegram", T0 + 6))
    lease = await conversations.acquire(A, T0 + 7)
    fresh = lease.route
    await conversations.commit(lease, T0 + 7, store=plain(T0 + 7))
    assert (released, after, fresh, await conversations.get(A, T0 + 8)) == (
        True, (None, None, 0, []), None, plain(T0 + 7))


async def test_done_swaps_only_the_route_expected(conversations: ConversationState) -> None:
    await conversations.put(A, held(), T0)
    assert (await conversations.swap("telegram", A.digest(), plain(), None, T0 + 5),
            await conversations.get(A, T0 + 6)) == (False, held())


async def test_done_on_a_held_route_past_the_ttl_drops_it(conversations: ConversationState) -> None:
    await conversations.put(A, held(), T0)
    later = T0 + TTL_S + 60
    assert (await conversations.swap("telegram", A.digest(), held(), None, later),
            await conversations.get(A, later + 1)) == (True, None)


async def test_an_operators_delete_ends_a_hold(conversations: ConversationState) -> None:
    await conversations.put(A, held(), T0)
    await conversations.delete(A, T0 + TTL_S + 1)
    assert await conversations.get(A, T0 + TTL_S + 2) is None
