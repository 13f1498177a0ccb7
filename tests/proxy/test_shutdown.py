"""Graceful shutdown and SIGHUP on a real `stickyroute serve` process (issue #11): SIGTERM with
webhooks in flight against slow real agents: the listener stops accepting, /readyz says
draining, what finishes within `drain_s` gets its agent's answer, what still runs then gets 503
(the platform retries), nothing is dropped; SIGHUP reloads a valid config and refuses a broken one.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import time
from pathlib import Path

import aiohttp
import httpx

from tests.proxy.harness import telegram_text
from tests.proxy.processes import ADMIN_HEADERS, ADMIN_TOKEN, HEADERS, SECRET, ProxyProcess, RecordingAgent

GUARD_S = 30.0
DRAIN_S = 3.0
FAST, SLOW = 10, 5


def write_config(path: Path, fast: str, slow: str, *, drain_s: float = DRAIN_S, description: str = "fast") -> Path:
    """Agent `fast` (the default) and agent `slow` (user 7's binding), on a Telegram channel /tg."""
    path.write_text(f"""
[server]
drain_s = {drain_s}
[admin]
token = "{ADMIN_TOKEN}"
[upstream]
timeout_s = 60.0
[classifier]
provider = "keywords"
[agents.fast]
url = "{fast}"
description = "{description}"
[agents.slow]
url = "{slow}"
[channels.telegram]
path = "/tg"
default_agent = "fast"
secret_token = "{SECRET}"
[[channels.telegram.bindings]]
user = "7"
agent = "slow"
""")
    return path


async def test_sigterm_finishes_what_it_can_and_answers_503_to_the_rest(tmp_path: Path) -> None:
    with RecordingAgent(delay_s=1.0) as fast, RecordingAgent(delay_s=DRAIN_S + 5.0) as slow:
        proxy = ProxyProcess(write_config(tmp_path / "proxy.toml", fast.url, slow.url))
        with proxy:
            assert proxy.process is not None
            async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=GUARD_S)) as client:

                async def post(update_id: int, user: int) -> int | str:
                    try:
                        async with client.post(proxy.url + "/tg", data=telegram_text(update_id, "hello there, agent",
                                                                                      user=user),
                                               headers=HEADERS) as response:
                            await response.read()
                            return response.status
                    except aiohttp.ClientError as exc:
                        return type(exc).__name__

                requests = [asyncio.create_task(post(i, 100 + i)) for i in range(1, FAST + 1)]
                requests += [asyncio.create_task(post(100 + i, 7)) for i in range(1, SLOW + 1)]
                await _until(lambda: len(fast.records()) == FAST and len(slow.records()) == SLOW)
                started = time.monotonic()
                os.kill(proxy.process.pid, signal.SIGTERM)
                await asyncio.sleep(0.5)
                draining = httpx.get(proxy.admin + "/readyz", timeout=5.0)
                late = await post(999, 200)
                answers = await asyncio.wait_for(asyncio.gather(*requests), GUARD_S)
            code = await asyncio.to_thread(proxy.process.wait, GUARD_S)
            took = time.monotonic() - started
            log = proxy.log.read_text()
    assert answers == [200] * FAST + [503] * SLOW
    assert (draining.status_code, draining.text) == (503, "draining")
    assert late in ("ClientConnectorError", "ClientOSError", "ServerDisconnectedError")
    assert code == 0 and DRAIN_S <= took < DRAIN_S + 10
    assert "drain deadline: 5 request(s) still running answered 503" in log
    assert log.count("answered 503 to POST /tg: still running at the drain deadline") == SLOW


async def test_sighup_reloads_a_valid_config_and_refuses_a_broken_one(tmp_path: Path) -> None:
    with RecordingAgent() as fast, RecordingAgent() as slow:
        path = write_config(tmp_path / "proxy.toml", fast.url, slow.url)
        with ProxyProcess(path) as proxy:
            assert proxy.process is not None
            first = _status(proxy)["config"]["hash"]
            path.write_text(path.read_text().replace('default_agent = "fast"', 'default_agent = "nobody"'))
            os.kill(proxy.process.pid, signal.SIGHUP)
            await _until(lambda: "reload of" in proxy.log.read_text())
            kept = _status(proxy)["config"]["hash"]
            write_config(path, fast.url, slow.url, description="the fast one")
            os.kill(proxy.process.pid, signal.SIGHUP)
            await _until(lambda: "config reloaded from" in proxy.log.read_text())
            status = _status(proxy)
            answer = httpx.post(proxy.url + "/tg", content=telegram_text(1, "hello after the reload", user=5),
                                headers=HEADERS, timeout=5.0)
            log = proxy.log.read_text()
        records = fast.records()
    assert kept == first != status["config"]["hash"]
    assert f'{path}: channels.telegram.default_agent: no agent named "nobody"' in log
    assert (status["status"], answer.status_code, records) == ("ready", 200, [(1, "fast", "default")])


def _status(proxy: ProxyProcess) -> dict[str, object]:
    return json.loads(httpx.get(proxy.admin + "/v1/status", headers=ADMIN_HEADERS, timeout=5.0).text)


async def _until(ready: object) -> None:
    async with asyncio.timeout(GUARD_S):
        while not ready():  # type: ignore[operator]  # noqa: ASYNC110 (a bounded wait on a real process)
            await asyncio.sleep(0.05)
