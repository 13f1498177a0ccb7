"""`make run` and `make install` (what `make test` runs first) started together on a fresh clone do
not race in the install (regression: one of them failed with a pip import error). The clone is the
tracked files copied to a temporary folder; `make run` serves a copy of the shipped config on free
ports, so nothing else on the machine is disturbed."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import httpx

from tests.redis_server import free_port

ROOT = Path(__file__).resolve().parents[2]
INSTALL_GUARD_S = 1200.0
"""Hang guard: a fresh virtualenv with every tool (pip's cache makes it minutes, not more)."""


def _fresh_clone(target: Path) -> Path:
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    for name in filter(None, tracked.decode().split("\0")):
        source = ROOT / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    return target


def test_make_run_and_make_install_started_together_on_a_fresh_clone_do_not_race(tmp_path):
    clone = _fresh_clone(tmp_path / "clone")
    admin = free_port()
    ports = {"8080": free_port(), "9090": admin, **{str(p): free_port() for p in range(9101, 9105)}}
    config = clone / "config" / "ports.toml"
    text = (clone / "config" / "proxy.toml").read_text()
    config.write_text(re.sub(r"\b(8080|9090|910[1-4])\b", lambda m: str(ports[m.group(1)]), text))
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "MAKEFLAGS", "MAKELEVEL")}
    run_log, install_log = (tmp_path / "run.log").open("wb"), (tmp_path / "install.log").open("wb")
    run = subprocess.Popen(["make", "run", f"CONFIG={config}"], cwd=clone, env=env, stdout=run_log,
                           stderr=subprocess.STDOUT, start_new_session=True)
    install = subprocess.Popen(["make", "install"], cwd=clone, env=env, stdout=install_log, stderr=subprocess.STDOUT,
                               start_new_session=True)
    try:
        installed = install.wait(INSTALL_GUARD_S)
        deadline = time.monotonic() + INSTALL_GUARD_S
        healthy = False
        while not healthy and run.poll() is None and time.monotonic() < deadline:
            try:
                healthy = httpx.get(f"http://127.0.0.1:{admin}/healthz", timeout=1.0).status_code == 200
            except httpx.HTTPError:
                time.sleep(0.2)
    finally:
        for process in (run, install):
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
                process.wait(60)
        run_log.close()
        install_log.close()
    logs = (tmp_path / "run.log").read_text(errors="replace") + (tmp_path / "install.log").read_text(errors="replace")
    assert (installed, healthy) == (0, True), logs[-4000:]
    assert "Traceback" not in logs and "Error" not in logs.replace("ErrorLog", ""), logs[-4000:]
    venv = clone / ".venv"
    assert (venv / ".stamp-runtime").exists() and (venv / ".stamp-tools").exists()
    assert (venv / "bin" / "pytest").exists() and (venv / "bin" / "stickyroute").exists()
