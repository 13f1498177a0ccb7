"""Redis failing under a running proxy: never a 5xx, nothing lost, /readyz says `degraded`, and
the proxy goes back to Redis when it answers again (issue #9 "Failures")."""

from __future__ import annotations

import asyncio
import logging
import re
from pathlib import Path

import httpx
import pytest
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
        200, "degraded", {"backend": "redis", "up": False}, 1)
    assert [r.getMessage() for r in caplog.records if r.name == "stickyroute.state"] == [
        f"state: redis at redis://127.0.0.1:{port}/0 unavailable (redis ping: ConnectionError: Error 111 connecting "
        f"to 127.0.0.1:{port}. Connect call failed ('127.0.0.1', {port}).); serving on the per-process memory "
        "fallback until it answers again"]
