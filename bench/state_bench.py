"""State backend benchmark (issue #9): one worker on Redis beside one on memory, `--workers 2` on
Redis, Redis round trips per request, Redis memory per conversation and per remembered delivery,
and what one Redis node sustains here.

    .venv/bin/python bench/state_bench.py [--duration 5] [--warmup 1]   (also run by `make bench`)

Set-up as bench/run.py (same config, same upstream stub, same load: wrk with bench/post.lua, every
request a new update_id from one of 1000 senders, 16 connections), plus `[state] backend = "redis"`
on STICKYROUTE_BENCH_REDIS_URL (default redis://127.0.0.1:6379/0) under a private key prefix that
is deleted at the end. Redis round trips are counted on the server: `INFO commandstats` call
deltas (every state step is one EVALSHA; a Telegram update has one delivery key, so no pipeline
carries more than one call) divided by the requests wrk completed. Redis CPU per request comes
from `INFO cpu` deltas. Then instructions per routed request on each backend under callgrind
(`bench/icount.py --redis`, one keep-alive connection; `--no-icount` skips it: it takes minutes), and the
two ratios the targets name: Redis over memory in instructions (target <= 1.3) and in proxy CPU at
16 connections (target <= 1.2). Output: stdout and results/state_bench.md (ignored by git).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

from redis import Redis

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import icount  # noqa: E402  (bench/icount.py: instructions per routed request)
import run  # noqa: E402  (bench/run.py: stub, wrk, process helpers)

OUT = run.ROOT / "results" / "state_bench.md"
CONNS = 16


def commandstats(client: Redis) -> dict[str, int]:
    info = client.info("commandstats")
    return {name.removeprefix("cmdstat_"): int(v["calls"]) for name, v in info.items()}


def redis_cpu(client: Redis) -> float:
    info = client.info("cpu")
    return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])


def measure(wrk: str | None, args: argparse.Namespace, procs: run.Procs, tmp: Path, stub: int, state: str,
            workers: int, client: Redis | None) -> dict[str, float]:
    port, admin = run.free_port(), run.free_port()
    cfg = tmp / f"proxy-{port}.toml"
    cfg.write_text(run.CONFIG.format(port=port, admin=admin, admin_token=run.ADMIN_TOKEN, up=f"http://127.0.0.1:{stub}", path=run.PATH,
                                     secret=run.SECRET) + state)
    cpus = run.pin("0") if workers == 1 else run.pin("0,1")  # two workers: both cores (wrk shares cpu1)
    cmd = cpus + [str(run.VENV_BIN / "stickyroute"), "serve", "--config", str(cfg), "--workers", str(workers)]
    proxy = procs.start(cmd, tmp / f"proxy-{port}.log")
    run.wait_ready(port, proxy, tmp / f"proxy-{port}.log")
    load = (lambda d, w: run.run_wrk(wrk, port, CONNS, d, w)) if wrk else (
        lambda d, w: run.run_python(port, CONNS, d, w))
    load(args.warmup, 0)
    children = subprocess.run(["pgrep", "-P", str(proxy.pid)], capture_output=True, text=True, check=False)
    pids = [proxy.pid] + [int(p) for p in children.stdout.split()]
    cpu_before = sum(run.cpu_seconds(p) for p in pids)
    calls_before = commandstats(client) if client else {}
    rcpu_before = redis_cpu(client) if client else 0.0
    point = load(args.duration, 0)
    row = {"rps": point.rps, "p50": point.p50_ms, "p99": point.p99_ms, "errors": point.errors,
           "cpu_us": (sum(run.cpu_seconds(p) for p in pids) - cpu_before) / max(point.requests, 1) * 1e6}
    if client:
        after = commandstats(client)
        calls = {k: after[k] - calls_before.get(k, 0) for k in after if after[k] != calls_before.get(k, 0)}
        calls.pop("info", None)
        # commandstats also counts the commands a script runs: a round trip is a top-level call
        row["round_trips"] = sum(calls.get(k, 0) for k in ("evalsha", "eval", "ping", "scan")) / max(point.requests, 1)
        row["redis_cpu_us"] = (redis_cpu(client) - rcpu_before) / max(point.requests, 1) * 1e6
        row["calls"] = calls  # type: ignore[assignment]
    log = (tmp / f"proxy-{port}.log").read_text(errors="replace")
    row["degraded"] = log.count("unavailable (")
    row["degraded_lines"] = [line for line in log.splitlines() if "unavailable (" in line][:3]  # type: ignore[assignment]
    procs.stop_all()
    return row


def capacity(client: Redis, prefix: str) -> dict[str, float]:
    """Average MEMORY USAGE of conversation and delivery hashes under `prefix` (sampled)."""
    sizes: dict[str, list[int]] = {"c": [], "d": []}
    for name in client.scan_iter(match=prefix + "*", count=1000):
        kind = name.decode()[len(prefix)]
        if kind in sizes and len(sizes[kind]) < 2000 and not name.endswith(b":lock"):
            sizes[kind].append(int(client.memory_usage(name, samples=0) or 0))
    return {k: sum(v) / len(v) for k, v in sizes.items() if v}


def redis_benchmark(url: str) -> dict[str, float]:
    """requests/s of redis-benchmark at 16 connections, pipeline 1: SET, and our ACQUIRE script."""
    binary = shutil.which("redis-benchmark")
    if binary is None:
        return {}
    from stickyroute.state.redis.scripts import ACQUIRE

    client = Redis.from_url(url)
    sha = client.script_load(ACQUIRE)
    host, port = client.connection_pool.connection_kwargs["host"], client.connection_pool.connection_kwargs["port"]
    base = [binary, "-h", str(host), "-p", str(port), "-c", str(CONNS), "-P", "1", "-n", "200000", "-q", "-r", "100000"]
    out = {}
    for label, command in (("SET", ["SET", "bench:{__rand_int__}", "x"]),
                           ("EVALSHA acquire", ["EVALSHA", sha, "2", "bench-c:{__rand_int__}", "bench-c:{__rand_int__}:l",
                                                "1", "3000"])):
        done = subprocess.run(base + command, capture_output=True, text=True, check=False)
        found = re.findall(r"([\d.]+) requests per second", done.stdout.replace("\r", "\n"))
        if not found:
            print(f"state bench: redis-benchmark {label}: {done.stdout[-300:]} {done.stderr[-300:]}", file=sys.stderr)
        out[label] = float(found[-1]) if found else 0.0
    for pattern in ("bench:*", "bench-c:*"):
        for name in client.scan_iter(match=pattern, count=1000):
            client.delete(name)
    client.close()
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--duration", type=float, default=5.0)
    ap.add_argument("--warmup", type=float, default=1.0)
    ap.add_argument("--rounds", type=int, default=2, help="memory / redis pairs, alternated (the machine is shared)")
    ap.add_argument("--no-icount", dest="icount", action="store_false", help="skip the callgrind counts")
    ap.add_argument("--icount-n", type=int, default=1000, help="requests counted (after as many warm-up ones)")
    args = ap.parse_args([] if __name__ != "__main__" else None)
    url = os.environ.get("STICKYROUTE_BENCH_REDIS_URL", "redis://127.0.0.1:6379/0")
    client = Redis.from_url(url)
    client.ping()
    prefix = f"bench-{uuid.uuid4().hex[:8]}:"
    state = f'\n[state]\nbackend = "redis"\nurl = "{url}"\nkey_prefix = "{prefix}"\n'
    wrk = run.ensure_wrk()
    procs = run.Procs()
    tmp = Path(tempfile.mkdtemp(prefix="stickyroute-state-bench-"))
    try:
        stub_port = run.free_port()
        stub = procs.start(run.pin("0") + [sys.executable, "-m", "uvicorn", "upstream_stub:app", "--app-dir", str(HERE),
                                           "--host", "127.0.0.1", "--port", str(stub_port), "--loop", "uvloop",
                                           "--http", "httptools", "--no-access-log", "--log-level", "warning"],
                           tmp / "stub.log")
        run.wait_ready(stub_port, stub, tmp / "stub.log")
        stub_procs = procs.items[:]
        rows = {}
        plan = [("memory, 1 worker", "", 1, None), ("redis, 1 worker", state, 1, client)] * args.rounds + [
            ("redis, --workers 2", state, 2, client)]
        for n, (label, st, workers, c) in enumerate(plan):
            procs.items = []
            name = f"{label} (round {n // 2 + 1})" if workers == 1 else label
            rows[name] = measure(wrk, args, procs, tmp, stub_port, st, workers, c)
            print(f"state bench: {name}: {rows[name]['rps']:,.0f} req/s", file=sys.stderr)
        procs.items = stub_procs
        sizes = capacity(client, prefix)
        bench = redis_benchmark(url)
        if args.icount:
            for backend in ("memory", "redis"):
                rows[f"icount {backend}"] = {"instructions": icount.measure(run.ROOT, "bench", False, backend == "redis",
                                                                            args.icount_n, args.icount_n)}
                print(f"state bench: {backend}: {rows[f'icount {backend}']['instructions'] / 1000:,.0f}k "
                      "instructions per routed request", file=sys.stderr)
    finally:
        procs.stop_all()
        for name in client.scan_iter(match=prefix + "*", count=1000):
            client.delete(name)
        shutil.rmtree(tmp, ignore_errors=True)
    report = render(rows, sizes, bench, wrk, args)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(report, encoding="utf-8")
    print(report)
    return 0


def render(rows: dict[str, dict[str, float]], sizes: dict[str, float], bench: dict[str, float], wrk: str | None,
           args: argparse.Namespace) -> str:
    memories = [r["rps"] for label, r in rows.items() if label.startswith("memory")]
    redises = [r["rps"] for label, r in rows.items() if label.startswith("redis, 1 worker")]
    memory = sum(memories) / len(memories)
    lines = ["# State backend benchmark (`bench/state_bench.py`)", "",
             f"Load: {'wrk' if wrk else 'Python load generator (wrk unavailable)'}, {CONNS} connections, "
             f"{args.duration:g} s after {args.warmup:g} s warm-up, bench/run.py's config and load "
             f"({os.cpu_count()} cores; load generator cpu1, stub + proxy cpu0).", "",
             "| backend | req/s | vs memory | p50 ms | p99 ms | proxy CPU µs/req | Redis round trips/req | "
             "Redis CPU µs/req | errors | fell back to memory |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    counted = {label.removeprefix("icount "): r.pop("instructions") for label, r in list(rows.items())
               if label.startswith("icount ")}
    rows = {label: r for label, r in rows.items() if not label.startswith("icount ")}
    for label, r in rows.items():
        rt = f"{r['round_trips']:.2f}" if "round_trips" in r else "-"
        rc = f"{r['redis_cpu_us']:.0f}" if "redis_cpu_us" in r else "-"
        lines.append(f"| {label} | {r['rps']:,.0f} | {r['rps'] / memory:.0%} | {r['p50']:.2f} | {r['p99']:.2f} | "
                     f"{r['cpu_us']:.0f} | {rt} | {rc} | {r['errors']:.0f} | {r['degraded']:.0f} times |")
    one = next(r for label, r in rows.items() if label.startswith("redis, 1 worker"))
    for label, r in rows.items():
        for line in r.get("degraded_lines") or []:  # type: ignore[union-attr]
            lines.append(f"- {label}: `{line}`")
    calls = one.get("calls") or {}
    per = ", ".join(f"{k} {v / max(one['rps'] * args.duration, 1):.2f}" for k, v in sorted(calls.items()))  # type: ignore[union-attr]
    lines += ["", f"- Mean of the alternated rounds: memory {memory:,.0f} req/s, Redis one worker "
              f"{sum(redises) / len(redises):,.0f} req/s: **{sum(redises) / len(redises) / memory:.0%}** of memory "
              "(target >= 75%); 'vs memory' above divides by this memory mean.",
              f"- Redis commands per request (1 worker, scripts' inner commands included): {per}.",
              f"- Redis MEMORY USAGE: conversation hash {sizes.get('c', 0):.0f} B, delivery hash with its stored "
              f"answer {sizes.get('d', 0):.0f} B (this bench's 11-byte answer).",
              f"- redis-benchmark, {CONNS} connections, pipeline 1: " + ", ".join(
                  f"{k} {v:,.0f} req/s" for k, v in bench.items()) + "."]
    cpu_memory = [r["cpu_us"] for label, r in rows.items() if label.startswith("memory")]
    cpu_redis = [r["cpu_us"] for label, r in rows.items() if label.startswith("redis, 1 worker")]
    lines.append(f"- Proxy CPU per routed request at {CONNS} connections: Redis "
                 f"{sum(cpu_redis) / len(cpu_redis):,.0f} µs against memory {sum(cpu_memory) / len(cpu_memory):,.0f} µs: "
                 f"**{sum(cpu_redis) / len(cpu_redis) / (sum(cpu_memory) / len(cpu_memory)):.2f}x** (target <= 1.2x).")
    if counted:
        lines.append(f"- Instructions per routed request (callgrind, one connection): Redis "
                     f"{counted['redis'] / 1000:,.0f}k against memory {counted['memory'] / 1000:,.0f}k: "
                     f"**{counted['redis'] / counted['memory']:.2f}x** (target <= 1.3x).")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    raise SystemExit(main())
