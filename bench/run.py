"""`make bench`: the proxy's throughput and latency beside the same load sent straight to the
upstream stub, in one run; then the keyword-gate, route-store and `learn` benchmarks.

    .venv/bin/python bench/run.py [--duration 5] [--warmup 1] [--conns 1,16,64] [--no-extra]

Set-up (loopback only, every process started here is stopped by PID at the end):
- upstream stub: nginx answering 200 {"ok":true} when nginx is installed, else uvicorn + the raw
  ASGI app bench/upstream_stub.py;
- the proxy: `stickyroute serve` on a generated config (temp dir): one Telegram channel on
  /webhook/bench with `secret_token`, `auto_route = "sticky_heuristic"` and 6 agents with keywords,
  classifier provider "heuristic" (no network), admin listener on a free port. Every request is
  authenticated, parsed, resolved, scored and routed, then forwarded;
- load: wrk (installed with apt-get when missing and running as root) with bench/post.lua, which
  gives every request a new update_id (the redelivery memory never answers from memory) from one
  of 1000 senders; one extra row sends the identical body every time (redelivery-memory path).
  Without wrk, a small asyncio keep-alive load generator is used (noted in the output; it costs
  more CPU per request than wrk, so absolute numbers are lower).
- CPU pinning (2 cores): load generator on cpu1, stub and proxy on cpu0 (like ../shared/proxy-bench).

The routed rows must be routed: after them the proxy's /stats must count no redelivery (a
repeated update id would be answered from the delivery log), else the run is refused.
Targets (issue #2, routing active): >= 2,000 req/s at 16 connections; overhead p50 at 1
connection (proxy p50 - direct p50) < 0.6 ms. Measured and reported, never asserted.
Output: a table on stdout and in results/bench/proxy.md (ignored by git; docs/bench/proxy.md is
updated by hand from it).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
VENV_BIN = Path(sys.executable).parent
OUT = ROOT / "results" / "bench" / "proxy.md"
"""Written on every run; `results/` is ignored by git (docs/bench/ holds the hand-updated copies)."""
BODY = HERE / "body.json"
SECRET = "bench-secret-token-invented"
ADMIN_TOKEN = "bench-admin-token-invented"
PATH = "/webhook/bench"
TARGET_RPS_16 = 2000.0
TARGET_OVERHEAD_MS = 0.6

CONFIG = """
[server]
host = "127.0.0.1"
port = {port}
[admin]
host = "127.0.0.1"
port = {admin}
token = "{admin_token}"
[upstream]
max_connections = 100
[classifier]
provider = "heuristic"
[agents.support]
url = "{up}"
keywords = ["invoice", "refund", "order status", "late fee"]
weak_keywords = ["account", "help"]
[agents.coder]
url = "{up}"
keywords = ["pull request", "json", "regex", "unit test"]
weak_keywords = ["code", "function", "path"]
[agents.ops]
url = "{up}"
keywords = ["kubernetes", "deploy", "outage", "load testing"]
weak_keywords = ["server", "proxy", "webhook"]
[agents.writer]
url = "{up}"
keywords = ["lorem ipsum", "proofread", "blog post", "headline"]
weak_keywords = ["text", "message"]
[agents.researcher]
url = "{up}"
keywords = ["literature review", "dataset", "benchmark"]
weak_keywords = ["paper", "typical"]
[agents.travel]
url = "{up}"
keywords = ["flight", "hotel", "itinerary"]
weak_keywords = ["trip"]
[channels.bench]
type = "telegram"
path = "{path}"
default_agent = "support"
secret_token = "{secret}"
bot_username = "example_bench_bot"
[channels.bench.overrides]
auto_route = "sticky_heuristic"
"""

NGINX_STUB = """
worker_processes 1;
error_log {prefix}/error.log warn;
pid {prefix}/nginx.pid;
events {{ worker_connections 4096; }}
http {{
    access_log off;
    client_body_temp_path {prefix}/cb; proxy_temp_path {prefix}/px; fastcgi_temp_path {prefix}/fc;
    uwsgi_temp_path {prefix}/uw; scgi_temp_path {prefix}/sc;
    keepalive_requests 10000000;
    keepalive_timeout 60s;
    server {{
        listen 127.0.0.1:{port};
        location / {{ default_type application/json; return 200 '{{"ok":true}}'; }}
    }}
}}
"""


@dataclass
class Point:
    rps: float
    p50_ms: float
    p99_ms: float
    errors: int
    requests: int = 0
    cpu_us_per_req: float | None = None  # CPU time (user+sys) of the measured server per request


def cpu_seconds(pid: int) -> float:
    """utime + stime of a process (seconds), from /proc; 0.0 when unavailable."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return 0.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pin(cpu: str) -> list[str]:
    return ["taskset", "-c", cpu] if shutil.which("taskset") and (os.cpu_count() or 1) >= 2 else []


