"""Real proxy processes for the replica tests: `stickyroute serve` in a subprocess on free ports.

    with ProxyProcess(config_path) as proxy:            starts, waits until /healthz answers
        proxy.url, proxy.admin                          http://127.0.0.1:<port> of each listener
        proxy.restart()                                 stop (SIGTERM) and start again, same ports
    write_replica_config(tmp_path, upstream, agents, state=...)   a config every replica shares

Each process is stopped by its own PID (SIGTERM, then SIGKILL after the hang guard).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import httpx
from prometheus_client.parser import text_string_to_metric_families

from stickyroute.config.model import Agent
from tests.redis_server import free_port

HANG_GUARD_S = 20.0
ROOT = Path(__file__).resolve().parents[2]


SECRET = "replica-secret"
HEADERS = {"content-type": "application/json", "x-telegram-bot-api-secret-token": SECRET}
ADMIN_TOKEN = "replica-admin-token-0001"
ADMIN_HEADERS = {"authorization": f"Bearer {ADMIN_TOKEN}"}


def write_replica_config(path: Path, upstream_url: str, agents: Sequence[Agent], *, state: str = "",
                         extra: str = "") -> Path:
    """A config: agent `default` (no keywords, the channel default) and `agents`, all at
    `upstream_url`; one Telegram channel on /tg with sticky_heuristic and the keyword classifier;
    `state` is the [state] table's body."""
    lines = ["[admin]", f"token = {json.dumps(ADMIN_TOKEN)}", "[upstream]", "timeout_s = 10.0", "connect_timeout_s = 2.0",
             "[classifier]", 'provider = "keywords"']
    if state:
        lines += ["[state]", state]
    lines += ['[agents."default"]', f"url = {json.dumps(upstream_url)}"]
    for agent in agents:
        lines += [f"[agents.{json.dumps(agent.name)}]", f"url = {json.dumps(upstream_url)}",
                  f"description = {json.dumps(agent.description)}", f"keywords = {json.dumps(list(agent.keywords))}",
                  f"weak_keywords = {json.dumps(list(agent.weak_keywords))}"]
    lines += ["[channels.telegram]", 'path = "/tg"', 'default_agent = "default"', f"secret_token = {json.dumps(SECRET)}",
              "[channels.telegram.overrides]", 'auto_route = "sticky_heuristic"', extra]
    path.write_text("\n".join(lines) + "\n")
    return path


class RecordingAgent:
    """tests/proxy/recording_agent.py in its own uvicorn process on a free port (context manager)."""

    def __init__(self, answer: bytes = b'{"ok":true}', delay_s: float = 0.0) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._env = dict(os.environ, AGENT_ANSWER=answer.decode(), AGENT_DELAY_S=str(delay_s))
        self.process: subprocess.Popen[bytes] | None = None

    def records(self) -> list[tuple[int, str, str]]:
        """(update_id, agent, reason) of every forwarded update, in arrival order."""
        return [tuple(r) for r in httpx.get(self.url + "/__records", timeout=5.0).json()]  # type: ignore[misc]

    def __enter__(self) -> RecordingAgent:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "uvicorn", "tests.proxy.recording_agent:app", "--host", "127.0.0.1", "--port",
             str(self.port), "--log-level", "warning", "--no-access-log"], cwd=ROOT, env=self._env,
            start_new_session=True)
        deadline = time.monotonic() + HANG_GUARD_S
        while time.monotonic() < deadline:
            try:
                httpx.get(self.url + "/__records", timeout=1.0)
                return self
            except httpx.HTTPError:
                time.sleep(0.05)
        raise RuntimeError("recording agent did not start")

    def __exit__(self, *exc: object) -> None:
        if self.process is not None:
            os.killpg(self.process.pid, signal.SIGTERM)
            self.process.wait(HANG_GUARD_S)


class ProxyProcess:
    """`stickyroute serve --config <path>` on free loopback ports (context manager)."""

    def __init__(self, config: Path, *, workers: int = 1, log: Path | None = None, args: Sequence[str] = (),
                 hogged: bool = False) -> None:
        """`args`: more `serve` options (e.g. `--demo-agents`); `hogged`: a CPU-bound task shares
        the server's event loop (tests/proxy/hogged.py)."""
        self.config = config
        self.hogged = hogged
        self.args = tuple(args)
        self.port = free_port()
        self.admin_port = free_port()
        self.workers = workers
        self.log = log or config.with_suffix(f".{self.port}.log")
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def admin(self) -> str:
        return f"http://127.0.0.1:{self.admin_port}"

    def start(self) -> None:
        command = [sys.executable, "-m", "tests.proxy.hogged" if self.hogged else "stickyroute", "serve", "--config", str(self.config), "--host",
                   "127.0.0.1", "--port", str(self.port), "--admin-port", str(self.admin_port)]
        if self.workers > 1:
            command += ["--workers", str(self.workers)]
        command += self.args
        env = {k: v for k, v in os.environ.items() if k != "GROQ_API_KEY"}
        with open(self.log, "ab") as out:
            self.process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT, env=env,
                                            start_new_session=True)
        deadline = time.monotonic() + HANG_GUARD_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"proxy exited during start-up:\n{self.log.read_text(errors='replace')[-3000:]}")
            try:
                if httpx.get(self.admin + "/healthz", timeout=1.0).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.05)
        raise RuntimeError(f"proxy not up after {HANG_GUARD_S} s:\n{self.log.read_text(errors='replace')[-3000:]}")

    def stop(self) -> None:
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(HANG_GUARD_S)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()

    def restart(self) -> None:
        self.stop()
        self.start()

    def stats(self) -> dict[str, object]:
        return httpx.get(self.admin + "/stats", headers=ADMIN_HEADERS, timeout=HANG_GUARD_S).json()  # type: ignore[no-any-return]

    def fallbacks(self) -> dict[str, float]:
        """`stickyroute_state_fallbacks_total` by "operation/cause", from /metrics."""
        text = httpx.get(self.admin + "/metrics", timeout=HANG_GUARD_S).text
        out: dict[str, float] = {}
        for family in text_string_to_metric_families(text):
            if family.name == "stickyroute_state_fallbacks":
                for sample in family.samples:
                    if sample.name.endswith("_total"):
                        out[f"{sample.labels['operation']}/{sample.labels['cause']}"] = sample.value
        return out

    def __enter__(self) -> ProxyProcess:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
