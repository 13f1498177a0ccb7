"""`check`, `serve` and a reload share one validation (regression: `provider = "groq"` without
`GROQ_API_KEY` was ok for `check`, a traceback for `serve` and a 500 for a reload); the config
hash is the file's, whatever the command line overrides."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx

from stickyroute.cli.main import main
from tests.admin.operated import Operated
from tests.proxy.harness import upstream_set
from tests.proxy.processes import ADMIN_HEADERS, HANG_GUARD_S, ROOT, ProxyProcess, write_replica_config
from tests.redis_server import free_port

GROQ = '[classifier]\nprovider = "groq"\n'
KEY_PROBLEM = ('classifier.provider: "groq" needs an API key in the environment variable GROQ_API_KEY '
               "(classifier.api_key_env), which is not set")
KEYWORDLESS = ("agents.default.keywords: no keywords while channel telegram uses sticky_heuristic: the keyword gate "
               "never suggests this agent")


def _with_groq(text: str) -> str:
    return text.replace('[classifier]\nprovider = "keywords"', GROQ.strip())


def _groq_config(tmp_path: Path) -> Path:
    path = write_replica_config(tmp_path / "proxy.toml", f"http://127.0.0.1:{free_port()}", [])
    path.write_text(_with_groq(path.read_text()))
    return path


def test_check_reports_groq_without_its_key(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("GROQ_API_KEY", raising=False)
    path = _groq_config(tmp_path)
    assert main(["check", str(path)]) == 2
    assert capsys.readouterr().out.splitlines() == [
        f"{path}: {KEY_PROBLEM}", f"warning: {path}: {KEYWORDLESS}", "invalid: 1 error, 1 warning"]


def test_check_accepts_groq_with_its_key(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("GROQ_API_KEY", "gsk_test")
    path = _groq_config(tmp_path)
    assert main(["check", str(path)]) == 0
    assert capsys.readouterr().out.splitlines() == [f"warning: {path}: {KEYWORDLESS}", "ok: 1 agent, 1 channel"]


def test_serve_prints_the_key_error_without_a_traceback_and_exits_2(tmp_path):
    path = _groq_config(tmp_path)
    env = {k: v for k, v in os.environ.items() if k != "GROQ_API_KEY"}
    done = subprocess.run([sys.executable, "-m", "stickyroute", "serve", "--config", str(path), "--port",
                           str(free_port()), "--admin-port", str(free_port())], check=False, cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=HANG_GUARD_S)
    assert (done.returncode, done.stderr, done.stdout) == (2, f"{path}: {KEY_PROBLEM}\n", "")


async def test_a_reload_into_groq_without_its_key_answers_422(tmp_path):
    with upstream_set("general") as ups:
        async with Operated(tmp_path, ups, agents={}) as op:
            path = tmp_path / "proxy.toml"
            before = op.service.runtime.digest
            path.write_text(GROQ + path.read_text())
            refused = await op.api("POST", "/v1/reload")
            still = op.service.runtime.digest
    assert refused.status_code == 422
    assert (refused.json()["ok"], refused.json()["errors"], still) == (False, [f"{path}: {KEY_PROBLEM}"], before)


def test_sighup_into_groq_without_its_key_logs_the_errors_and_keeps_serving(tmp_path):
    path = write_replica_config(tmp_path / "proxy.toml", f"http://127.0.0.1:{free_port()}", [])
    log = tmp_path / "serve.log"
    with ProxyProcess(path, log=log) as proxy:
        before = proxy.stats()["config"]["hash"]  # type: ignore[index]
        path.write_text(_with_groq(path.read_text()))
        assert proxy.process is not None
        os.kill(proxy.process.pid, signal.SIGHUP)
        deadline = time.monotonic() + HANG_GUARD_S
        while "refused" not in log.read_text():
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.05)
        after = proxy.stats()["config"]
        healthy = httpx.get(proxy.admin + "/healthz", timeout=HANG_GUARD_S).status_code
    text = log.read_text()
    assert f"reload of {path} refused: 1 error(s); still serving the config {before[:12]}\n{path}: {KEY_PROBLEM}\n" in text
    assert (after["hash"], after["reloads"], healthy) == (before, {"rejected": 1}, 200)  # type: ignore[index]
    assert "Traceback" not in text and "never retrieved" not in text


def test_replicas_of_one_file_show_one_hash_and_their_own_overrides(tmp_path):
    path = write_replica_config(tmp_path / "proxy.toml", f"http://127.0.0.1:{free_port()}", [])
    with ProxyProcess(path) as one, ProxyProcess(path) as two:
        first, second = one.stats()["config"], two.stats()["config"]
        status = httpx.get(one.admin + "/v1/status", headers=ADMIN_HEADERS, timeout=HANG_GUARD_S).json()["config"]
    assert first["hash"] == second["hash"] == status["hash"]  # type: ignore[index]
    assert first["overrides"] == status["overrides"] == {  # type: ignore[index]
        "server.host": "127.0.0.1", "server.port": one.port, "admin.port": one.admin_port}
    assert second["overrides"]["server.port"] == two.port  # type: ignore[index]


async def test_a_reload_says_a_new_log_format_needs_a_restart(tmp_path):
    with upstream_set("general") as ups:
        async with Operated(tmp_path, ups, agents={}) as op:
            path = tmp_path / "proxy.toml"
            path.write_text('[server]\nlog_format = "json"\nlog_level = "debug"\n' + path.read_text())
            done = await op.api("POST", "/v1/reload")
    assert (done.status_code, done.json()["restart_needed"]) == (200, ["server.log_format", "server.log_level"])
