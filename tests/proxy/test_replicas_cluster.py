"""Two real proxy processes on a real Redis Cluster (3 primaries + 3 replicas, started by the
test, tests/redis_server.py) route as one memory process does, and a killed primary affects only
the conversations of its slots; two on a Sentinel set-up (1 primary, 1 replica, 1 sentinel)
follow the promoted replica with every route written before the failover.

The per-operation timeout is 1 s here (as in test_replicas.py): on a loaded 2-core machine a slow
answer must not count as an outage. Nothing waits on a sleep: each phase polls a condition with a
bound.
"""

from __future__ import annotations

import asyncio
import random
import socket
from collections.abc import Callable
from pathlib import Path

import aiohttp
import httpx
from redis import Redis
from redis.crc import key_slot

from stickyroute import clock
from stickyroute.core.route import ConversationKey, Route
from stickyroute.replay.corpus import Conversation, load_agents, load_corpus
from stickyroute.state.base import ConversationLimits
from stickyroute.state.redis import KeyLayout, RedisConversationState, RedisStore
from tests.proxy.harness import telegram_text
from tests.proxy.processes import HEADERS, ProxyProcess, RecordingAgent, write_replica_config
from tests.proxy.test_replicas import AGENTS, CONVERSATIONS, CORPUS, GUARD_S, PARALLEL, Decisions
from tests.redis_server import OwnCluster, OwnSentinel
from tests.state.routes import RoutesUnderTest

PREFIX = "sr-cluster:"
FOLLOW_UP = "ok, thanks"
"""A follow-up with no keyword: it stays on the conversation's route (sticky)."""
FOLLOW_UP_IDS = 900_000_000
DEGRADED = "until it answers again"
"""The end of the one log line that declares an outage of the whole backend."""


def cluster_state(url: str) -> str:
    return f'backend = "redis"\nmode = "cluster"\nurl = "{url}"\nkey_prefix = "{PREFIX}"\nop_timeout_ms = 1000'


def user(i: int) -> int:
    return 10_000 + i


def conversation(i: int) -> ConversationKey:
    return ConversationKey("telegram", str(user(i)), None, str(user(i)))


class Platform:
    """Sends Telegram updates as the platform does: an answer the proxy gives because the agent
    failed (body "upstream <agent> ...": on a loaded machine the recording agent can miss its
    connect deadline) is sent again, up to RETRIES times; a 503 `state_unavailable` (the shared
    state did not confirm the delivery: nothing was forwarded) or a 504 "an earlier attempt of this
    update is still in flight" is sent again after a short pause until GUARD_S passed; every other
    answer is final. Keeps the first answer's status per update, the ids sent again after an agent
    failure (`retried`) and after a 503 or that 504 (`refused`)."""

    RETRIES = 5
    PAUSE_S = 0.1
    """The platform's wait before it sends a refused update again (Retry-After shortened)."""

    def __init__(self) -> None:
        self.first: dict[int, int] = {}
        self.final: dict[int, int] = {}
        self.retried: set[int] = set()
        self.refused: set[int] = set()

    async def send(self, client: aiohttp.ClientSession, target: str, update_id: int, text: str, sender: int) -> None:
        failures = 0
        deadline = asyncio.get_running_loop().time() + GUARD_S
        while True:
            async with client.post(target + "/tg", data=telegram_text(update_id, text, user=sender),
                                   headers=HEADERS) as response:
                status, body, wait = response.status, await response.text(), response.headers.get("Retry-After")
            self.first.setdefault(update_id, status)
            self.final[update_id] = status
            if (status == 503 and body.startswith("state unavailable") and wait is not None) or (
                    status == 504 and body.startswith("an earlier attempt")):  # Telegram retries both
                self.refused.add(update_id)
                if asyncio.get_running_loop().time() > deadline:
                    return
                await asyncio.sleep(self.PAUSE_S)
                continue
            failures += 1
            if status == 200 or not body.startswith("upstream ") or failures == self.RETRIES:
                return
            self.retried.add(update_id)

    def answered_as_promised(self, refusable: set[int]) -> bool:
        """Every update answered 200 in the end; every other first answer was the agent's failure
        or a 503 `state_unavailable` of an update in `refusable`."""
        odd = {u for u, s in self.first.items() if s != 200}
        return set(self.final.values()) == {200} and odd <= self.retried | self.refused and self.refused <= refusable

    def decisions(self, agent: RecordingAgent) -> Decisions:
        """(agent, reason) per update the agent saw: each once, except that an update sent again
        after an agent failure may have reached it twice (the first attempt kept)."""
        out: Decisions = {}
        for update_id, name, reason in agent.records():
            assert update_id not in out or update_id in self.retried, f"update {update_id} forwarded twice"
            out.setdefault(update_id, (name, reason))
        return out


