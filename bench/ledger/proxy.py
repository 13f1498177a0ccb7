"""The proxy under test as a real process: `stickyroute serve` on a config generated from the
shipped one (config/proxy.toml and its rule packs), its agents and Groq pointed at the fakes.

    path = write_config(tmp, agents={name: url}, port=..., admin_port=..., groq_url=..., extra={...})
    proxy = ProxyProcess(path, port, admin_port, log_path); await proxy.start()
    proxy.kill()            SIGKILL (nothing flushed, nothing closed)
    await proxy.start()     the same config again (a restart)
    proxy.rss_kb(), proxy.open_fds()
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import aiohttp
import tomlkit

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "config" / "proxy.toml"
TELEGRAM_SECRET = "ledger-telegram-secret"
APP_SECRET = "ledger-app-secret"
STICKYROUTE = Path(sys.executable).parent / "stickyroute"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def write_config(folder: Path, agents: dict[str, str], port: int, admin_port: int, groq_url: str,
                 extra: dict[str, dict[str, Any]] | None = None, name: str = "proxy.toml") -> Path:
    """The shipped config with the fakes' URLs, secrets set, and `extra` tables merged in
    (`{"upstream": {"timeout_s": 1.0}, "state": {"backend": "redis"}}`)."""
    doc = tomlkit.parse(SHIPPED.read_text())
    doc["server"]["port"] = port  # type: ignore[index]
    doc["admin"]["port"] = admin_port  # type: ignore[index]
    doc["classifier"]["provider"] = "groq"  # type: ignore[index]
    doc["classifier"]["base_url"] = groq_url  # type: ignore[index]
    for agent, table in doc["agents"].items():  # type: ignore[union-attr]
        table["url"] = agents[agent]
        if "rules" in table and not str(table["rules"]).startswith("builtin:"):  # a shipped pack is found anywhere
            table["rules"] = str((SHIPPED.parent / str(table["rules"])).resolve())
    doc["channels"]["telegram"]["secret_token"] = TELEGRAM_SECRET  # type: ignore[index]
    doc["channels"]["whatsapp"]["app_secret"] = APP_SECRET  # type: ignore[index]
    for table, values in (extra or {}).items():
        if table not in doc:
            doc[table] = tomlkit.table()
        for key, value in values.items():
            doc[table][key] = value  # type: ignore[index]
    path = folder / name
    path.write_text(tomlkit.dumps(doc))
    return path


class ProxyProcess:
    """One `stickyroute serve` process (stderr to `log_path`)."""

    def __init__(self, config: Path, port: int, admin_port: int, log_path: Path) -> None:
        self.config, self.port, self.admin_port, self.log_path = config, port, admin_port, log_path
        self.process: subprocess.Popen[bytes] | None = None
        self.starts = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    async def start(self, timeout_s: float = 30.0) -> None:
        env = {**os.environ, "GROQ_API_KEY": "gsk-ledger-fake"}
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen([str(STICKYROUTE), "serve", "--config", str(self.config)],
                                            stdout=log, stderr=log, env=env, cwd=ROOT)
        self.starts += 1
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        async with aiohttp.ClientSession() as session:
            while True:
                if self.process.poll() is not None:
                    raise RuntimeError(f"the proxy exited with {self.process.returncode}; see {self.log_path}")
                try:
                    async with session.get(f"http://127.0.0.1:{self.admin_port}/readyz",
                                           timeout=aiohttp.ClientTimeout(total=1)) as response:
                        if response.status == 200:
                            return
                except (aiohttp.ClientError, TimeoutError):
                    pass
                if loop.time() > deadline:
                    raise RuntimeError(f"the proxy did not get ready in {timeout_s} s; see {self.log_path}")
                await asyncio.sleep(0.05)

    def kill(self) -> None:
        """SIGKILL: the process dies at once, in-flight requests and all state with it."""
        if self.process is not None and self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
            self.process.wait(10)

    def stop(self) -> None:
        """SIGTERM, then SIGKILL after 10 s."""
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.kill()

    def rss_kb(self) -> int:
        """Resident set size (KiB) from /proc."""
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        return 0

    def cpu_s(self) -> float:
        """User + system CPU seconds the process used so far (/proc/<pid>/stat)."""
        fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def open_fds(self) -> int:
        return len(os.listdir(f"/proc/{self.pid}/fd"))

    async def stats(self) -> dict[str, Any]:
        async with aiohttp.ClientSession() as session, session.get(
                f"http://127.0.0.1:{self.admin_port}/stats", timeout=aiohttp.ClientTimeout(total=5)) as response:
            return dict(await response.json())
