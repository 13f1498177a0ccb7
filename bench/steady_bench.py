"""Steady state: proxy CPU per routed request of a fresh process against the same process after
`--updates` routed updates (default 500,000: the memory delivery log full to its bound), and its
RSS along the way.

    .venv/bin/python bench/steady_bench.py [--updates 500000] [--conns 16] [--window 10] [--config shipped]

Set-up as `make bench` (bench/run.py): the upstream stub (nginx `return 200`, else uvicorn + the
raw ASGI stub) and `stickyroute serve` pinned to cpu0, wrk with bench/post.lua pinned to cpu1,
every request a new update (its own id range per wrk invocation) from one of 1,000 senders. The
config is the shipped config/proxy.toml on /telegram with every agent at the stub (`--config
bench`: make bench's). Rows: a measured window of `--window` seconds on the fresh process, then
load in chunks until `--updates` requests were answered (RSS after each chunk), then the same
window again. Refuses to report a run whose /stats count any redelivery (a repeated update id
would be answered from the delivery log, not routed). Output: stdout and results/bench/steady.md.
Targets (measured, never asserted): steady CPU per request within 10% of fresh; RSS flat once the
delivery log reached its bound.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import icount  # bench/icount.py: configs, redelivery check
import run as bench  # bench/run.py: stub, ports, processes, wrk

OUT = bench.ROOT / "results" / "bench" / "steady.md"


def rss_kib(pid: int) -> int:
    """Resident set size of `pid` (KiB), from /proc."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def wrk_run(wrk: str, port: int, path: str, conns: int, seconds: int) -> tuple[int, int]:
    """(requests answered, errors) of one wrk run of `seconds` on a fresh id range."""
    env = dict(os.environ, BENCH_BODY_FILE=str(bench.BODY), BENCH_SECRET=bench.SECRET, BENCH_ID_BASE=bench._id_base())
    out = subprocess.run(bench.pin("1") + [wrk, "-t1", f"-c{conns}", "--timeout", "5s", "-s", str(bench.HERE / "post.lua"),
                                           f"-d{seconds}s", f"http://127.0.0.1:{port}{path}"],
                         env=env, capture_output=True, text=True, check=False)
    line = next((ln for ln in out.stdout.splitlines() if ln.startswith("RESULT")), None)
    if line is None:
        raise SystemExit(f"steady: wrk gave no RESULT line:\n{out.stdout}\n{out.stderr}")
    f = dict(kv.split("=") for kv in line.split()[1:])
    errors = sum(int(f[k]) for k in ("err_connect", "err_read", "err_write", "err_timeout", "non2xx3xx"))
    return int(f["requests"]), errors


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--updates", type=int, default=500_000)
    ap.add_argument("--conns", type=int, default=16)
    ap.add_argument("--window", type=int, default=10, help="seconds of each measured window")
    ap.add_argument("--chunk", type=int, default=30, help="seconds of each unmeasured load run")
    ap.add_argument("--config", choices=("shipped", "bench"), default="shipped")
    args = ap.parse_args()
    wrk = bench.ensure_wrk()
    if wrk is None:
        raise SystemExit("steady: wrk is needed (apt-get install wrk)")
    procs = bench.Procs()
    tmp = Path(tempfile.mkdtemp(prefix="stickyroute-steady-"))
    lines: list[str] = []
    try:
        stub_port, port, admin = bench.free_port(), bench.free_port(), bench.free_port()
        nginx = bench.shutil.which("nginx")
        if nginx:
            (tmp / "nginx").mkdir()
            conf = tmp / "nginx" / "nginx.conf"
            conf.write_text(bench.NGINX_STUB.format(prefix=tmp / "nginx", port=stub_port))
            stub = procs.start(bench.pin("0") + [nginx, "-e", "stderr", "-c", str(conf), "-g", "daemon off;"],
                               tmp / "stub.log")
        else:
            stub = procs.start(bench.pin("0") + [sys.executable, "-m", "uvicorn", "upstream_stub:app", "--app-dir",
                                                 str(bench.HERE), "--port", str(stub_port), "--no-access-log",
                                                 "--log-level", "warning"], tmp / "stub.log")
        bench.wait_ready(stub_port, stub, tmp / "stub.log")
        text, path = icount.config_text(args.config, port, admin, f"http://127.0.0.1:{stub_port}", None)
        (tmp / "proxy.toml").write_text(text)
        proxy = procs.start(bench.pin("0") + [str(bench.VENV_BIN / "stickyroute"), "serve", "--config",
                                              str(tmp / "proxy.toml")], tmp / "proxy.log")
        bench.wait_ready(port, proxy, tmp / "proxy.log", path=path)

        def window(label: str) -> float:
            before = bench.cpu_seconds(proxy.pid)
            done, errors = wrk_run(wrk, port, path, args.conns, args.window)
            per = (bench.cpu_seconds(proxy.pid) - before) / max(done, 1) * 1e6
            lines.append(f"| {label} | {done:,} | {done / args.window:,.0f} | {per:,.0f} | {rss_kib(proxy.pid):,} | "
                         f"{errors} |")
            print(lines[-1], flush=True)
            return per

        lines += ["| point | requests | req/s | proxy CPU µs/req | RSS KiB | errors |", "|---|---:|---:|---:|---:|---:|"]
        fresh = window("fresh (first window)")
        total = 0
        while total < args.updates:
            done, errors = wrk_run(wrk, port, path, args.conns, args.chunk)
            total += done
            lines.append(f"| after {total:,} updates | {done:,} | {done / args.chunk:,.0f} | | "
                         f"{rss_kib(proxy.pid):,} | {errors} |")
            print(lines[-1], flush=True)
        steady = window(f"steady (after {total:,})")
        stats = bench.admin_stats(admin)
        redelivered = bench.redelivered(stats)
        if redelivered:
            raise SystemExit(f"steady: {redelivered} redelivered request(s) in /stats: run refused")
        log_size = stats.get("delivery_log", {}) if isinstance(stats, dict) else {}
    finally:
        procs.stop_all()
    report = "\n".join([
        "# Steady state (`bench/steady_bench.py`)", "",
        f"Config {args.config}, wrk {args.conns} connections, every request a new update; measured windows of "
        f"{args.window} s.", "", *lines, "",
        f"Steady / fresh CPU per request: {steady / fresh:.2f} (target <= 1.10). Delivery log at the end: "
        f"{log_size}.", ""])
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(report, encoding="utf-8")
    print(report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
