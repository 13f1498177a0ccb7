"""200 concurrent copies of one update reach the agent exactly once, with Redis healthy, at the
default settings, whether the process's event loop is free or deliberately slowed by a CPU-bound
task (tests/proxy/hogged.py), sent to one Redis-backed process or spread over two replicas.

Each copy is posted the way a platform does: again after anything but a 2xx (a 503
`state_unavailable` or a 504 "still in flight" is allowed: it forwards nothing), until a 2xx.
What is asserted is what is promised: every copy acknowledged, the agent got each update once.
20 updates per loop condition (10 Telegram, 10 WhatsApp; half to one process, half spread).
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest

from stickyroute.replay.corpus import load_agents
from tests.proxy.harness import telegram_text, whatsapp_text
from tests.proxy.processes import HEADERS, ProxyProcess, RecordingAgent, write_replica_config
from tests.proxy.test_replicas import AGENTS
from tests.redis_server import flush_prefix, private_prefix, require_redis

COPIES = 200
UPDATES = 10
"""Per platform and loop condition: the first half to one process, the second half spread."""
RETRY_S = 0.05
MAX_POSTS = 400
"""A copy is posted at most this many times (a hang guard; far above what a run needs)."""
GUARD_S = 60.0
WHATSAPP = '[channels.whatsapp]\npath = "/wa"\ndefault_agent = "default"\n'


@pytest.fixture
async def redis_state() -> AsyncIterator[str]:
    url = require_redis()
    prefix = private_prefix()
    yield f'backend = "redis"\nurl = "{url}"\nkey_prefix = "{prefix}"'  # default op_timeout_ms
    await flush_prefix(url, prefix)


def _bodies(platform: str, n: int) -> tuple[str, dict[str, str], bytes, int | str]:
    if platform == "telegram":
        update_id = 4_000_000 + n
        return "/tg", HEADERS, telegram_text(update_id, f"hello number {n}", user=5000 + n), update_id
    wamid = f"wamid.COPY{n}"
    return "/wa", {"content-type": "application/json"}, whatsapp_text([(f"1555{n:07d}", wamid, f"hi {n}")]), wamid


async def _post_until_acknowledged(client: aiohttp.ClientSession, url: str, headers: dict[str, str],
                                   body: bytes) -> tuple[int, int]:
    """(first status, posts until a 2xx)."""
    first = 0
    for posts in range(1, MAX_POSTS + 1):
        async with client.post(url, data=body, headers=headers) as response:
            await response.read()
            first = first or response.status
            if 200 <= response.status < 300:
                return first, posts
        await asyncio.sleep(RETRY_S)  # the platform's retry interval (compressed)
    return first, 0


async def _send_copies(targets: list[str], platform: str, n: int) -> list[tuple[int, int]]:
    path, headers, body, _id = _bodies(platform, n)
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=GUARD_S),
                                     connector=aiohttp.TCPConnector(limit=COPIES)) as client:
        return await asyncio.gather(*(_post_until_acknowledged(client, targets[i % len(targets)] + path, headers, body)
                                      for i in range(COPIES)))


@pytest.mark.parametrize("hogged", [False, True], ids=["free-loop", "slowed-loop"])
async def test_200_concurrent_copies_reach_the_agent_exactly_once(tmp_path: Path, redis_state: str,
                                                                   hogged: bool) -> None:
    with RecordingAgent(delay_s=0.05) as upstream:
        config = write_replica_config(tmp_path / "redis.toml", upstream.url, load_agents(AGENTS), state=redis_state,
                                      extra=WHATSAPP)
        with ProxyProcess(config, hogged=hogged) as a, ProxyProcess(config, hogged=hogged) as b:
            outcomes = {}
            for platform in ("telegram", "whatsapp"):
                for n in range(UPDATES):
                    targets = [a.url] if n < UPDATES // 2 else [a.url, b.url]
                    outcomes[_bodies(platform, n)[3]] = await _send_copies(targets, platform, n)
            fallbacks = [a.fallbacks(), b.fallbacks()]
        received = Counter(update_id for update_id, _agent, _reason in upstream.records())
    unacknowledged = {k: sum(1 for _s, posts in v if posts == 0) for k, v in outcomes.items()}
    assert dict(received) == dict.fromkeys(outcomes, 1)
    assert unacknowledged == dict.fromkeys(outcomes, 0)
    print(json.dumps({"hogged": hogged, "fallbacks": fallbacks,
                      "first_statuses": dict(Counter(s for v in outcomes.values() for s, _p in v)),
                      "max_posts": max(p for v in outcomes.values() for _s, p in v)}))
