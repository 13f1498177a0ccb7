"""DeliveryLog contract (every backend): claims, stored answers for `ttl_s`, first decisions,
waiting for an attempt in flight (field report T6, platforms.md 2.5)."""

from __future__ import annotations

import asyncio

import pytest

from stickyroute.core.delivery import DecisionMemo
from stickyroute.reply import Reply
from stickyroute.state.base import Claim, ClaimState, DeliveryLog
from tests.state.backends import DELIVERY_TTL_S, T0

TG, WA = "telegram", "whatsapp"
U = (TG, "5001")
FIRST, IN_FLIGHT, DONE, FAILED = ClaimState.FIRST, ClaimState.IN_FLIGHT, ClaimState.DONE, ClaimState.FAILED
OK = Reply(200, [(b"content-type", b"application/json")], b'{"ok":true}')
BAD = Reply(502, [(b"content-type", b"text/plain; charset=utf-8")], b"upstream general failed")
MEMO = DecisionMemo("billing", "classified")
GUARD_S = 5.0
SHORT_S = 0.05
"""A settle bound that runs out (the attempt never ends)."""


async def _started(*tasks: asyncio.Future[Claim]) -> None:
    for _ in range(20):
        await asyncio.sleep(0)
    assert not any(t.done() for t in tasks)


async def test_first_claim_is_first_without_a_memo(deliveries: DeliveryLog) -> None:
    assert await deliveries.claim([U], T0) == [Claim(FIRST)]


async def test_t6_redelivery_after_a_2xx_is_done_with_the_stored_answer_and_memo(deliveries: DeliveryLog) -> None:
    await deliveries.claim([U], T0)
    await deliveries.complete([U], OK, T0 + 1, {U: MEMO})
    assert await deliveries.claim([U], T0 + 35) == [Claim(DONE, OK, MEMO)]


async def test_same_id_on_another_channel_is_another_delivery(deliveries: DeliveryLog) -> None:
    await deliveries.claim([U], T0)
    await deliveries.complete([U], OK, T0)
    assert await deliveries.claim([(WA, "5001")], T0) == [Claim(FIRST)]


async def test_a_second_claim_while_in_flight_is_in_flight(deliveries: DeliveryLog) -> None:
    await deliveries.claim([U], T0)
    assert await deliveries.claim([U], T0 + 1) == [Claim(IN_FLIGHT)]


async def test_t6_waiters_get_the_first_attempts_answer(deliveries: DeliveryLog) -> None:
    await deliveries.claim([U], T0)
    waiting = [asyncio.ensure_future(deliveries.settle(U, T0 + 1, GUARD_S)) for _ in range(2)]
    await _started(*waiting)
    await deliveries.complete([U], OK, T0 + 2, {U: MEMO})
    assert await asyncio.wait_for(asyncio.gather(*waiting), GUARD_S) == [Claim(DONE, OK, MEMO)] * 2


async def test_waiters_get_the_failed_attempts_answer_and_the_next_retry_forwards(deliveries: DeliveryLog) -> None:
    await deliveries.claim([U], T0)
    waiter = asyncio.ensure_future(deliveries.settle(U, T0 + 1, GUARD_S))
    await _started(waiter)
    await deliveries.fail([U], BAD, T0 + 2, {U: MEMO})
    assert (await asyncio.wait_for(waiter, GUARD_S), await deliveries.claim([U], T0 + 60)) == (
        Claim(FAILED, BAD), [Claim(FIRST, memo=MEMO, attempt=2)])


async def test_an_attempt_that_died_without_an_answer_hands_the_delivery_to_one_waiter(deliveries: DeliveryLog) -> None:
    await deliveries.claim([U], T0)
    one = asyncio.ensure_future(deliveries.settle(U, T0 + 1, GUARD_S))
    two = asyncio.ensure_future(deliveries.settle(U, T0 + 1, GUARD_S))
    await _started(one, two)
    await deliveries.fail([U], None, T0 + 2)
    done, pending = await asyncio.wait([one, two], timeout=GUARD_S, return_when=asyncio.FIRST_COMPLETED)
    winner = done.pop()
    loser = pending.pop() if pending else None
    assert (winner.result(), loser is not None and not loser.done()) == (Claim(FIRST, attempt=2), True)
    await deliveries.complete([U], OK, T0 + 3)
    assert await asyncio.wait_for(loser, GUARD_S) == Claim(DONE, OK)  # type: ignore[arg-type]


