"""proxy/redelivery.py: first / done / in-flight / failed-then-retry / TTL / bound / batches (T6)."""

from __future__ import annotations

import asyncio

import pytest

from proxy.errors import UpstreamTimeout
from proxy.state.delivery_memory import Claim, ClaimState, DeliveryMemory

TG = "telegram"
WA = "whatsapp"


class FakeTimer:
    """Seconds, moved by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def timer() -> FakeTimer:
    return FakeTimer()


@pytest.fixture
def memory(timer: FakeTimer) -> DeliveryMemory[str]:
    return DeliveryMemory(max_entries=100, ttl_s=24 * 3600.0, timer=timer)


async def test_first_delivery_is_first(memory: DeliveryMemory[str]) -> None:
    assert memory.begin((TG, "5001")) == Claim(ClaimState.FIRST)


async def test_t6_redelivery_after_2xx_is_done_with_stored_outcome(memory: DeliveryMemory[str]) -> None:
    memory.begin((TG, "5001"))
    memory.complete((TG, "5001"), "reply-5001")
    claim = memory.begin((TG, "5001"))
    assert (claim.state, claim.outcome) == (ClaimState.DONE, "reply-5001")
    assert await claim.wait() == "reply-5001"
    assert memory.delivered((TG, "5001")) is True


async def test_same_id_on_another_channel_is_a_different_delivery(memory: DeliveryMemory[str]) -> None:
    memory.begin((TG, "5001"))
    memory.complete((TG, "5001"), "reply")
    assert memory.begin(("telegram-2", "5001")).state is ClaimState.FIRST


async def test_t6_redelivery_in_flight_waits_for_first_attempt_outcome(memory: DeliveryMemory[str]) -> None:
    assert memory.begin((TG, "5001")).state is ClaimState.FIRST
    second = memory.begin((TG, "5001"))
    third = memory.begin((TG, "5001"))
    assert (second.state, third.state) == (ClaimState.IN_FLIGHT, ClaimState.IN_FLIGHT)
    waiting = [asyncio.ensure_future(second.wait()), asyncio.ensure_future(third.wait())]
    await asyncio.sleep(0)  # let both waiters start waiting
    assert not any(task.done() for task in waiting)
    memory.complete((TG, "5001"), "reply-5001")
    assert await asyncio.wait_for(asyncio.gather(*waiting), 5) == ["reply-5001", "reply-5001"]


async def test_in_flight_waiter_gets_the_failed_first_attempt_reply(memory: DeliveryMemory[str]) -> None:
    memory.begin((TG, "5001"))
    waiter = memory.begin((TG, "5001"))
    task = asyncio.ensure_future(waiter.wait())
    await asyncio.sleep(0)
    memory.fail((TG, "5001"), "502-reply")
    assert await asyncio.wait_for(task, 5) == "502-reply"


async def test_in_flight_waiter_gets_the_first_attempt_exception(memory: DeliveryMemory[str]) -> None:
    memory.begin((TG, "5001"))
    waiter = memory.begin((TG, "5001"))
    task = asyncio.ensure_future(waiter.wait())
    await asyncio.sleep(0)
    memory.fail((TG, "5001"), UpstreamTimeout("upstream timed out"))
    with pytest.raises(UpstreamTimeout, match="upstream timed out"):
        await asyncio.wait_for(task, 5)


async def test_failure_with_every_waiter_gone_logs_nothing(memory: DeliveryMemory[str]) -> None:
    memory.begin((TG, "5001"))
    waiter = memory.begin((TG, "5001"))
    task = asyncio.ensure_future(waiter.wait())
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    memory.fail((TG, "5001"), UpstreamTimeout("gone"))
    assert waiter._pending is not None and waiter._pending.done()
    assert isinstance(waiter._pending.exception(), UpstreamTimeout)


async def test_cancelled_waiter_does_not_cancel_the_others(memory: DeliveryMemory[str]) -> None:
    memory.begin((TG, "5001"))
    first, second = memory.begin((TG, "5001")), memory.begin((TG, "5001"))
    cancelled = asyncio.ensure_future(first.wait())
    kept = asyncio.ensure_future(second.wait())
    await asyncio.sleep(0)
    cancelled.cancel()
    with pytest.raises(asyncio.CancelledError):
        await cancelled
    memory.complete((TG, "5001"), "reply")
    assert await asyncio.wait_for(kept, 5) == "reply"


async def test_t6_redelivery_after_failed_attempt_is_forwarded_again(memory: DeliveryMemory[str]) -> None:
    memory.begin((TG, "5001"))
    memory.fail((TG, "5001"), "502-reply")
    assert memory.begin((TG, "5001")).state is ClaimState.FIRST
    assert memory.delivered((TG, "5001")) is False


async def test_first_claim_has_nothing_to_wait_for(memory: DeliveryMemory[str]) -> None:
    with pytest.raises(RuntimeError):
        await memory.begin((TG, "5001")).wait()


async def test_done_entry_expires_after_ttl(memory: DeliveryMemory[str], timer: FakeTimer) -> None:
    memory.begin((TG, "5001"))
    memory.complete((TG, "5001"), "reply")
    timer.now += 24 * 3600.0 - 1
    assert memory.begin((TG, "5001")).state is ClaimState.DONE
    timer.now += 1
    assert memory.begin((TG, "5001")).state is ClaimState.FIRST
    assert len(memory) == 0


async def test_memory_is_bounded_and_evicts_least_recently_used(timer: FakeTimer) -> None:
    memory: DeliveryMemory[str] = DeliveryMemory(max_entries=3, ttl_s=60.0, timer=timer)
    for update_id in ("1", "2", "3", "4"):
        memory.begin((TG, update_id))
        memory.complete((TG, update_id), f"reply-{update_id}")
    assert len(memory) == 3
    assert [memory.delivered((TG, update_id)) for update_id in ("1", "2", "3", "4")] == [False, True, True, True]


async def test_all_delivered_only_when_every_id_got_a_2xx(memory: DeliveryMemory[str]) -> None:
    assert memory.all_delivered(WA, ["wamid.A", "wamid.B"]) is False
    memory.begin((WA, "wamid.A"))
    memory.complete((WA, "wamid.A"), "ok")
    assert memory.all_delivered(WA, ["wamid.A", "wamid.B"]) is False
    assert memory.all_delivered(WA, ["wamid.A"]) is True
    assert memory.all_delivered(WA, []) is False


async def test_retried_batch_claims_only_the_parts_without_a_2xx(memory: DeliveryMemory[str]) -> None:
    first = memory.begin_many(WA, ["wamid.A", "wamid.B", "wamid.C", "wamid.A"])
    assert list(first) == ["wamid.A", "wamid.B", "wamid.C"]
    assert {mid: claim.state for mid, claim in first.items()} == {
        "wamid.A": ClaimState.FIRST,
        "wamid.B": ClaimState.FIRST,
        "wamid.C": ClaimState.FIRST,
    }
    memory.complete_many(WA, ["wamid.A", "wamid.C"], "part-billing-200")
    memory.fail_many(WA, ["wamid.B"], "part-support-502")
    assert memory.all_delivered(WA, ["wamid.A", "wamid.B", "wamid.C"]) is False
    retry = memory.begin_many(WA, ["wamid.A", "wamid.B", "wamid.C"])
    assert {mid: (claim.state, claim.outcome) for mid, claim in retry.items()} == {
        "wamid.A": (ClaimState.DONE, "part-billing-200"),
        "wamid.B": (ClaimState.FIRST, None),
        "wamid.C": (ClaimState.DONE, "part-billing-200"),
    }
    memory.complete_many(WA, ["wamid.B"], "part-support-200")
    assert memory.all_delivered(WA, ["wamid.A", "wamid.B", "wamid.C"]) is True


async def test_batch_arriving_while_a_part_is_in_flight_waits_for_that_part(memory: DeliveryMemory[str]) -> None:
    memory.begin_many(WA, ["wamid.A", "wamid.B"])
    again = memory.begin_many(WA, ["wamid.A", "wamid.B"])
    assert {claim.state for claim in again.values()} == {ClaimState.IN_FLIGHT}
    waiting = asyncio.ensure_future(asyncio.gather(*(claim.wait() for claim in again.values())))
    await asyncio.sleep(0)
    memory.complete_many(WA, ["wamid.A", "wamid.B"], "ok")
    assert await asyncio.wait_for(waiting, 5) == ["ok", "ok"]