def ensure_wrk() -> str | None:
    """Path of wrk; installed with apt-get when missing and running as root; None when unavailable."""
    found = shutil.which("wrk")
    if found:
        return found
    if hasattr(os, "geteuid") and os.geteuid() == 0 and shutil.which("apt-get"):
        print("bench: wrk missing, installing it with apt-get", file=sys.stderr)
        subprocess.run(["apt-get", "install", "-y", "wrk"], check=False, stdout=subprocess.DEVNULL)
        found = shutil.which("wrk")
        if not found:
            subprocess.run(["apt-get", "update"], check=False, stdout=subprocess.DEVNULL)
            subprocess.run(["apt-get", "install", "-y", "wrk"], check=False, stdout=subprocess.DEVNULL)
            found = shutil.which("wrk")
    return found


class Procs:
    """Processes started by this script, stopped by PID (and process group) on exit."""

    def __init__(self) -> None:
        self.items: list[subprocess.Popen] = []

    def start(self, cmd: list[str], log: Path, env: dict | None = None) -> subprocess.Popen:
        p = subprocess.Popen(cmd, stdout=open(log, "wb"), stderr=subprocess.STDOUT, env=env,
                             start_new_session=True, cwd=ROOT)
        self.items.append(p)
        return p

    def stop_all(self) -> None:
        for p in reversed(self.items):
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGTERM)
                except ProcessLookupError:
                    continue
                try:
                    p.wait(5)
                except subprocess.TimeoutExpired:
                    os.killpg(p.pid, signal.SIGKILL)
                    p.wait()
        self.items.clear()


def wait_ready(port: int, proc: subprocess.Popen, log: Path, path: str = PATH) -> None:
    body = BODY.read_bytes()
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"bench: process exited during start-up:\n{log.read_text(errors='replace')[-3000:]}")
        try:
            req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=body, method="POST",
                                         headers={"Content-Type": "application/json",
                                                  "X-Telegram-Bot-Api-Secret-Token": SECRET})
            with urllib.request.urlopen(req, timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.1)
    raise SystemExit(f"bench: not ready on :{port}\n{log.read_text(errors='replace')[-3000:]}")


_RUNS = [0]


def _id_base() -> str:
    """A fresh update_id range for each load run (ids never repeat within one proxy process)."""
    _RUNS[0] += 1
    return str(1_000_000_000 * _RUNS[0])


def _whole_s(seconds: float) -> int:
    """wrk's -d takes whole seconds ("0.5s" is an error): a fraction is rounded up."""
    return max(1, math.ceil(seconds))