async def test_settle_gives_up_after_its_bound_while_still_in_flight(deliveries: DeliveryLog) -> None:
    await deliveries.claim([U], T0)
    assert await asyncio.wait_for(deliveries.settle(U, T0 + 1, SHORT_S), GUARD_S) == Claim(IN_FLIGHT)


async def test_settle_on_a_key_not_in_flight_claims_it(deliveries: DeliveryLog) -> None:
    assert await deliveries.settle(U, T0, GUARD_S) == Claim(FIRST)
    assert await deliveries.claim([U], T0) == [Claim(IN_FLIGHT)]


async def test_a_cancelled_waiter_does_not_cancel_the_others(deliveries: DeliveryLog) -> None:
    await deliveries.claim([U], T0)
    cancelled = asyncio.ensure_future(deliveries.settle(U, T0, GUARD_S))
    kept = asyncio.ensure_future(deliveries.settle(U, T0, GUARD_S))
    await _started(cancelled, kept)
    cancelled.cancel()
    with pytest.raises(asyncio.CancelledError):
        await cancelled
    await deliveries.complete([U], OK, T0 + 1)
    assert await asyncio.wait_for(kept, GUARD_S) == Claim(DONE, OK)


async def test_an_answer_expires_after_ttl(deliveries: DeliveryLog) -> None:
    await deliveries.claim([U], T0)
    await deliveries.complete([U], OK, T0)
    before = await deliveries.claim([U], T0 + DELIVERY_TTL_S - 1)
    after = await deliveries.claim([U], T0 + DELIVERY_TTL_S)
    assert ([c.state for c in before], [c.state for c in after], await deliveries.size(T0 + DELIVERY_TTL_S)) == (
        [DONE], [FIRST], 0)


async def test_retried_batch_claims_only_the_parts_without_a_2xx(deliveries: DeliveryLog) -> None:
    a, b, c = (WA, "wamid.A"), (WA, "wamid.B"), (WA, "wamid.C")
    first = await deliveries.claim([a, b, c], T0)
    billing, support = Reply(200, [], b"billing"), Reply(502, [], b"support")
    memos = {a: DecisionMemo("billing", "classified"), b: DecisionMemo("support", "cache"),
             c: DecisionMemo("billing", "status")}
    await deliveries.complete([a, c], billing, T0 + 1, memos)
    await deliveries.fail([b], support, T0 + 1, memos)
    retry = await deliveries.claim([a, b, c], T0 + 30)
    assert ([x.state for x in first], retry, await deliveries.size(T0 + 30)) == (
        [FIRST] * 3,
        [Claim(DONE, billing, memos[a]), Claim(FIRST, memo=memos[b], attempt=2), Claim(DONE, billing, memos[c])], 2)


async def test_a_batch_arriving_while_its_parts_are_in_flight_waits_for_each(deliveries: DeliveryLog) -> None:
    a, b = (WA, "wamid.A"), (WA, "wamid.B")
    await deliveries.claim([a, b], T0)
    again = await deliveries.claim([a, b], T0 + 1)
    waiting = [asyncio.ensure_future(deliveries.settle(k, T0 + 1, GUARD_S)) for k in (a, b)]
    await _started(*waiting)
    await deliveries.complete([a], OK, T0 + 2)
    await deliveries.fail([b], BAD, T0 + 2)
    assert ([x.state for x in again], await asyncio.wait_for(asyncio.gather(*waiting), GUARD_S)) == (
        [IN_FLIGHT] * 2, [Claim(DONE, OK), Claim(FAILED, BAD)])


async def test_the_first_decision_is_kept_across_failed_attempts(deliveries: DeliveryLog) -> None:
    await deliveries.claim([U], T0)
    await deliveries.fail([U], BAD, T0 + 1, {U: MEMO})
    await deliveries.claim([U], T0 + 2)
    await deliveries.fail([U], BAD, T0 + 3, {U: DecisionMemo("support", "classified")})
    assert await deliveries.claim([U], T0 + 4) == [Claim(FIRST, memo=MEMO, attempt=3)]


async def test_stored_answers_keep_status_headers_and_body_bytes(deliveries: DeliveryLog) -> None:
    odd = Reply(201, [(b"X-Dup", b"1"), (b"x-dup", b"2"), (b"content-encoding", b"gzip")], bytes(range(256)))
    await deliveries.claim([U], T0)
    await deliveries.complete([U], odd, T0)
    assert (await deliveries.claim([U], T0 + 1))[0].reply == odd
