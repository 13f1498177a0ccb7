"""CLI output survives a closed pipe (regression: `stickyroute stats | head` ended in a
BrokenPipeError traceback): the reader is gone before the command writes, so every write fails."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from stickyroute.server.service import Service
from tests.proxy.harness import upstream_set, write_config
from tests.upstreams import serve_app

ROOT = Path(__file__).resolve().parent.parent
GUARD_S = 60.0


def _into_a_closed_pipe(*args: str) -> subprocess.CompletedProcess[str]:
    read_end, write_end = os.pipe()
    os.close(read_end)  # like `| head` after its lines: nobody reads any more
    try:
        return subprocess.run([sys.executable, "-m", "stickyroute", *args], stdout=write_end, stderr=subprocess.PIPE,
                              text=True, cwd=ROOT, timeout=GUARD_S, check=False)
    finally:
        os.close(write_end)


def test_stats_into_a_closed_pipe_ends_quietly(tmp_path):
    token = "pipe-admin-token-0123456789"
    with upstream_set("general") as ups:
        service = Service(write_config(tmp_path, ups, top=f'[admin]\ntoken = "{token}"\n'), env={})
        with serve_app(service.admin_app(), lifespan="off") as admin:
            done = _into_a_closed_pipe("stats", "--url", admin, "--token", token)
    assert (done.returncode, done.stderr) == (1, "")


def test_explain_and_help_into_a_closed_pipe_end_quietly():
    explained = _into_a_closed_pipe("explain", "--config", "config/proxy.toml", "--channel", "telegram", "--text",
                                    "please refactor this function")
    helped = _into_a_closed_pipe("--help")
    assert [(d.returncode, d.stderr) for d in (explained, helped)] == [(1, ""), (0, "")]  # argparse ignores it