async def replay(platform: Platform, conversations: list[Conversation], targets: list[str], seed: int = 9) -> int:
    """Every turn as a Telegram update (conversation i from user(i)), each to a target drawn at
    random; the turns of one conversation in order, PARALLEL conversations at once (the plan of
    test_replicas.replay). Returns how many updates were sent."""
    rng = random.Random(seed)
    plan = [[(100_000 * (i + 1) + t, turn.text, rng.choice(targets)) for t, turn in enumerate(conv.turns)]
            for i, conv in enumerate(conversations)]
    gate = asyncio.Semaphore(PARALLEL)

    async def one(i: int, turns: list[tuple[int, str, str]], client: aiohttp.ClientSession) -> None:
        async with gate:
            for update_id, text, target in turns:
                await platform.send(client, target, update_id, text, user(i))

    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=GUARD_S)) as client:
        await asyncio.wait_for(asyncio.gather(*(one(i, turns, client) for i, turns in enumerate(plan))),
                               GUARD_S * 8)
    return sum(len(turns) for turns in plan)


async def follow_ups(platform: Platform, count: int, targets: list[str], seed: int = 5) -> dict[int, int]:
    """One FOLLOW_UP per conversation (update id FOLLOW_UP_IDS + i), each to a random target,
    PARALLEL at once: the first answer's status per conversation."""
    rng = random.Random(seed)
    plan = [(i, rng.choice(targets)) for i in range(count)]
    gate = asyncio.Semaphore(PARALLEL)

    async def one(i: int, target: str, client: aiohttp.ClientSession) -> None:
        async with gate:
            await platform.send(client, target, FOLLOW_UP_IDS + i, FOLLOW_UP, user(i))

    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=GUARD_S)) as client:
        await asyncio.wait_for(asyncio.gather(*(one(i, t, client) for i, t in plan)), GUARD_S * 8)
    return {i: platform.final[FOLLOW_UP_IDS + i] for i in range(count)}


def listening(*proxies: ProxyProcess) -> bool:
    """True once every proxy's webhook port accepts connections (its admin port answers first)."""
    for proxy in proxies:
        try:
            socket.create_connection(("127.0.0.1", proxy.port), timeout=1.0).close()
        except OSError:
            return False
    return True


def readiness(proxy: ProxyProcess) -> int:
    return httpx.get(proxy.admin + "/readyz", timeout=5.0).status_code


def routes_count(proxy: ProxyProcess) -> int:
    return proxy.stats()["routes"]["telegram"]  # type: ignore[index,no-any-return]


async def read_routes(store: RedisStore, count: int) -> dict[int, str | None]:
    """The agent of every conversation's route as Redis holds it (`store` is closed after)."""
    state = RoutesUnderTest(RedisConversationState(store, {"telegram": ConversationLimits(30 * 24 * 3600.0, 1_000_000)}))
    now = clock.now()
    try:
        found: list[Route | None] = [await state.get(conversation(i), now) for i in range(count)]
    finally:
        await state.aclose()
    return {i: r.agent if r else None for i, r in enumerate(found)}


