"""One log format in real `stickyroute serve` processes: every line of every logger (uvicorn's
included, every worker) in the chosen format, the startup line and the "stopped" line, the config
warnings once under `--workers`."""

from __future__ import annotations

import json
import re
import time
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

import stickyroute
from stickyroute.config.model import Agent
from tests.proxy.harness import telegram_text
from tests.proxy.processes import (
    ADMIN_HEADERS,
    HANG_GUARD_S,
    HEADERS,
    ProxyProcess,
    RecordingAgent,
    write_replica_config,
)
from tests.redis_server import flush_prefix, free_port, private_prefix, require_redis

TEXT_LINE = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} (DEBUG|INFO|WARNING|ERROR|CRITICAL) [\w.]+: ")
CODER = Agent("coder", "", description="writes code", keywords=("python", "refactor"))


def _json_lines(log: Path) -> list[dict[str, object]]:
    """Every line of the log as a JSON object (a line that is not one fails the test)."""
    lines = [line for line in log.read_text().splitlines() if line.strip()]
    records = [json.loads(line) for line in lines]
    assert all(isinstance(r, dict) and {"time", "level", "logger", "message"} <= r.keys() for r in records), lines
    return records


def _until_logged(log: Path, predicate, what: str) -> None:
    """Hang guard: wait until the log satisfies `predicate` (the processes write asynchronously)."""
    deadline = time.monotonic() + HANG_GUARD_S
    while not predicate(log.read_text()):
        if time.monotonic() > deadline:
            raise AssertionError(f"not logged within {HANG_GUARD_S} s: {what}\n{log.read_text()[-3000:]}")
        time.sleep(0.05)


def _demo_config(path: Path) -> Path:
    """The replica config with each agent on its own loopback port (a demo agent each)."""
    text = write_replica_config(path, "http://127.0.0.1:1", [CODER]).read_text()
    for _ in range(2):
        text = text.replace('url = "http://127.0.0.1:1"', f'url = "http://127.0.0.1:{free_port()}"', 1)
    path.write_text(text)
    return path


def test_json_logs_every_line_uvicorns_too_with_the_startup_and_stopped_lines(tmp_path: Path) -> None:
    config = _demo_config(tmp_path / "proxy.toml")
    log = tmp_path / "serve.log"
    proxy = ProxyProcess(config, log=log, args=["--log-format", "json", "--log-level", "debug", "--demo-agents"])
    with proxy:
        reply = httpx.post(proxy.url + "/tg", content=telegram_text(1, "please refactor this python"), headers=HEADERS,
                           timeout=HANG_GUARD_S)
        digest = proxy.stats()["config"]["hash"]  # type: ignore[index]
    records = _json_lines(log)
    started = [r for r in records if r["message"] == "started"]
    decisions = [r for r in records if r["message"] == "decision"]
    assert reply.status_code == 200
    assert {r["logger"] for r in records} >= {"stickyroute", "stickyroute.decision", "stickyroute.demo", "uvicorn.error"}
    assert len(started) == 1 and started[0]["logger"] == "stickyroute" and started[0]["level"] == "INFO"
    assert {k: started[0][k] for k in ("version", "config", "config_hash", "overrides", "channels", "agents", "state",
                                       "classifier", "workers")} == {
        "version": stickyroute.__version__, "config": str(config), "config_hash": digest,
        "overrides": {"server.host": "127.0.0.1", "server.port": proxy.port, "admin.port": proxy.admin_port,
                      "server.log_format": "json", "server.log_level": "debug"},
        "channels": [{"name": "telegram", "type": "telegram", "paths": ["/tg"]}], "agents": ["default", "coder"],
        "state": {"backend": "memory", "url": None}, "classifier": "keyword gate (provider = keywords; no LLM calls)",
        "workers": 1}
    assert [(d["channel"], d["agent"], d["status"]) for d in decisions] == [("telegram", "coder", 200)]
    assert records[-1]["message"] == "stopped" and records[-1]["logger"] == "stickyroute"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", str(records[-1]["time"]))


def test_text_logs_are_one_format_with_the_startup_line(tmp_path: Path) -> None:
    config = write_replica_config(tmp_path / "proxy.toml", f"http://127.0.0.1:{free_port()}", [CODER])
    log = tmp_path / "serve.log"
    with ProxyProcess(config, log=log) as proxy:
        digest = str(proxy.stats()["config"]["hash"])  # type: ignore[index]
    lines = [line for line in log.read_text().splitlines() if line.strip()]
    assert [line for line in lines if not TEXT_LINE.match(line)] == []
    startup = [line for line in lines if " started: " in line]
    assert [line.split(": ", 1)[1] for line in startup] == [
        f"stickyroute {stickyroute.__version__} started: config {config} hash {digest[:12]} (overrides: server.host "
        f"127.0.0.1, server.port {proxy.port}, admin.port {proxy.admin_port}); channels telegram (telegram) /tg; agents "
        "default, coder; state memory; classifier keyword gate (provider = keywords; no LLM calls); webhooks on "
        f"127.0.0.1:{proxy.port}, admin on 127.0.0.1:{proxy.admin_port}"]
    assert re.search(r"INFO stickyroute: stickyroute stopped after \d+\.\d s$", lines[-1])
    assert not any("uvicorn" in line for line in lines)  # uvicorn's start-up chatter only at debug


@pytest.fixture
async def redis_prefix() -> AsyncIterator[str]:
    prefix = private_prefix()
    yield prefix
    await flush_prefix(require_redis(), prefix)


def test_workers_log_json_from_every_process_and_the_config_warnings_once(tmp_path: Path, redis_prefix: str) -> None:
    state = f'backend = "redis"\nurl = "{require_redis()}"\nkey_prefix = "{redis_prefix}"\nop_timeout_ms = 1000'
    log = tmp_path / "serve.log"
    with RecordingAgent() as agent:
        config = write_replica_config(tmp_path / "redis.toml", agent.url, [CODER], state=state)
        with ProxyProcess(config, workers=2, log=log, args=["--log-format", "json"]) as proxy:
            _until_logged(log, lambda text: text.count('"message":"worker ') >= 2, "both workers ready")
            reply = httpx.post(proxy.url + "/tg", content=telegram_text(7, "refactor my python"), headers=HEADERS,
                               timeout=HANG_GUARD_S)
            status = httpx.get(proxy.admin + "/v1/status", headers=ADMIN_HEADERS, timeout=HANG_GUARD_S).json()
    records = _json_lines(log)
    warnings = [r for r in records if str(r["message"]).startswith("config warning:")]
    ready = [r for r in records if re.fullmatch(r"worker \d+ ready", str(r["message"]))]
    started = [r for r in records if r["message"] == "started"]
    assert reply.status_code == 200, (reply.headers, reply.text, log.read_text(errors="replace")[-3000:])
    assert [w["message"] for w in warnings] == [
        f"config warning: {config}: agents.default.keywords: no keywords while channel telegram uses sticky_heuristic: "
        "the keyword gate never suggests this agent"]
    assert len({r["message"] for r in ready}) == 2
    assert [(s["workers"], s["state"], s["config_hash"]) for s in started] == [
        (2, {"backend": "redis", "url": require_redis()}, status["config"]["hash"])]
    assert [r["message"] for r in records].count("stopped") == 1 and records[-1]["message"] == "stopped"
    assert any(str(r["logger"]).startswith("uvicorn") for r in records)  # the parent's supervisor lines
