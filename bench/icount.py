"""Instructions per routed request of the whole `stickyroute serve` process, counted by callgrind
(repeatable whatever else the machine runs, unlike CPU time on a shared machine).

    .venv/bin/python bench/icount.py [--tree PATH] [--warm 1000] [--n 1000] [--state redis]

Starts the upstream stub (uvicorn + bench/upstream_stub.py, outside valgrind) and the proxy on
make bench's config (bench/run.py CONFIG) under `valgrind --tool=callgrind`, sends `--warm`
routed requests on one keep-alive connection (new update_id each, one of 1,000 senders), zeroes
the counters (`callgrind_control -z`), sends `--n` more, dumps, and prints the instructions per
request. `--tree PATH` runs another checkout's `proxy/` with this venv (PYTHONPATH), e.g. a
worktree of an earlier commit, for a before/after pair. `--state redis` puts the state on
STICKYROUTE_BENCH_REDIS_URL (default redis://127.0.0.1:6379/0) under a private key prefix, deleted
at the end (`make bench-state` runs both backends). Takes a few minutes (valgrind runs Python
about 50 times slower). Output: stdout and results/bench/icount.txt (appended).
"""

from __future__ import annotations

import argparse
import http.client
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run as bench  # bench/run.py: config, body, ports

OUT = bench.ROOT / "results" / "bench" / "icount.txt"


def bodies(n: int, start: int) -> list[bytes]:
    """`n` variants of bench/body.json: new update_id each, sender one of 1,000 (like post.lua)."""
    body = bench.BODY.read_bytes().strip()
    head, _, rest = body.partition(b'"update_id":')
    tail = rest[len(rest) - len(rest.lstrip(b"0123456789")):]
    from_head, _, from_rest = tail.partition(b'"from":{"id":')
    from_tail = from_rest[len(from_rest) - len(from_rest.lstrip(b"0123456789")):]
    return [head + b'"update_id":' + str(10**9 + i).encode() + from_head + b'"from":{"id":'
            + str(5550000000 + i % 1000).encode() + from_tail for i in range(start, start + n)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tree", default=str(bench.ROOT), help="checkout whose stickyroute/ (or proxy/) is measured (default: this one)")
    ap.add_argument("--warm", type=int, default=1000)
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--state", choices=("memory", "redis"), default="memory", help="the state backend")
    args = ap.parse_args(argv)
    per_request = measure(Path(args.tree).resolve(), args.warm, args.n, args.state)
    line = (f"{Path(args.tree).resolve()} ({args.state}): {per_request / 1000:,.0f}k instructions per routed request "
            f"(n={args.n}, warm={args.warm})")
    print(line)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    with OUT.open("a") as f:
        f.write(line + "\n")
    return 0


def measure(tree: Path, warm: int, n: int, state: str = "memory") -> float:
    """Instructions per routed request of `tree`'s proxy on `state` (memory | redis)."""
    prefix = f"icount-{uuid.uuid4().hex[:8]}:"
    url = os.environ.get("STICKYROUTE_BENCH_REDIS_URL", "redis://127.0.0.1:6379/0")
    extra = f'\n[state]\nbackend = "redis"\nurl = "{url}"\nkey_prefix = "{prefix}"\nop_timeout_ms = 2000\n' if (
        state == "redis") else ""
    tmp = Path(tempfile.mkdtemp(prefix="stickyroute-icount-"))
    up, port, admin = bench.free_port(), bench.free_port(), bench.free_port()
    cfg = tmp / "proxy.toml"
    cfg.write_text(bench.CONFIG.format(port=port, admin=admin, up=f"http://127.0.0.1:{up}", path=bench.PATH,
                                       secret=bench.SECRET, admin_token=bench.ADMIN_TOKEN) + extra)
    procs = bench.Procs()
    try:
        procs.start([sys.executable, "-m", "uvicorn", "--app-dir", str(bench.HERE), "upstream_stub:app", "--port",
                     str(up), "--log-level", "warning", "--no-access-log"], tmp / "stub.log")
        out = tmp / "callgrind.out"
        proxy = procs.start(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
                             str(bench.VENV_BIN / "stickyroute"), "serve", "--config", str(cfg)], tmp / "proxy.log",
                            env=dict(os.environ, PYTHONPATH=str(tree)))
        conn = connect(port, proxy, tmp / "proxy.log")
        headers = {"Content-Type": "application/json", "X-Telegram-Bot-Api-Secret-Token": bench.SECRET}
        for part, (start, count) in enumerate(((0, warm), (warm, n))):
            if part == 1:
                subprocess.run(["callgrind_control", "-z", str(proxy.pid)], check=True, stdout=subprocess.DEVNULL)
            for body in bodies(count, start):
                conn.request("POST", bench.PATH, body=body, headers=headers)
                response = conn.getresponse()
                response.read()
                if response.status != 200:
                    raise SystemExit(f"icount: the proxy answered {response.status}")
        subprocess.run(["callgrind_control", "-d", str(proxy.pid)], check=True, stdout=subprocess.DEVNULL)
        total = read_total(tmp)
        proxy.send_signal(signal.SIGINT)
    finally:
        procs.stop_all()
        if state == "redis":
            from redis import Redis

            with Redis.from_url(url) as client:
                for name in client.scan_iter(match=prefix + "*", count=1000):
                    client.delete(name)
    return total / n


def connect(port: int, proxy: subprocess.Popen, log: Path) -> http.client.HTTPConnection:
    """A keep-alive connection once the (slow, under valgrind) proxy listens."""
    deadline = time.monotonic() + 180
    while True:
        if proxy.poll() is not None:
            raise SystemExit(f"icount: the proxy exited:\n{log.read_text(errors='replace')[-3000:]}")
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
            conn.connect()
            return conn
        except OSError:
            if time.monotonic() > deadline:
                raise SystemExit("icount: the proxy never listened") from None
            time.sleep(0.5)


def read_total(tmp: Path) -> int:
    """The instruction total of the dump written after the zeroing (the newest callgrind file)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        dumps = sorted((p for p in tmp.glob("callgrind.out.*")), key=lambda p: p.stat().st_mtime)
        for dump in reversed(dumps):
            for text in dump.read_text(errors="replace").splitlines():
                if text.startswith(("summary:", "totals:")):
                    return int(text.split()[1])
        time.sleep(0.5)
    raise SystemExit("icount: no callgrind dump found")


if __name__ == "__main__":
    raise SystemExit(main())
