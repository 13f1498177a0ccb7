"""Graceful shutdown and SIGHUP on a real `stickyroute serve` process (issue #11): SIGTERM with
webhooks in flight against slow real agents: the listener stops accepting, /readyz says
draining, what finishes within `drain_s` gets its agent's answer, what still runs then gets 503
(the platform retries), nothing is dropped; SIGHUP reloads a valid config and refuses a broken one.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import os
import signal
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp
import httpx

from tests.proxy.harness import telegram_text
from tests.proxy.processes import ADMIN_HEADERS, ADMIN_TOKEN, HEADERS, SECRET, ProxyProcess, RecordingAgent
from tests.redis_server import flush_prefix, private_prefix, require_redis

GUARD_S = 90.0  # a hang guard, never a timing assertion: a rolling restart of two workers imports
# the package twice, which takes tens of seconds on a machine whose cores are busy
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
                async with client.get(proxy.admin + "/readyz") as ready:
                    draining = (ready.status, await ready.text())
                late = await post(999, 200)
                answers = await asyncio.wait_for(asyncio.gather(*requests), GUARD_S)
            code = await asyncio.to_thread(proxy.process.wait, GUARD_S)
            took = time.monotonic() - started
            log = proxy.log.read_text()
    assert answers == [200] * FAST + [503] * SLOW
    assert draining == (503, "draining")
    assert late in ("ClientConnectorError", "ClientOSError", "ServerDisconnectedError")
    assert code == 0 and DRAIN_S <= took < DRAIN_S + 10
    assert "drain deadline: 5 request(s) still running answered 503" in log
    assert log.count("answered 503 to POST /tg: still running at the drain deadline") == SLOW


async def test_sighup_reloads_a_valid_config_and_refuses_a_broken_one(tmp_path: Path) -> None:
    with RecordingAgent() as fast, RecordingAgent() as slow:
        path = write_config(tmp_path / "proxy.toml", fast.url, slow.url)
        with ProxyProcess(path) as proxy:
            assert proxy.process is not None
            first = (await _status(proxy))["config"]["hash"]
            path.write_text(path.read_text().replace('default_agent = "fast"', 'default_agent = "nobody"'))
            os.kill(proxy.process.pid, signal.SIGHUP)
            await _until(lambda: "reload of" in proxy.log.read_text())
            kept = (await _status(proxy))["config"]["hash"]
            write_config(path, fast.url, slow.url, description="the fast one")
            os.kill(proxy.process.pid, signal.SIGHUP)
            await _until(lambda: "config reloaded from" in proxy.log.read_text())
            status = await _status(proxy)
            async with httpx.AsyncClient(timeout=5.0) as http:
                answer = await http.post(proxy.url + "/tg", content=telegram_text(1, "hello after the reload", user=5),
                                         headers=HEADERS)
            log = proxy.log.read_text()
        records = fast.records()
    assert kept == first != status["config"]["hash"]
    assert f'{path}: channels.telegram.default_agent: no agent named "nobody"' in log
    assert (status["status"], answer.status_code, records) == ("ready", 200, [(1, "fast", "default")])


async def _status(proxy: ProxyProcess) -> dict[str, Any]:
    async with httpx.AsyncClient(timeout=5.0) as http:
        return json.loads((await http.get(proxy.admin + "/v1/status", headers=ADMIN_HEADERS)).text)  # type: ignore[no-any-return]


async def _until(ready: Callable[[], Awaitable[bool] | bool]) -> None:
    async with asyncio.timeout(GUARD_S):
        while True:
            answer = ready()
            if await answer if inspect.isawaitable(answer) else answer:
                return
            await asyncio.sleep(0.05)  # a bounded wait on a real process


async def test_workers_reload_only_a_valid_config_one_worker_at_a_time(tmp_path: Path) -> None:
    url = require_redis()
    prefix = private_prefix()
    with RecordingAgent() as fast, RecordingAgent() as slow:
        path = write_config(tmp_path / "proxy.toml", fast.url, slow.url)
        path.write_text(path.read_text() + f'[state]\nbackend = "redis"\nurl = "{url}"\nkey_prefix = "{prefix}"\n')
        good = path.read_text()
        try:
            with ProxyProcess(path, workers=2) as proxy:
                assert proxy.process is not None
                await _until(lambda: _admin_hash(proxy))
                first = await _admin_hash(proxy)
                path.write_text(good.replace('default_agent = "fast"', 'default_agent = "nobody"'))
                async with httpx.AsyncClient(timeout=5.0) as http:
                    refused = await http.post(proxy.admin + "/v1/reload", headers=ADMIN_HEADERS)
                    os.kill(proxy.process.pid, signal.SIGHUP)  # the parent validates too
                    await _until(lambda: "the workers keep the running config" in proxy.log.read_text())
                    path.write_text(good.replace('description = "fast"', 'description = "the fast one"'))
                    accepted = await http.post(proxy.admin + "/v1/reload", headers=ADMIN_HEADERS)

                    async def reloaded() -> bool:
                        return await _admin_hash(proxy) == accepted.json()["hash"]

                    await _until(reloaded)
                    answer = await http.post(proxy.url + "/tg", headers=HEADERS,
                                             content=telegram_text(1, "hello after the reload", user=5))
        finally:
            await flush_prefix(url, prefix)
    assert (refused.status_code, refused.json()["errors"]) == (
        422, [f'{path}: channels.telegram.default_agent: no agent named "nobody"'])
    assert (accepted.status_code, accepted.json()["mode"], accepted.json()["hash"] != first) == (
        200, "rolling restart", True)
    assert answer.status_code == 200


async def _admin_hash(proxy: ProxyProcess) -> str | None:
    """The running config's hash the admin listener shows; None while no worker serves it."""
    try:
        return str((await _status(proxy))["config"]["hash"])
    except httpx.HTTPError:
        return None
