"""Several real proxy processes on one Redis route as one process does (issue #9 "Tests").

Every test starts real `stickyroute serve` processes (tests/proxy/processes.py) in front of one
recording upstream, on the test Redis under a private key prefix (flushed afterwards). The
per-operation timeout is raised to 1 s here: on a loaded 2-core test machine a slow Redis
answer would otherwise send a replica to its memory fallback and make it diverge on purpose.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import httpx
import pytest
from redis.asyncio import Redis

from stickyroute.core.route import ConversationKey
from stickyroute.replay.corpus import Conversation, load_agents, load_corpus
from stickyroute.state.base import ConversationLimits
from stickyroute.state.redis import RedisConversationState, RedisStore
from tests.proxy.harness import telegram_text
from tests.proxy.processes import HEADERS, ROOT, ProxyProcess, RecordingAgent, write_replica_config
from tests.redis_server import flush_prefix, private_prefix, require_redis
from tests.state.routes import RoutesUnderTest

CORPUS = ROOT / "eval" / "corpus" / "dev.jsonl"
AGENTS = ROOT / "tests" / "replay" / "data" / "agents.toml"
CONVERSATIONS = 300
PARALLEL = 12
GUARD_S = 30.0
Decisions = dict[int, tuple[str, str]]


@pytest.fixture
async def redis_prefix() -> AsyncIterator[tuple[str, str]]:
    url = require_redis()
    prefix = private_prefix()
    yield url, prefix
    await flush_prefix(url, prefix)


def redis_state(url: str, prefix: str) -> str:
    return f'backend = "redis"\nurl = "{url}"\nkey_prefix = "{prefix}"\nop_timeout_ms = 1000'


def decisions(agent: RecordingAgent) -> Decisions:
    """(agent, reason) the agent process saw per update_id (each forwarded once)."""
    out: Decisions = {}
    for update_id, name, reason in agent.records():
        assert update_id not in out, f"update {update_id} forwarded twice"
        out[update_id] = (name, reason)
    return out


async def replay(conversations: list[Conversation], targets: list[str], seed: int = 9) -> int:
    """Send every turn as a Telegram update (conversation i from user 10000 + i), each to a target
    drawn at random; turns of one conversation in order, PARALLEL conversations at once."""
    rng = random.Random(seed)
    plan = [[(100_000 * (i + 1) + t, turn.text, rng.choice(targets)) for t, turn in enumerate(conv.turns)]
            for i, conv in enumerate(conversations)]
    gate = asyncio.Semaphore(PARALLEL)
    sent = 0

    async def one(user: int, turns: list[tuple[int, str, str]], client: aiohttp.ClientSession) -> None:
        nonlocal sent
        async with gate:
            for update_id, text, target in turns:
                async with client.post(target + "/tg", data=telegram_text(update_id, text, user=user),
                                       headers=HEADERS) as response:
                    assert response.status == 200, await response.text()
                sent += 1

    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=GUARD_S)) as client:  # lighter than httpx
        await asyncio.wait_for(asyncio.gather(*(one(10_000 + i, turns, client) for i, turns in enumerate(plan))),
                               GUARD_S * 4)
    return sent


def classifier_calls(*proxies: ProxyProcess) -> int:
    return sum(p.stats()["classifier"]["total"]["calls"] for p in proxies)  # type: ignore[index]


async def test_two_replicas_route_300_conversations_exactly_as_one_memory_process(tmp_path: Path,
                                                                                 redis_prefix: tuple[str, str]) -> None:
    conversations = load_corpus(CORPUS, CONVERSATIONS)
    agents = load_agents(AGENTS)
    with RecordingAgent() as upstream:
        memory = write_replica_config(tmp_path / "memory.toml", upstream.url, agents)
        with ProxyProcess(memory) as one:
            sent = await replay(conversations, [one.url])
            memory_calls = classifier_calls(one)
        alone = decisions(upstream)
    with RecordingAgent() as upstream:
        shared = write_replica_config(tmp_path / "redis.toml", upstream.url, agents, state=redis_state(*redis_prefix))
        with ProxyProcess(shared) as a, ProxyProcess(shared) as b:
            await replay(conversations, [a.url, b.url])
            replica_calls = classifier_calls(a, b)
            per_replica = [sum(a.stats()["decisions"]["telegram"].values()),  # type: ignore[index]
                           sum(b.stats()["decisions"]["telegram"].values())]  # type: ignore[index]
        together = decisions(upstream)
    switches = sum(1 for agent, _ in alone.values() if agent != "default")
    assert (sent, len(alone), together == alone, replica_calls) == (2228, 2228, True, memory_calls)
    assert min(per_replica) > 0 and sum(per_replica) == 2228 and switches > 0
    assert await _keys_without_expiry(*redis_prefix) == []


async def _keys_without_expiry(url: str, prefix: str) -> list[bytes]:
    client = Redis.from_url(url)
    try:
        return [name async for name in client.scan_iter(match=prefix + "*") if await client.pttl(name) < 0]
    finally:
        await client.aclose()


async def test_the_same_update_on_both_replicas_at_once_reaches_the_agent_once(
        tmp_path: Path, redis_prefix: tuple[str, str]) -> None:
    answer = b'{"method":"sendMessage","chat_id":777,"text":"on it"}'
    with RecordingAgent(answer, delay_s=0.02) as upstream:
        config = write_replica_config(tmp_path / "redis.toml", upstream.url, load_agents(AGENTS),
                                      state=redis_state(*redis_prefix))
        with ProxyProcess(config) as a, ProxyProcess(config) as b:
            async with httpx.AsyncClient(timeout=GUARD_S) as client:
                pairs = []
                for n in range(100):
                    body = telegram_text(700_000 + n, f"hello number {n}", user=777)
                    pairs.append(await asyncio.gather(*(client.post(p.url + "/tg", content=body, headers=HEADERS)
                                                        for p in (a, b))))
        received = [update_id for update_id, _agent, _reason in upstream.records()]
    assert sorted(received) == [700_000 + n for n in range(100)]
    assert {(r.status_code, r.content) for pair in pairs for r in pair} == {(200, answer)}


async def test_a_restart_keeps_route_and_counter_and_answers_an_old_redelivery_from_redis(
        tmp_path: Path, redis_prefix: tuple[str, str]) -> None:
    texts = ["I need a hotel in the east with free wifi and parking.",
             "Can you also find me a train to Cambridge on Friday?",
             "The train should leave after 10:00 and I need the train ticket price."]
    bodies = [telegram_text(800_000 + i, text, user=888) for i, text in enumerate(texts)]
    agents = load_agents(AGENTS)
    key = ConversationKey("telegram", "888", None, "888")
    with RecordingAgent() as upstream:
        with ProxyProcess(write_replica_config(tmp_path / "memory.toml", upstream.url, agents)) as one:
            async with httpx.AsyncClient(timeout=GUARD_S) as client:
                for body in bodies:
                    await client.post(one.url + "/tg", content=body, headers=HEADERS)
        alone = decisions(upstream)
    with RecordingAgent() as upstream:
        routes = RoutesUnderTest(RedisConversationState(RedisStore(*redis_prefix, op_timeout_s=2.0),
                                                        {"telegram": ConversationLimits(1800.0, 100_000)}))
        config = write_replica_config(tmp_path / "redis.toml", upstream.url, agents, state=redis_state(*redis_prefix))
        with ProxyProcess(config) as proxy:
            async with httpx.AsyncClient(timeout=GUARD_S) as client:
                first = [await client.post(proxy.url + "/tg", content=body, headers=HEADERS) for body in bodies[:2]]
                before = await routes.get(key, time.time())
                proxy.restart()
                after = await routes.get(key, time.time())
                again = await client.post(proxy.url + "/tg", content=bodies[1], headers=HEADERS)
                last = await client.post(proxy.url + "/tg", content=bodies[2], headers=HEADERS)
        await routes.aclose()
        restarted = decisions(upstream)
    assert before is not None and (before.agent, before.candidate, before.counter) == ("hotel", "train", 1)
    assert (after, restarted, last.status_code) == (before, alone, 200)
    assert (again.status_code, again.content, again.headers["x-stickyroute-reason"]) == (
        200, first[1].content, "redelivery")


async def test_two_workers_of_one_serve_keep_one_route(tmp_path: Path, redis_prefix: tuple[str, str]) -> None:
    agents = load_agents(AGENTS)
    with RecordingAgent() as upstream:
        config = write_replica_config(tmp_path / "redis.toml", upstream.url, agents, state=redis_state(*redis_prefix))
        with ProxyProcess(config, workers=2) as proxy:
            sent = 0
            for _round in range(10):  # until both workers took part (the kernel spreads connections)
                for _ in range(8):
                    text = "/agent taxi" if sent == 0 else f"and then, number {sent}, what else?"
                    body = telegram_text(900_000 + sent, text, user=999)
                    async with httpx.AsyncClient(timeout=GUARD_S) as client:  # a new connection each time
                        response = await client.post(proxy.url + "/tg", content=body, headers=HEADERS)
                    assert response.status_code == 200
                    sent += 1
                decided = proxy.stats()["decisions"]  # no "telegram" yet: the admin worker served none of them
                served_by_admin_worker = sum(decided.get("telegram", {}).values())  # type: ignore[attr-defined]
                if 0 < served_by_admin_worker < sent:
                    break
        seen = decisions(upstream)
    assert 0 < served_by_admin_worker < sent
    assert {agent for agent, _ in seen.values()} == {"taxi"} and len(seen) == sent


async def test_two_slowed_replicas_at_default_settings_route_as_one_memory_process_without_a_fallback(
        tmp_path: Path, redis_prefix: tuple[str, str]) -> None:
    """The same 300 conversations at the default `op_timeout_ms`, each replica's event loop slowed
    by a CPU-bound task (tests/proxy/hogged.py): (agent, reason) per message equal to one memory
    process's, and no state operation served otherwise (`stickyroute_state_fallbacks_total`)."""
    conversations = load_corpus(CORPUS, CONVERSATIONS)
    agents = load_agents(AGENTS)
    with RecordingAgent() as upstream:
        with ProxyProcess(write_replica_config(tmp_path / "memory.toml", upstream.url, agents)) as one:
            await replay(conversations, [one.url])
        alone = decisions(upstream)
    url, prefix = redis_prefix
    default_state = f'backend = "redis"\nurl = "{url}"\nkey_prefix = "{prefix}"'
    with RecordingAgent() as upstream:
        shared = write_replica_config(tmp_path / "redis.toml", upstream.url, agents, state=default_state)
        with ProxyProcess(shared, hogged=True) as a, ProxyProcess(shared, hogged=True) as b:
            sent = await replay(conversations, [a.url, b.url])
            fallbacks = [a.fallbacks(), b.fallbacks()]
        together = decisions(upstream)
    differing = sum(1 for update_id, decided in alone.items() if together.get(update_id) != decided)
    assert (sent, len(together), differing, fallbacks) == (2228, 2228, 0, [{}, {}])
