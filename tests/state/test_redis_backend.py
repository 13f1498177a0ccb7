"""What only the Redis backend does (real Redis, private prefix): two instances act as two
replicas; locks expire and fence; claims of a dead holder expire; the budget is shared; keys
share a slot per conversation/delivery; every foreign error becomes StateUnavailable."""

from __future__ import annotations

import asyncio
import inspect
import random
import socket
from collections.abc import AsyncIterator

import pytest
import redis.exceptions
from redis.asyncio import Redis
from redis.crc import key_slot

from stickyroute.core.delivery import DecisionMemo
from stickyroute.core.route import ConversationKey, Route
from stickyroute.reply import Reply
from stickyroute.state.base import Claim, ClaimState, ConversationLimits, StateUnavailable
from stickyroute.state.budget import TokenBucket
from stickyroute.state.redis import KeyLayout, RedisBudget, RedisConversationState, RedisDeliveryLog, RedisStore
from stickyroute.state.redis.client import FOREIGN_ERRORS, translate
from tests.redis_server import flush_prefix, private_prefix, require_redis
from tests.state.routes import RoutesUnderTest

T0 = 1_700_000_000.0
A = ConversationKey("telegram", "-100123", "7", "4242")
LIMITS = {"telegram": ConversationLimits(1800.0, 1000)}
OK = Reply(200, [(b"content-type", b"application/json")], b'{"ok":true}')
GUARD_S = 5.0


@pytest.fixture
async def prefix() -> AsyncIterator[str]:
    url = require_redis()
    name = private_prefix()
    yield name
    await flush_prefix(url, name)


def store(prefix: str, op_timeout_s: float = 2.0) -> RedisStore:
    return RedisStore(require_redis(), prefix, op_timeout_s)


def route(agent: str, counter: int = 0) -> Route:
    return Route(agent, chosen_at=T0, last_active=T0, candidate="ops" if counter else None, counter=counter)


async def test_two_replicas_decide_one_after_the_other_and_the_second_sees_the_first(prefix: str) -> None:
    one, two = RoutesUnderTest(RedisConversationState(store(prefix), LIMITS)), RoutesUnderTest(RedisConversationState(store(prefix), LIMITS))
    first = await one.acquire(A, T0)
    second = asyncio.ensure_future(two.acquire(A, T0 + 1))
    await asyncio.sleep(0.05)
    waited = not second.done()
    await one.commit(first, T0, store=route("coder", counter=1))
    lease = await asyncio.wait_for(second, GUARD_S)
    await two.release(lease)
    await one.aclose()
    await two.aclose()
    assert (waited, lease.route) == (True, route("coder", counter=1))


async def test_the_lock_of_a_holder_that_died_expires(prefix: str) -> None:
    dead, alive = (RoutesUnderTest(RedisConversationState(store(prefix), LIMITS, lock_ttl_s=0.2)) for _ in range(2))
    await dead.acquire(A, T0)  # never committed: the process died
    lease = await asyncio.wait_for(alive.acquire(A, T0 + 1), GUARD_S)
    await alive.commit(lease, T0 + 1, store=route("billing"))
    assert await alive.get(A, T0 + 2) == route("billing")
    await dead.aclose()
    await alive.aclose()


async def test_a_late_holder_cannot_overwrite_a_newer_state(prefix: str) -> None:
    late, other = (RoutesUnderTest(RedisConversationState(store(prefix), LIMITS, lock_ttl_s=0.1)) for _ in range(2))
    stale = await late.acquire(A, T0)
    newer = await asyncio.wait_for(other.acquire(A, T0 + 1), GUARD_S)  # after the late lock expired
    await other.commit(newer, T0 + 1, store=route("billing"))
    await late.commit(stale, T0 + 2, store=route("coder"))
    assert await other.get(A, T0 + 3) == route("billing")
    await late.aclose()
    await other.aclose()


async def test_a_late_holder_still_writes_when_nobody_wrote_since(prefix: str) -> None:
    late = RoutesUnderTest(RedisConversationState(store(prefix), LIMITS, lock_ttl_s=0.05))
    lease = await late.acquire(A, T0)
    await asyncio.sleep(0.1)  # the lock expired; nobody else took it
    await late.commit(lease, T0, store=route("coder"))
    assert await late.get(A, T0 + 1) == route("coder")
    await late.aclose()


