"""The operator's routes: status, the 15-minute series, agents with live conversations, explain
on the running config, reload through the API, and pausing a demo agent to watch the proxy
answer 502 and the platform's retry go through once it is resumed."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import pytest

from stickyroute.config import load_config
from stickyroute.server.demo import DemoAgents
from tests.admin.operated import T0, Operated
from tests.proxy.harness import telegram_text
from tests.redis_server import free_port

TG = "/webhooks/telegram"
AUTO = '[channels.telegram.overrides]\nauto_route = "sticky_heuristic"\nauto_route_first_message_margin = 0'


async def test_status_says_ready_and_which_config_runs(tmp_path, upstreams) -> None:
    async with Operated(tmp_path, upstreams, telegram='agents = ["general", "coder", "internal"]') as op:
        status = (await op.api("GET", "/v1/status")).json()
        stats = (await op.api("GET", "/v1/stats")).json()
    assert status["status"] == "ready"
    assert status["config"] == {"hash": op.service.runtime.digest, "path": str(tmp_path / "proxy.toml"),
                                "loaded_at": T0, "overrides": {}}
    assert len(status["config"]["hash"]) == 64 and stats["config"]["hash"] == status["config"]["hash"]
    assert [(c["name"], c["agents"]) for c in status["channels"]] == [
        ("telegram", ["general", "coder"]), ("whatsapp", ["general", "coder", "billing"])]


async def test_the_series_counts_requests_and_decisions_per_bucket(tmp_path, upstreams) -> None:
    async with Operated(tmp_path, upstreams, telegram=AUTO) as op:
        await op.webhook(TG, telegram_text(1, "my invoice shows a wrong refund", user=111))
        op.clock.advance(25.0)
        await op.webhook(TG, telegram_text(2, "please refactor this python code", user=222))
        await op.webhook(TG, b"{}", headers={"x": "y"})
        series = (await op.api("GET", "/v1/series?minutes=1")).json()
        bad = await op.api("GET", "/v1/series?minutes=60")
    assert (series["bucket_s"], series["end"] - series["start"]) == (10.0, 60.0)
    assert [(b["start"] - T0, b["requests"], b["decisions"]) for b in series["buckets"]] == [
        (0.0, {"2xx": 1}, {"keywords": 1}), (20.0, {"2xx": 2}, {"keywords": 1, "unparsed": 1})]
    assert (bad.status_code, bad.json()["detail"]) == (422, "minutes: expected a number between 1 and 15, got 60")


async def test_agents_show_live_conversations_per_channel_and_who_is_hidden(tmp_path, upstreams) -> None:
    async with Operated(tmp_path, upstreams, telegram=AUTO) as op:
        await op.webhook(TG, telegram_text(1, "my invoice shows a wrong refund", user=111))
        await op.webhook(TG, telegram_text(2, "another invoice with a refund", user=222))
        found = (await op.api("GET", "/v1/agents")).json()["agents"]
    assert [(a["name"], a["hidden"], a["live_conversations"], a["channels"], a["demo"]) for a in found] == [
        ("general", False, {"telegram": 0, "whatsapp": 0}, ["telegram", "whatsapp"], None),
        ("coder", False, {"telegram": 0, "whatsapp": 0}, ["telegram", "whatsapp"], None),
        ("billing", False, {"telegram": 2, "whatsapp": 0}, ["telegram", "whatsapp"], None),
        ("internal", True, {"telegram": 0, "whatsapp": 0}, ["telegram", "whatsapp"], None)]


async def test_explain_runs_against_the_running_config(tmp_path, upstreams) -> None:
    async with Operated(tmp_path, upstreams, telegram=AUTO) as op:
        first = (await op.api("POST", "/v1/explain", json={"channel": "telegram", "text": "refund my invoice"})).json()
        switch = (await op.api("POST", "/v1/explain", json={"channel": "telegram", "text": "/agent coder",
                                                            "current": "billing"})).json()
    assert first["outcome"] == {"agent": "billing", "reason": "keywords"}
    assert first["lines"][0].startswith("channel telegram: strategy sticky_heuristic")
    assert switch["outcome"] == {"agent": "coder", "reason": "explicit",
                                 "if_over_the_switch_limit": {"agent": "billing", "reason": "explicit_limited"}}


@pytest.mark.parametrize(("body", "status", "detail"), [
    ({"text": "x"}, 422, "channel: is required"),
    ({"channel": "telegram", "text": ""}, 422, 'text: expected a non-empty string, got ""'),
    ({"channel": "telegram", "text": "x", "current": "nobody"}, 422, "current: no agent 'nobody' in the running config"),
    ({"channel": "telegram", "text": "x", "counter": -1}, 422, "counter: expected an integer >= 0, got -1"),
    ({"channel": "slack", "text": "x"}, 404, "no channel 'slack' in the running config (channels: telegram, whatsapp)"),
])
async def test_a_bad_explain_says_what_is_wrong(tmp_path, upstreams, body, status, detail) -> None:
    async with Operated(tmp_path, upstreams) as op:
        answer = await op.api("POST", "/v1/explain", json=body)
    assert (answer.status_code, answer.json()["detail"]) == (status, detail)


async def test_reload_through_the_api_refuses_errors_and_swaps_a_valid_config(tmp_path, upstreams) -> None:
    async with Operated(tmp_path, upstreams) as op:
        path = tmp_path / "proxy.toml"
        good = path.read_text()
        before = op.service.runtime.digest
        path.write_text(good.replace('default_agent = "general"', 'default_agent = "nobody"', 1))
        refused = await op.api("POST", "/v1/reload")
        still = op.service.runtime.digest
        path.write_text(good.replace('description = "the coder agent"', 'description = "writes the code"'))
        done = await op.api("POST", "/v1/reload")
        stats = (await op.api("GET", "/v1/stats")).json()
    assert (refused.status_code, refused.json()["ok"], refused.json()["errors"], still) == (
        422, False, [f'{path}: channels.telegram.default_agent: no agent named "nobody"'], before)
    assert (done.status_code, done.json()["ok"], done.json()["previous_hash"], done.json()["hash"] != before) == (
        200, True, before, True)
    assert op.service.config.agents["coder"].description == "writes the code"
    assert (stats["config"]["hash"], stats["config"]["reloads"]) == (done.json()["hash"], {"ok": 1, "rejected": 1})


@dataclass
class Address:
    url: str


async def test_a_paused_demo_agent_makes_the_proxy_answer_502_until_resumed(tmp_path) -> None:
    port = free_port()
    demo_config = tmp_path / "demo" / "proxy.toml"
    demo_config.parent.mkdir()
    demo_config.write_text(f'[agents.echo]\nurl = "http://127.0.0.1:{port}"\n[channels.telegram]\n'
                           'default_agent = "echo"\n')
    demo = DemoAgents.for_config(load_config(demo_config, env={}))
    async with Operated(tmp_path, {"echo": Address(f"http://127.0.0.1:{port}")}, default="echo", agents={},
                        demo=demo) as op:
        demo.start()
        try:
            listed = (await op.api("GET", "/v1/demo/agents")).json()
            await asyncio.wait_for(_until_up(op), 10.0)
            before = await _refused(op)
            paused = await op.api("POST", "/v1/demo/agents/echo/pause")
            down = await op.webhook(TG, telegram_text(2, "hello while it is down", user=111))
            after = await _refused(op)
            resumed = await op.api("POST", "/v1/demo/agents/echo/resume")
            await asyncio.wait_for(_until_up(op, 2), 10.0)  # the platform's retry of update 2 goes through
            unknown = await op.api("POST", "/v1/demo/agents/nobody/pause")
            logged = (await op.api("GET", "/v1/decisions?limit=1")).json()["decisions"]
        finally:
            await demo.stop()
    assert listed == {"agents": [{"name": "echo", "address": f"127.0.0.1:{port}", "paused": False}]}
    assert (paused.json()["paused"], down.status_code, after - before, resumed.json()["paused"],
            unknown.status_code) == (True, 502, 1, False, 404)
    assert [(d["agent"], d["status"]) for d in logged] == [("echo", 200)]


async def _refused(op: Operated) -> int:
    stats = (await op.api("GET", "/v1/stats")).json()
    return int(stats["upstream"].get("echo", {}).get("failures", {}).get("refused", 0))


async def _until_up(op: Operated, update_id: int = 1) -> None:
    """Post update `update_id` until the demo agent answers 200 (its listener starts in a task)."""
    while (await op.webhook(TG, telegram_text(update_id, "hello there, demo", user=111))).status_code != 200:  # noqa: ASYNC110
        await asyncio.sleep(0.05)  # a bounded wait (the caller's wait_for) on a real listener starting


async def test_without_demo_agents_the_demo_routes_say_so(tmp_path, upstreams) -> None:
    async with Operated(tmp_path, upstreams) as op:
        answer = await op.api("GET", "/v1/demo/agents")
    assert (answer.status_code, answer.json()["detail"]) == (
        404, "no demo agents in this process (start it with serve --demo-agents)")