def keys_per_primary(cluster: OwnCluster) -> dict[int, int]:
    counts = {}
    for port in cluster.primaries():
        with Redis(port=port) as node:
            counts[port] = sum(1 for _ in node.scan_iter(match=PREFIX + "c:*", count=1000))
    return counts


async def poll(condition: Callable[[], bool], what: str, limit_s: float = GUARD_S) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + limit_s
    while loop.time() < deadline:
        if await asyncio.to_thread(condition):
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"{what}: not within {limit_s:g} s")


async def test_two_replicas_on_a_3_primary_cluster_route_as_one_process_and_a_killed_primary_affects_only_its_slots(
        tmp_path: Path) -> None:
    conversations: list[Conversation] = load_corpus(CORPUS, CONVERSATIONS)
    agents = load_agents(AGENTS)
    baseline, platform = Platform(), Platform()
    with RecordingAgent() as upstream:
        memory = write_replica_config(tmp_path / "memory.toml", upstream.url, agents)
        with ProxyProcess(memory) as one:
            await poll(lambda: listening(one), "the proxy listens")
            await replay(baseline, conversations, [one.url])
            memory_routes = routes_count(one)
            await follow_ups(baseline, CONVERSATIONS, [one.url])
        alone = baseline.decisions(upstream)
    with OwnCluster() as cluster, RecordingAgent() as upstream:
        config = write_replica_config(tmp_path / "cluster.toml", upstream.url, agents, state=cluster_state(cluster.url))
        with ProxyProcess(config) as a, ProxyProcess(config) as b:
            await poll(lambda: listening(a, b), "both proxies listen")
            sent = await replay(platform, conversations, [a.url, b.url])
            routed = platform.decisions(upstream)
            stats_before = (routes_count(a), routes_count(b))
            per_primary = keys_per_primary(cluster)
            before = await read_routes(RedisStore(cluster.url, PREFIX, 2.0, mode="cluster"), CONVERSATIONS)
            primaries = cluster.primaries()
            victim = next(port for port in primaries if port != cluster.ports[0])
            layout = KeyLayout(PREFIX)
            slots = primaries[victim]
            hit = {i for i in range(CONVERSATIONS)
                   if any(lo <= key_slot(layout.conversation(conversation(i)).encode()) <= hi for lo, hi in slots)}
            cluster.wait_replicated(victim)
            cluster.kill(victim)
            statuses = await follow_ups(platform, CONVERSATIONS, [a.url, b.url])
            ready = await asyncio.to_thread(lambda: [readiness(p) for p in (a, b)])
            await asyncio.to_thread(cluster.wait_promoted, victim, slots)
            await poll(lambda: (routes_count(a), routes_count(b)) == (memory_routes, memory_routes),
                       "/stats counts every route again")
            after = await read_routes(RedisStore(cluster.url, PREFIX, 2.0, mode="cluster"), CONVERSATIONS)
            together = platform.decisions(upstream)
        logs = a.log.read_text() + b.log.read_text()
    unanswered = {u: (platform.first.get(u), platform.final.get(u)) for u in range(FOLLOW_UP_IDS, FOLLOW_UP_IDS + CONVERSATIONS)
                  if u not in together}
    assert unanswered == {}, unanswered  # (first, final status) of every follow-up the agent never got
    follow_up = {i: together[FOLLOW_UP_IDS + i] for i in range(CONVERSATIONS)}
    alone_follow_up = {i: alone[FOLLOW_UP_IDS + i] for i in range(CONVERSATIONS)}
    replayed = {u: d for u, d in routed.items() if u < FOLLOW_UP_IDS}
    assert (sent, replayed == {u: d for u, d in alone.items() if u < FOLLOW_UP_IDS}) == (2228, True)
    assert stats_before == (memory_routes, memory_routes) and memory_routes == sum(per_primary.values())
    assert (len(per_primary), min(per_primary.values()) > 0) == (3, True)
    assert before == {i: agent for i, (agent, _reason) in alone_follow_up.items()}  # a follow-up stays on the route
    # the kill: no 500, no flap of the whole backend: the failed primary's slots are an outage of
    # their own (when_unavailable = "memory": served from memory); only an update of those slots may
    # be answered 503 (a reply late under load) or 504 (its late claim still held) and be sent again
    def in_victim(name: str) -> bool:
        return any(lo <= key_slot(name.encode()) <= hi for lo, hi in slots)

    refusable = {FOLLOW_UP_IDS + i for i in range(CONVERSATIONS)  # its conversation's or its delivery's key
                 if i in hit or in_victim(layout.delivery(("telegram", str(FOLLOW_UP_IDS + i))))}
    assert (baseline.answered_as_promised(set()), platform.answered_as_promised(refusable)) == (True, True)
    assert (set(statuses.values()), ready, DEGRADED in logs) == ({200}, [200, 200], False)
    assert 0 < len(hit) < CONVERSATIONS
    assert {i: d for i, d in follow_up.items() if i not in hit} == {
        i: d for i, d in alone_follow_up.items() if i not in hit}
    # after the promotion the failed-over keys are back, every route as before
    assert after == before