async def test_a_conversation_s_keys_share_one_slot_and_all_expire(prefix: str) -> None:
    state = RoutesUnderTest(RedisConversationState(store(prefix), LIMITS, recent_messages=2))
    lease = await state.acquire(A, T0)
    client = Redis.from_url(require_redis())
    lock_ttl = await client.pttl(KeyLayout(prefix).lock(A))
    await state.commit(lease, T0, store=route("coder"), text="hello")
    names = [name async for name in client.scan_iter(match=prefix + "*")]
    expiries = [await client.pttl(name) for name in names]
    await client.aclose()
    await state.aclose()
    layout = KeyLayout(prefix)
    assert key_slot(layout.conversation(A).encode()) == key_slot(layout.lock(A).encode())
    assert names == [layout.conversation(A).encode()] and 0 < expiries[0] <= 1801_000 and 0 < lock_ttl <= 3000
    assert "4242" not in layout.conversation(A) and "-100123" not in layout.conversation(A)


def test_key_names_and_hash_tags() -> None:
    layout = KeyLayout("sr:")
    digest = KeyLayout.digest(A)
    assert (layout.conversation(A), layout.lock(A), layout.delivery(("telegram", "5001")), layout.budget("telegram"),
            layout.delivery(("whatsapp", "a{b}")).startswith("sr:d:{whatsapp:#"), len(digest)) == (
        f"sr:c:telegram:{{{digest}}}", f"sr:c:telegram:{{{digest}}}:lock", "sr:d:{telegram:5001}",
        "sr:b:{telegram}", True, 32)


def test_a_prefix_with_a_brace_is_refused() -> None:
    with pytest.raises(ValueError, match="braces"):
        KeyLayout("app{1}:")


async def test_a_redelivery_on_another_replica_waits_for_the_first_and_answers_the_same(prefix: str) -> None:
    one, two = RedisDeliveryLog(store(prefix)), RedisDeliveryLog(store(prefix))
    key = ("telegram", "77")
    assert await one.claim([key], T0) == [Claim(ClaimState.FIRST)]
    assert await two.claim([key], T0 + 1) == [Claim(ClaimState.IN_FLIGHT)]
    waiter = asyncio.ensure_future(two.settle(key, T0 + 1, GUARD_S))
    await asyncio.sleep(0.05)
    await one.complete([key], OK, T0 + 2, {key: DecisionMemo("coder", "classified")})
    assert await asyncio.wait_for(waiter, GUARD_S) == Claim(ClaimState.DONE, OK, DecisionMemo("coder", "classified"))
    await one.aclose()
    await two.aclose()


async def test_the_claim_of_a_holder_that_died_expires_after_claim_ttl(prefix: str) -> None:
    dead, alive = RedisDeliveryLog(store(prefix), claim_ttl_s=30.0), RedisDeliveryLog(store(prefix), claim_ttl_s=30.0)
    key = ("whatsapp", "wamid.X")
    await dead.claim([key], T0)
    assert [c.state for c in await alive.claim([key], T0 + 29.9)] == [ClaimState.IN_FLIGHT]
    assert [c.state for c in await alive.claim([key], T0 + 30)] == [ClaimState.FIRST]
    await dead.aclose()
    await alive.aclose()


async def test_an_answer_over_the_size_bound_reaches_waiters_only(prefix: str) -> None:
    log = RedisDeliveryLog(store(prefix), claim_ttl_s=30.0, max_reply_bytes=100)
    big = Reply(200, [], b"x" * 500)
    key = ("telegram", "9")
    await log.claim([key], T0)
    await log.complete([key], big, T0)
    assert ((await log.claim([key], T0 + 1))[0], (await log.claim([key], T0 + 31))[0].state) == (
        Claim(ClaimState.DONE, big), ClaimState.FIRST)
    await log.aclose()


