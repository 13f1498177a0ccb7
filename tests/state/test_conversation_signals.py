"""ConversationState contract for agent signals (issue #12, every backend): a route keeps its
pending hint, a conversation is found by its digest, and `swap` writes only over the route
expected while no decision holds the conversation."""

from __future__ import annotations

from stickyroute.core.route import ConversationKey, Route
from stickyroute.state.base import ConversationState
from tests.state.backends import T0, TTL_S

A = ConversationKey("telegram", "111", None, "111")
B = ConversationKey("telegram", "222", None, "222")


def route(agent: str = "coder", at: float = T0, **kw: object) -> Route:
    return Route(agent, chosen_at=at, last_active=at, **kw)  # type: ignore[arg-type]


async def test_a_pending_hint_round_trips_with_every_field(conversations: ConversationState) -> None:
    full = route(candidate="billing", counter=1, reason="classified", hint="not-mine", hint_agent="billing")
    await conversations.put(A, full, T0)
    assert await conversations.get(A, T0 + 1) == full


async def test_a_route_written_by_a_decision_is_found_by_its_digest(conversations: ConversationState) -> None:
    lease = await conversations.acquire(A, T0)
    await conversations.commit(lease, T0, store=route())
    assert (await conversations.find("telegram", A.digest(), T0 + 1),
            await conversations.find("telegram", B.digest(), T0 + 1),
            await conversations.find("whatsapp", A.digest(), T0 + 1)) == (route(), None, None)


async def test_find_sees_no_expired_route(conversations: ConversationState) -> None:
    await conversations.put(A, route(), T0)
    assert await conversations.find("telegram", A.digest(), T0 + TTL_S) is None


async def test_swap_writes_over_the_expected_route(conversations: ConversationState) -> None:
    await conversations.put(A, route(), T0)
    hinted = route().hinted("not-mine", "billing")
    written = await conversations.swap("telegram", A.digest(), route(), hinted, T0 + 5)
    assert (written, await conversations.get(A, T0 + 6)) == (True, hinted)


async def test_swap_refuses_when_the_route_changed(conversations: ConversationState) -> None:
    await conversations.put(A, route("billing", T0 + 1), T0 + 1)
    written = await conversations.swap("telegram", A.digest(), route(), route().hinted("handoff"), T0 + 5)
    assert (written, await conversations.get(A, T0 + 6)) == (False, route("billing", T0 + 1))


async def test_swap_refuses_while_a_decision_holds_the_conversation(conversations: ConversationState) -> None:
    await conversations.put(A, route(), T0)
    lease = await conversations.acquire(A, T0 + 1)
    written = await conversations.swap("telegram", A.digest(), route(), route().hinted("not-mine"), T0 + 1)
    await conversations.release(lease)
    assert (written, await conversations.get(A, T0 + 2)) == (False, route())


async def test_swap_of_an_unknown_conversation_writes_nothing(conversations: ConversationState) -> None:
    written = await conversations.swap("telegram", B.digest(), route(), route().hinted("not-mine"), T0)
    assert (written, await conversations.get(B, T0)) == (False, None)


async def test_a_handoff_route_from_swap_lives_ttl_after_its_own_last_active(conversations: ConversationState) -> None:
    await conversations.put(A, route(), T0)
    handed = Route("billing", chosen_at=T0 + 100, last_active=T0 + 100, reason="handoff", hint="handoff")
    assert await conversations.swap("telegram", A.digest(), route(), handed, T0 + 100)
    assert (await conversations.get(A, T0 + 100 + TTL_S - 1), await conversations.get(A, T0 + 100 + TTL_S)) == (
        handed, None)