def run_wrk(wrk: str, port: int, conns: int, duration: float, warmup: float, static: bool = False) -> Point:
    env = dict(os.environ, BENCH_BODY_FILE=str(BODY), BENCH_SECRET=SECRET)
    if static:
        env["BENCH_STATIC"] = "1"
    url = f"http://127.0.0.1:{port}{PATH}"
    base = pin("1") + [wrk, "-t1", f"-c{conns}", "--timeout", "5s", "-s", str(HERE / "post.lua")]
    if warmup > 0:
        subprocess.run(base + [f"-d{_whole_s(warmup)}s", url], env=dict(env, BENCH_ID_BASE=_id_base()),
                       capture_output=True, check=False)
    out = subprocess.run(base + [f"-d{_whole_s(duration)}s", url], env=dict(env, BENCH_ID_BASE=_id_base()),
                         capture_output=True, text=True, check=False)
    line = next((ln for ln in out.stdout.splitlines() if ln.startswith("RESULT")), None)
    if line is None:
        raise SystemExit(f"bench: wrk gave no RESULT line:\n{out.stdout}\n{out.stderr}")
    f = dict(kv.split("=") for kv in line.split()[1:])
    errors = sum(int(f[k]) for k in ("err_connect", "err_read", "err_write", "err_timeout", "non2xx3xx"))
    return Point(float(f["rps"]), int(f["p50_us"]) / 1000, int(f["p99_us"]) / 1000, errors, int(f["requests"]))