async def test_replicas_draw_from_one_budget(prefix: str) -> None:
    one, two = RedisBudget(store(prefix), 2.0), RedisBudget(store(prefix), 2.0)  # 2 per minute, burst 2
    spent = [await one.take("telegram", T0), await two.take("telegram", T0), await one.take("telegram", T0 + 1),
             await two.take("whatsapp", T0 + 1), await two.take("telegram", T0 + 30)]
    await one.aclose()
    await two.aclose()
    assert spent == [True, True, False, True, True]


async def test_the_redis_bucket_makes_the_same_decisions_as_the_memory_bucket(prefix: str) -> None:
    rng = random.Random(9)
    shared = RedisBudget(store(prefix), 7.0)
    local = TokenBucket(7.0, 7.0, T0)
    now, answers = T0, []
    for _ in range(200):
        now += rng.choice([0.0, 0.1, 1.7, 8.5, -3.0])  # a clock going back refills nothing
        answers.append((await shared.take("telegram", now), local.take(now)))
    await shared.aclose()
    assert [r for r, _ in answers] == [m for _, m in answers] and 0 < sum(r for r, _ in answers) < 200


def _redis_errors() -> list[type[BaseException]]:
    return [c for _, c in inspect.getmembers(redis.exceptions, inspect.isclass) if issubclass(c, BaseException)]


@pytest.mark.parametrize("error", _redis_errors(), ids=lambda c: c.__name__)
def test_every_redis_error_is_caught_and_translated(error: type[BaseException]) -> None:
    assert issubclass(error, FOREIGN_ERRORS)


def test_a_translated_error_names_the_operation_and_the_exact_error() -> None:
    translated = translate(redis.exceptions.ConnectionError("Error 111 connecting to x:1. Refused."), "claim", 0.05)
    assert (type(translated), str(translated)) == (
        StateUnavailable, "redis claim: ConnectionError: Error 111 connecting to x:1. Refused.")


def test_a_deadline_without_a_message_says_which() -> None:
    assert str(translate(TimeoutError(), "acquire", 0.05)) == "redis acquire: no answer within op_timeout_ms = 50"


async def test_a_redis_that_does_not_answer_fails_within_the_op_timeout() -> None:
    with socket.socket() as silent:  # accepts connections (backlog), never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        port = silent.getsockname()[1]
        mute = RedisStore(f"redis://127.0.0.1:{port}/0", "x:", op_timeout_s=0.1)
        with pytest.raises(StateUnavailable, match="no answer within op_timeout_ms = 100"):
            await asyncio.wait_for(mute.ping(), GUARD_S)
        await mute.aclose()


@pytest.mark.parametrize("args", [
    ("EVALSHA", "0875cb14", 2, "p:c:t:{ab}", "p:c:t:{ab}:lock", 123456789, "s", "1700000000.123", b"\x00\xff", 1801000),
    ("SCRIPT LOAD", "return 1"),
    (b"SCRIPT LOAD", "return 1"),
    ("PING",),
], ids=["evalsha", "two-word-command", "two-word-bytes", "ping"])
def test_commands_are_packed_in_c_to_the_bytes_redis_py_would_send(args: tuple[object, ...]) -> None:
    from redis.asyncio.connection import Connection

    from stickyroute.state.redis.client import _TcpConnection

    assert _TcpConnection().pack_command(*args) == [b"".join(Connection().pack_command(*args))]


async def test_the_store_packs_in_c_on_every_scheme() -> None:
    kinds = [RedisStore(url, "x:").client.connection_pool.connection_class.__name__
             for url in ("redis://h:1/0", "rediss://h:1/0", "unix:///tmp/r.sock")]
    assert kinds == ["_TcpConnection", "_TlsConnection", "_UnixConnection"]


def test_a_senders_switch_bucket_key_holds_no_raw_id_and_one_hash_tag() -> None:
    layout = KeyLayout("sr:")
    name = layout.switches("telegram", "4242")
    assert (name, "4242" in name, KeyLayout.digest_from(layout.conversation(A).encode())) == (
        f"sr:s:{{telegram:{KeyLayout.sender_digest('telegram', '4242')}}}", False, A.digest())