SENTINEL_CONVERSATIONS = 100


async def test_two_replicas_on_sentinel_follow_the_promoted_replica_and_keep_every_replicated_route(
        tmp_path: Path) -> None:
    conversations = load_corpus(CORPUS, SENTINEL_CONVERSATIONS)
    agents = load_agents(AGENTS)
    baseline, platform = Platform(), Platform()
    with RecordingAgent() as upstream:
        memory = write_replica_config(tmp_path / "memory.toml", upstream.url, agents)
        with ProxyProcess(memory) as one:
            await poll(lambda: listening(one), "the proxy listens")
            await replay(baseline, conversations, [one.url])
            memory_routes = routes_count(one)
            await follow_ups(baseline, SENTINEL_CONVERSATIONS, [one.url])
        alone = baseline.decisions(upstream)
    with OwnSentinel() as setup, RecordingAgent() as upstream:
        state = (f'backend = "redis"\nmode = "sentinel"\nsentinels = ["{setup.sentinels[0]}"]\n'
                 f'master = "{setup.master}"\nkey_prefix = "{PREFIX}"\nop_timeout_ms = 1000')
        config = write_replica_config(tmp_path / "sentinel.toml", upstream.url, agents, state=state)

        def store() -> RedisStore:
            return RedisStore("redis://unused/0", PREFIX, 2.0, mode="sentinel", sentinels=setup.sentinels,
                              master=setup.master)

        with ProxyProcess(config) as a, ProxyProcess(config) as b:
            await poll(lambda: listening(a, b), "both proxies listen")
            await replay(platform, conversations, [a.url, b.url])
            before = await read_routes(store(), SENTINEL_CONVERSATIONS)
            setup.wait_replicated()  # every route written before the failover is on the replica
            setup.kill_primary()
            await asyncio.to_thread(setup.wait_failover)
            statuses = await follow_ups(platform, SENTINEL_CONVERSATIONS, [a.url, b.url])
            await poll(lambda: [readiness(p) for p in (a, b)] == [200, 200],
                       "both replicas ready on the promoted replica")
            counts = (routes_count(a), routes_count(b))
            after = await read_routes(store(), SENTINEL_CONVERSATIONS)
        together = platform.decisions(upstream)
    # refused (503) only while the sentinels had not promoted the replica: none after wait_failover
    assert (baseline.answered_as_promised(set()), platform.answered_as_promised(set())) == (True, True)
    assert set(statuses.values()) == {200}
    assert {u: d for u, d in together.items() if u < FOLLOW_UP_IDS} == {
        u: d for u, d in alone.items() if u < FOLLOW_UP_IDS}
    assert (after, counts) == (before, (memory_routes, memory_routes))
    assert {u: d for u, d in together.items() if u >= FOLLOW_UP_IDS} == {
        u: d for u, d in alone.items() if u >= FOLLOW_UP_IDS}
