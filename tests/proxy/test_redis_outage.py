"""Redis failing under a running proxy: never a 5xx, nothing lost, /readyz says `degraded`, and
the proxy goes back to Redis when it answers again (issue #9 "Failures")."""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from redis import Redis as SyncRedis
from redis.asyncio import Redis

from stickyroute.replay.corpus import load_agents
from tests.proxy.harness import Proxy, telegram_text, upstream_set, write_config
from tests.proxy.processes import HEADERS, ProxyProcess, RecordingAgent, write_replica_config
from tests.proxy.test_replicas import AGENTS
from tests.redis_server import OwnRedis, free_port

GUARD_S = 15.0


async def _readyz_until(client: httpx.AsyncClient, admin: str, word: str) -> httpx.Response:
    """Poll /readyz (hang guard GUARD_S) until it says `word`."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + GUARD_S
    while True:
        response = await client.get(admin + "/readyz")
        if response.text == word or loop.time() > deadline:
            return response
        await asyncio.sleep(0.05)


async def test_redis_stopped_mid_run_no_5xx_every_update_forwarded_degraded_then_back(tmp_path: Path) -> None:
    with OwnRedis() as redis, RecordingAgent() as upstream:
        state = f'backend = "redis"\nurl = "{redis.url}"\nkey_prefix = "outage:"\nop_timeout_ms = 250'
        config = write_replica_config(tmp_path / "proxy.toml", upstream.url, load_agents(AGENTS), state=state)
        with ProxyProcess(config) as proxy:
            async with httpx.AsyncClient(timeout=GUARD_S) as client:

                async def send(ids: range) -> list[int]:
                    return [(await client.post(proxy.url + "/tg", headers=HEADERS,
                                               content=telegram_text(i, f"I need a train, message {i}", user=i % 3)
                                               )).status_code for i in ids]

                before = await send(range(1, 21))
                ready = await client.get(proxy.admin + "/readyz")
                redis.stop()
                during = await send(range(21, 41))
                degraded = await client.get(proxy.admin + "/readyz")
                gauge_down = (await client.get(proxy.admin + "/metrics")).text
                health = await client.get(proxy.admin + "/healthz")
                redis.start()
                back = await _readyz_until(client, proxy.admin, "ready")
                after = await send(range(41, 61))
                gauge_up = (await client.get(proxy.admin + "/metrics")).text
            fresh = Redis.from_url(redis.url)
            remembered = sorted([k async for k in fresh.scan_iter(match="outage:d:*")])
            await fresh.aclose()
        forwarded = sorted(update_id for update_id, _agent, _reason in upstream.records())
        log = proxy.log.read_text()
    assert before + during + after == [200] * 60
    assert forwarded == list(range(1, 61))
    assert [(r.status_code, r.text) for r in (ready, degraded, health, back)] == [
        (200, "ready"), (503, "degraded"), (200, "ok"), (200, "ready")]
    assert 'stickyroute_state_backend_up{backend="redis"} 0.0' in gauge_down
    assert 'stickyroute_state_backend_up{backend="redis"} 1.0' in gauge_up
    # each under its conversation's hash tag (one slot with the conversation): the 20 sent after the outage
    assert all(re.fullmatch(rb"outage:d:telegram:\{[0-9a-f]{32}\}:\d+", k) for k in remembered), remembered
    assert sorted(int(k.rsplit(b":", 1)[1]) for k in remembered) == list(range(41, 61))
    assert (log.count("unavailable ("), log.count("answers again; back on it")) == (1, 1)


async def test_redis_unreachable_at_startup_is_a_warning_and_the_proxy_serves(tmp_path: Path,
                                                                              caplog: pytest.LogCaptureFixture) -> None:
    port = free_port()
    top = f'[state]\nbackend = "redis"\nurl = "redis://127.0.0.1:{port}/0"\nop_timeout_ms = 200\n'
    with upstream_set("general") as ups:
        config = write_config(tmp_path, ups, top=top)
        with caplog.at_level(logging.WARNING, logger="stickyroute.state"):
            async with Proxy(config) as proxy:
                response = await proxy.post("/webhooks/telegram", telegram_text(1, "hello"))
                readiness = proxy.service.readiness()
                stats = await proxy.service.stats_snapshot()
    assert (response.status_code, readiness, stats["state"], len(ups["general"].requests)) == (
        200, "degraded", {"backend": "redis", "up": False, "when_unavailable": "memory",
                          "fallbacks": {"acquire/outage": 1, "claim/outage": 1, "outage/error": 1}}, 1)
    assert [r.getMessage() for r in caplog.records if r.name == "stickyroute.state"] == [
        f"state: redis at redis://127.0.0.1:{port}/0 unavailable (redis ping: ConnectionError: Error 111 connecting "
        f"to 127.0.0.1:{port}. Connect call failed ('127.0.0.1', {port}).); serving on the per-process memory "
        "fallback until it answers again",
        f"state: 3 operation(s) not served by redis at redis://127.0.0.1:{port}/0 since the last summary "
        "(acquire/outage 1, claim/outage 1, outage/error 1); outage: serving from per-process memory"]


async def test_a_claim_redis_answers_late_is_503_retry_after_and_the_retry_reaches_the_agent_once(
        tmp_path: Path) -> None:
    with OwnRedis() as redis, upstream_set("general") as ups:
        top = f'[state]\nbackend = "redis"\nurl = "{redis.url}"\nkey_prefix = "late:"\nop_timeout_ms = 50\n'
        async with Proxy(write_config(tmp_path, ups, top=top)) as proxy:
            body = telegram_text(5, "hello")
            pauser = SyncRedis.from_url(redis.url)
            pauser.execute_command("CLIENT", "PAUSE", 3000, "ALL")
            try:
                late = await proxy.post("/webhooks/telegram", body)
            finally:
                pauser.execute_command("CLIENT", "UNPAUSE")
                pauser.close()
            forwarded_while_late = len(ups["general"].requests)
            await _until(lambda: proxy.service.readiness() == "ready")  # the probe may have declared an outage
            retry = await proxy.post("/webhooks/telegram", body)
            again = await proxy.post("/webhooks/telegram", body)
            stats = await proxy.service.stats_snapshot()
            metrics = (await proxy.service.metrics())[0].decode()
    assert (late.status_code, late.headers["retry-after"], late.headers["x-stickyroute-reason"]) == (
        503, "1", "state_unavailable")
    assert (forwarded_while_late, retry.status_code, again.headers["x-stickyroute-reason"],
            len(ups["general"].requests)) == (0, 200, "redelivery", 1)
    assert stats["state"]["fallbacks"]["claim/timeout"] == 1  # type: ignore[index]
    assert stats["decisions"]["telegram"]["state_unavailable"] == 1  # type: ignore[index]
    assert 'stickyroute_state_fallbacks_total{cause="timeout",operation="claim"} 1.0' in metrics


async def test_when_unavailable_refuse_answers_503_during_an_outage_and_forwards_nothing(tmp_path: Path) -> None:
    port = free_port()
    top = (f'[state]\nbackend = "redis"\nurl = "redis://127.0.0.1:{port}/0"\nop_timeout_ms = 200\n'
           'when_unavailable = "refuse"\n')
    with upstream_set("general") as ups:
        async with Proxy(write_config(tmp_path, ups, top=top)) as proxy:
            replies = [await proxy.post("/webhooks/telegram", telegram_text(i, "hello")) for i in range(3)]
            stats = await proxy.service.stats_snapshot()
    assert [(r.status_code, r.headers["retry-after"], r.headers["x-stickyroute-reason"]) for r in replies] == [
        (503, "1", "state_unavailable")] * 3
    assert (len(ups["general"].requests), stats["state"]) == (0, {
        "backend": "redis", "up": False, "when_unavailable": "refuse",
        "fallbacks": {"claim/refused": 3, "outage/error": 1}})


async def _until(condition: Callable[[], bool]) -> None:
    async with asyncio.timeout(GUARD_S):
        while not condition():  # noqa: ASYNC110 (the health's ping task flips it; a bounded poll)
            await asyncio.sleep(0.02)


async def test_a_decision_served_from_memory_during_an_outage_says_so_in_its_line(tmp_path: Path) -> None:
    port = free_port()
    top = f'[state]\nbackend = "redis"\nurl = "redis://127.0.0.1:{port}/0"\nop_timeout_ms = 200\n'
    with upstream_set("general") as ups:
        async with Proxy(write_config(tmp_path, ups, top=top)) as proxy:
            await proxy.post("/webhooks/telegram", telegram_text(1, "hello"))
            [line] = proxy.service.accounting.ring.recent(10)
    assert (line["reason"], line["status"], line["state"]) == ("default", 200, "memory")