async def _py_load(port: int, conns: int, seconds: float, static: bool) -> tuple[int, list[float], int]:
    """Fallback load generator: `conns` keep-alive HTTP/1.1 connections POSTing varied bodies."""
    template = BODY.read_bytes().strip()
    head, _, rest = template.partition(b'"update_id":')
    digits = len(rest) - len(rest.lstrip(b"0123456789"))
    tail = rest[digits:]
    lat: list[float] = []
    errors = 0
    counter = [int(_id_base())]
    stop = time.perf_counter() + seconds

    async def conn() -> None:
        nonlocal errors
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        while time.perf_counter() < stop:
            counter[0] += 1
            body = template if static else head + b'"update_id":' + str(10**9 + counter[0]).encode() + tail
            req = (f"POST {PATH} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                   f"X-Telegram-Bot-Api-Secret-Token: {SECRET}\r\nContent-Length: {len(body)}\r\n\r\n").encode() + body
            t0 = time.perf_counter()
            writer.write(req)
            status_line = await reader.readline()
            length = 0
            while (line := await reader.readline()) not in (b"\r\n", b""):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            await reader.readexactly(length)
            lat.append(time.perf_counter() - t0)
            if not status_line.split()[1].startswith(b"2"):
                errors += 1
        writer.close()

    await asyncio.gather(*(conn() for _ in range(conns)))
    return len(lat), lat, errors


def run_python(port: int, conns: int, duration: float, warmup: float, static: bool = False) -> Point:
    if warmup > 0:
        asyncio.run(_py_load(port, conns, warmup, static))
    n, lat, errors = asyncio.run(_py_load(port, conns, duration, static))
    lat.sort()
    q = statistics.quantiles(lat, n=100) if len(lat) > 1 else [lat[0]] * 99
    return Point(n / duration, q[49] * 1000, q[98] * 1000, errors, n)


def redelivered(stats: object) -> int:
    """The requests a /stats document counts as redeliveries (every `redelivery` count, wherever it
    sits: requests by reason, decisions by reason); 0 when there are none."""
    if isinstance(stats, dict):
        return sum(v if k == "redelivery" and isinstance(v, int) else redelivered(v) for k, v in stats.items())
    if isinstance(stats, list):
        return sum(redelivered(v) for v in stats)
    return 0


def admin_stats(admin: int) -> dict:
    try:
        request = urllib.request.Request(f"http://127.0.0.1:{admin}/stats",
                                         headers={"authorization": f"Bearer {ADMIN_TOKEN}"})
        with urllib.request.urlopen(request, timeout=2) as r:
            return json.loads(r.read())
    except OSError as exc:
        return {"error": str(exc)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--duration", type=float, default=5.0, help="seconds measured per point")
    ap.add_argument("--warmup", type=float, default=1.0, help="seconds of discarded load before each point")
    ap.add_argument("--conns", default="1,16,64")
    ap.add_argument("--no-extra", action="store_true", help="skip the keyword, memory and learn benchmarks")
    ap.add_argument("--proxy-cmd", help="experiments: command template replacing `stickyroute serve` "
                    "({config}, {port} filled in), e.g. a launcher that runs the same serve() differently")
    ap.add_argument("--out", default=str(OUT), help="markdown file for the table (default results/bench/proxy.md)")
    args = ap.parse_args()
    conns = [int(c) for c in args.conns.split(",")]

    wrk = ensure_wrk()
    generator = f"wrk ({wrk}, 1 thread, bench/post.lua)" if wrk else (
        "Python asyncio load generator (wrk unavailable: NOT comparable with wrk figures; "
        "the generator itself is the bottleneck at high concurrency)")
    if not wrk:
        print(f"bench: NOTE: {generator}", file=sys.stderr)

    def load(port: int, c: int, static: bool = False, pid: int | None = None) -> Point:
        warm = args.warmup
        if warm > 0:  # warm-up outside the CPU accounting
            if wrk:
                run_wrk(wrk, port, c, warm, 0, static)
            else:
                run_python(port, c, warm, 0, static)
        before = cpu_seconds(pid) if pid else 0.0
        point = run_wrk(wrk, port, c, args.duration, 0, static) if wrk else run_python(port, c, args.duration, 0, static)
        if pid and point.requests:
            point.cpu_us_per_req = (cpu_seconds(pid) - before) / point.requests * 1e6
        return point

    procs = Procs()
    tmp = Path(tempfile.mkdtemp(prefix="stickyroute-bench-"))
    try:
        stub_port, proxy_port, admin_port = free_port(), free_port(), free_port()
        nginx = shutil.which("nginx")
        if nginx:
            (tmp / "nginx").mkdir()
            conf = tmp / "nginx" / "nginx.conf"
            conf.write_text(NGINX_STUB.format(prefix=tmp / "nginx", port=stub_port))
            stub_cmd = pin("0") + [nginx, "-e", "stderr", "-c", str(conf), "-g", "daemon off;"]
            stub_name = "nginx (return 200)"
        else:
            stub_cmd = pin("0") + [sys.executable, "-m", "uvicorn", "upstream_stub:app", "--app-dir", str(HERE),
                                   "--host", "127.0.0.1", "--port", str(stub_port), "--loop", "uvloop",
                                   "--http", "httptools", "--no-access-log", "--log-level", "warning"]
            stub_name = "uvicorn + raw ASGI (bench/upstream_stub.py)"
        stub = procs.start(stub_cmd, tmp / "stub.log")
        wait_ready(stub_port, stub, tmp / "stub.log")

        cfg = tmp / "proxy.toml"
        cfg.write_text(CONFIG.format(port=proxy_port, admin=admin_port, admin_token=ADMIN_TOKEN, up=f"http://127.0.0.1:{stub_port}",
                                     path=PATH, secret=SECRET))
        proxy_cmd = pin("0") + [str(VENV_BIN / "stickyroute"), "serve", "--config", str(cfg),
                                "--host", "127.0.0.1", "--port", str(proxy_port)]
        if args.proxy_cmd:
            proxy_cmd = pin("0") + [a.format(config=cfg, port=proxy_port) for a in args.proxy_cmd.split()]
        proxy_log = tmp / "proxy.log"
        proxy = procs.start(proxy_cmd, proxy_log)
        wait_ready(proxy_port, proxy, proxy_log)

        rows = []
        for c in conns:
            direct = load(stub_port, c)
            via = load(proxy_port, c, pid=proxy.pid)
            rows.append((c, direct, via))
            print(f"bench: c={c}: direct {direct.rps:,.0f} req/s, proxy {via.rps:,.0f} req/s", file=sys.stderr)
        repeated = redelivered(admin_stats(admin_port))
        if repeated:  # an update id came twice: answered from the delivery log, not routed
            raise SystemExit(f"bench: {repeated} redelivered request(s) in /stats after the routed rows: run refused")
        static_c = 16 if 16 in conns else conns[-1]
        static = load(proxy_port, static_c, static=True, pid=proxy.pid)
        stats = admin_stats(admin_port)
    finally:
        procs.stop_all()
        log_size = (tmp / "proxy.log").stat().st_size if (tmp / "proxy.log").exists() else 0
        shutil.rmtree(tmp, ignore_errors=True)

    report = render(rows, static_c, static, stats, generator, stub_name, args, log_size)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(report, encoding="utf-8")
    print(report)
    if not args.no_extra:
        sys.path.insert(0, str(HERE))
        import keywords_bench
        import learn_bench
        import memory_bench
        import state_bench

        keywords_bench.main()
        memory_bench.main()
        state_bench.main()
        learn_bench.main([])
    return 0


def _cpu(p: Point) -> str:
    return f"{p.cpu_us_per_req:.0f}" if p.cpu_us_per_req is not None else "-"


def render(rows, static_c, static, stats, generator, stub_name, args, log_size) -> str:
    lines = [
        "# Proxy benchmark (`make bench`)",
        "",
        f"Load: {generator}, {args.duration:g} s per point after {args.warmup:g} s warm-up; every request a new "
        "`update_id` from one of 1000 senders (routing path active: secret check, parse, resolve, keyword "
        "gate, sticky route, forward). Upstream stub: " + stub_name + ". Proxy: `stickyroute serve` "
        "(channel `sticky_heuristic`, classifier `heuristic`, decision log at INFO to a file"
        + (f"; launched with `{args.proxy_cmd}`" if args.proxy_cmd else "") + "). "
        f"Pinning: load generator cpu1, stub + proxy cpu0 ({os.cpu_count()} cores).",
        "",
        "| conns | direct req/s | proxy req/s | proxy/direct | direct p50 ms | direct p99 ms | proxy p50 ms | proxy p99 ms | proxy CPU µs/req | errors (d/p) |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for c, d, p in rows:
        lines.append(f"| {c} | {d.rps:,.0f} | {p.rps:,.0f} | {p.rps / d.rps:.3f} | {d.p50_ms:.3f} | {d.p99_ms:.3f} | "
                     f"{p.p50_ms:.3f} | {p.p99_ms:.3f} | {_cpu(p)} | {d.errors}/{p.errors} |")
    lines.append(f"| {static_c} (same body: redelivery memory) | | {static.rps:,.0f} | | | | {static.p50_ms:.3f} | "
                 f"{static.p99_ms:.3f} | {_cpu(static)} | -/{static.errors} |")
    lines.append("")
    one = next(((d, p) for c, d, p in rows if c == 1), None)
    sixteen = next((p for c, _, p in rows if c == 16), None)
    if one:
        overhead = one[1].p50_ms - one[0].p50_ms
        ok = "met" if overhead < TARGET_OVERHEAD_MS else "MISSED"
        lines.append(f"- Overhead p50 at 1 connection: **{overhead:.3f} ms** (target < {TARGET_OVERHEAD_MS} ms: {ok}).")
    if sixteen:
        ok = "met" if sixteen.rps >= TARGET_RPS_16 else "MISSED"
        lines.append(f"- Proxy at 16 connections: **{sixteen.rps:,.0f} req/s** (target >= {TARGET_RPS_16:,.0f}: {ok}).")
    decisions = stats.get("decisions", {}).get("bench", {}) if isinstance(stats, dict) else {}
    if decisions:
        total = sum(decisions.values())
        top = ", ".join(f"{r} {n / total:.1%}" for r, n in sorted(decisions.items(), key=lambda x: -x[1]))
        lines.append(f"- Routing decisions during the run (admin /stats): {total:,} ({top}); "
                     f"live routes: {stats.get('routes', {}).get('bench')}.")
    lines.append("- Proxy CPU µs/req = the proxy process's user+sys CPU time during the point / requests: the "
                 "figure least disturbed by other load on the machine (1e6 / it = req/s the proxy could do on one "
                 "free core).")
    lines.append(f"- Proxy log written during the run: {log_size / 1e6:.1f} MB (one decision line per request).")
    lines.append("- Command: `make bench` (= `.venv/bin/python bench/run.py`). Absolute numbers drift on a shared "
                 "machine: compare rows of one run.")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    raise SystemExit(main())
