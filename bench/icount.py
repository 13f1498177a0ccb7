"""Instructions per routed request of the whole `stickyroute serve` process, counted by callgrind
(repeatable whatever else the machine runs, unlike CPU time on a shared machine).

    .venv/bin/python bench/icount.py [--tree PATH] [--warm 1000] [--n 1000]
                                     [--config bench|shipped|one-agent] [--first] [--redis] [--all]

Starts the upstream stub (uvicorn + bench/upstream_stub.py, outside valgrind) and the proxy on
make bench's config (bench/run.py CONFIG) under `valgrind --tool=callgrind`, sends `--warm`
routed requests on one keep-alive connection (new update_id each, one of 1,000 senders), zeroes
the counters (`callgrind_control -z`), sends `--n` more, dumps, and prints the instructions per
request. `--config`: make bench's config (default), the shipped config/proxy.toml on /telegram
(every agent at the stub) or a one-agent config (one Telegram channel, Layer 1 only);
`--first`: every request from a new sender (a first message: the keyword classifier decides);
`--redis`: the state on the local Redis (127.0.0.1:6379) under a fresh key prefix; `--all`: the
rows of docs/performance.md in turn. `--tree PATH` runs another checkout's `proxy/` with this venv (PYTHONPATH), e.g. a
worktree of an earlier commit, for a before/after pair. Takes a few minutes (valgrind runs
Python about 50 times slower). Output: stdout and results/bench/icount.txt (appended).
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
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run as bench  # bench/run.py: config, body, ports

OUT = bench.ROOT / "results" / "bench" / "icount.txt"


ONE_AGENT = """
[server]
host = "127.0.0.1"
port = {port}
[admin]
host = "127.0.0.1"
port = {admin}
token = "{admin_token}"
[agents.support]
url = "{up}"
[channels.telegram]
path = "/telegram"
default_agent = "support"
"""
ROWS = (("bench", False, False), ("shipped", False, False), ("shipped", True, False), ("one-agent", False, False),
        ("shipped", False, True), ("shipped", True, True))
"""`--all`: (config, first, redis) of each row of docs/performance.md."""


def bodies(n: int, start: int, first: bool = False) -> list[bytes]:
    """`n` variants of bench/body.json: new update_id each, sender one of 1,000 (like post.lua),
    or with `first` a new sender each (every message the first of its conversation)."""
    body = bench.BODY.read_bytes().strip()
    head, _, rest = body.partition(b'"update_id":')
    tail = rest[len(rest) - len(rest.lstrip(b"0123456789")):]
    from_head, _, from_rest = tail.partition(b'"from":{"id":')
    from_tail = from_rest[len(from_rest) - len(from_rest.lstrip(b"0123456789")):]
    return [head + b'"update_id":' + str(10**9 + i).encode() + from_head + b'"from":{"id":'
            + str(5550000000 + (i if first else i % 1000)).encode() + from_tail for i in range(start, start + n)]


def config_text(kind: str, port: int, admin: int, up: str, redis_prefix: str | None) -> tuple[str, str]:
    """(config text, request path) of a measured config."""
    if kind == "bench":
        text, path = bench.CONFIG.format(port=port, admin=admin, up=up, path=bench.PATH, secret=bench.SECRET,
                                         admin_token=bench.ADMIN_TOKEN), bench.PATH
    elif kind == "one-agent":
        text, path = ONE_AGENT.format(port=port, admin=admin, up=up, admin_token=bench.ADMIN_TOKEN), "/telegram"
    else:
        import tomlkit
        shipped = bench.ROOT / "config" / "proxy.toml"
        doc = tomlkit.parse(shipped.read_text())
        for agent in doc["agents"].values():
            agent["url"] = up
            if "rules" in agent and not str(agent["rules"]).startswith("builtin:"):
                agent["rules"] = str((shipped.parent / str(agent["rules"])).resolve())
        doc["server"]["port"] = port
        doc["admin"]["port"] = admin
        doc["admin"]["token"] = bench.ADMIN_TOKEN
        text, path = tomlkit.dumps(doc), "/telegram"
    if redis_prefix is not None:
        if "[state]" in text:
            text = text.replace("[state]", f'[state]\nurl = "redis://127.0.0.1:6379/0"\nkey_prefix = "{redis_prefix}"', 1)
            text = text.replace('backend = "memory"', 'backend = "redis"', 1)
        else:
            text += f'\n[state]\nbackend = "redis"\nurl = "redis://127.0.0.1:6379/0"\nkey_prefix = "{redis_prefix}"\n'
    return text, path


def measure(tree: Path, kind: str, first: bool, redis: bool, warm: int, n: int) -> float:
    """Instructions per routed request (whole process) of one config; refuses a run whose /stats
    shows any redelivery (every request must be a new update)."""
    tmp = Path(tempfile.mkdtemp(prefix="stickyroute-icount-"))
    up, port, admin = bench.free_port(), bench.free_port(), bench.free_port()
    prefix = f"stickyroute-icount-{os.getpid()}-{time.time_ns()}" if redis else None
    text, path = config_text(kind, port, admin, f"http://127.0.0.1:{up}", prefix)
    cfg = tmp / "proxy.toml"
    cfg.write_text(text)
    procs = bench.Procs()
    try:
        procs.start([sys.executable, "-m", "uvicorn", "--app-dir", str(bench.HERE), "upstream_stub:app", "--port",
                     str(up), "--log-level", "warning", "--no-access-log"], tmp / "stub.log")
        out = tmp / "callgrind.out"
        proxy = procs.start(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
                             str(bench.VENV_BIN / "stickyroute"), "serve", "--config", str(cfg)], tmp / "proxy.log",
                            env=dict(os.environ, PYTHONPATH=str(tree)))
        conn = connect(port, proxy, tmp / "proxy.log")
        headers = {"Content-Type": "application/json"}
        if kind == "bench":
            headers["X-Telegram-Bot-Api-Secret-Token"] = bench.SECRET
        for part, (start, count) in enumerate(((0, warm), (warm, n))):
            if part == 1:
                subprocess.run(["callgrind_control", "-z", str(proxy.pid)], check=True, stdout=subprocess.DEVNULL)
            for body in bodies(count, start + (10**6 if first else 0), first):
                conn.request("POST", path, body=body, headers=headers)
                response = conn.getresponse()
                response.read()
                if response.status != 200:
                    raise SystemExit(f"icount: the proxy answered {response.status}")
        subprocess.run(["callgrind_control", "-d", str(proxy.pid)], check=True, stdout=subprocess.DEVNULL)
        total = read_total(tmp)
        redeliveries = bench.redelivered(bench.admin_stats(admin))
        if redeliveries:
            raise SystemExit(f"icount: {redeliveries} redelivered request(s) in /stats: run refused")
        proxy.send_signal(signal.SIGINT)
    finally:
        procs.stop_all()
        if prefix is not None:
            _drop_keys(prefix)
    return total / n


def _drop_keys(prefix: str) -> None:
    """Delete this run's keys (its own prefix only)."""
    import redis as redis_sync
    client = redis_sync.Redis(host="127.0.0.1", port=6379)
    try:
        for key in client.scan_iter(match=f"{prefix}*", count=1000):
            client.delete(key)
    finally:
        client.close()


def label(kind: str, first: bool, redis: bool) -> str:
    return f"{kind}{', redis' if redis else ''}, {'first message' if first else 'continuation'}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tree", default=str(bench.ROOT), help="checkout whose stickyroute/ (or proxy/) is measured (default: this one)")
    ap.add_argument("--warm", type=int, default=1000)
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--config", choices=("bench", "shipped", "one-agent"), default="bench")
    ap.add_argument("--first", action="store_true", help="every request from a new sender")
    ap.add_argument("--redis", action="store_true", help="state on the local Redis")
    ap.add_argument("--all", action="store_true", help="every row of docs/performance.md")
    args = ap.parse_args()
    tree = Path(args.tree).resolve()
    rows = ROWS if args.all else ((args.config, args.first, args.redis),)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    for kind, first, redis in rows:
        per = measure(tree, kind, first, redis, args.warm, args.n)
        line = (f"{tree}: {label(kind, first, redis)}: {per / 1000:,.0f}k instructions per routed request "
                f"(n={args.n}, warm={args.warm})")
        print(line, flush=True)
        with OUT.open("a") as f:
            f.write(line + "\n")
    return 0


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
