"""Summarise ../shared/proxy-bench runs (stickyroute as `custom`) into results/bench/proxy-bench.md.

    .venv/bin/python bench/proxy_bench_summary.py RESULTS/<varied> [RESULTS/<static> [RESULTS/<anchor>]]

Reads each run's results.tsv (columns of proxy-bench's run.sh) and writes, per run, req/s and
p50/p99 at each connection count for every config, the ratio of req/s to nginx in the same run,
and the proxy's CPU per request. The first run is the varying-body run (every request a new
update_id: routing path), the optional second the identical-body run (BENCH_STATIC=1: the
redelivery-memory path). Standard library only.
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "results" / "bench" / "proxy-bench.md"
"""Ignored by git; docs/bench/proxy-bench.md is updated by hand from it."""


NOTES = """## How it was run

    cp -r ../shared/proxy-bench /tmp/proxy-bench && cd /tmp/proxy-bench && ./setup.sh
    # /tmp copy only: post.lua starts its update_id counter at (seconds of day) * 1e5 instead of 0, so the
    # warm-up and the 1/16/64 runs never repeat an update_id (the shipped post.lua restarts at 1 on every
    # wrk run, so part of each later run would be answered by the redelivery memory)
    PROXY_NAME=stickyroute PROXY_CMD='/work/main/bench/proxy_bench_cmd.sh {port} {upstream}' \\
        DURATION=5 WARMUP=1 ./run.sh direct nginx starlette custom
    BENCH_STATIC=1 PROXY_NAME=stickyroute PROXY_CMD='...same...' DURATION=5 WARMUP=1 ./run.sh direct nginx custom
    PROXY_NAME=stickyroute PROXY_CMD='...same...' DURATION=5 WARMUP=1 ./run.sh nginx starlette-aiohttp custom
    /work/main/.venv/bin/python /work/main/bench/proxy_bench_summary.py results/<varied> results/<static> results/<anchor>

`bench/proxy_bench_cmd.sh PORT UPSTREAM` writes bench/run.py's config (channel on /webhook/bench,
`sticky_heuristic`, six agents with keywords, classifier `heuristic`) without `secret_token`
(run.sh's readiness POST sends no secret header) and execs `stickyroute serve`. The machine was
shared with other sessions' test runs during these runs (run.sh's `other` CPU column: 0-140 %), so
req/s and latency are noisy even between rows of one run; "proxy CPU µs/req" is the steadiest figure.
"""


def load(run: Path) -> list[dict]:
    with open(run / "results.tsv", newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def table(rows: list[dict]) -> list[str]:
    nginx = {r["conns"]: float(r["rps"]) for r in rows if r["config"] == "nginx"}
    direct = {r["conns"]: float(r["rps"]) for r in rows if r["config"] == "direct"}
    out = ["| config | conns | req/s | ratio to nginx | ratio to direct | p50 ms | p99 ms | proxy CPU µs/req | errors |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        rps = float(r["rps"])
        n, d = nginx.get(r["conns"]), direct.get(r["conns"])
        cpu = r.get("proxy_cpu_us_per_req") or ""
        cpu = f"{float(cpu):.0f}" if cpu else "-"
        out.append(f"| {r['config']} | {r['conns']} | {rps:,.0f} | {rps / n:.3f} | " if n else
                   f"| {r['config']} | {r['conns']} | {rps:,.0f} | - | ")
        out[-1] += (f"{rps / d:.3f} | " if d else "- | ") + (
            f"{int(r['p50_us']) / 1000:.3f} | {int(r['p99_us']) / 1000:.3f} | {cpu} | "
            f"{int(r['errors']) + int(r['non2xx'])} |")
    return out


def env_line(run: Path) -> str:
    keep = ("date_utc", "cpu", "wrk", "nginx", "python", "conns", "pinning", "upstream_kind", "loadavg_at_start",
            "loadavg_at_end")
    lines = (run / "env.txt").read_text().splitlines() if (run / "env.txt").exists() else []
    return "; ".join(ln for ln in lines if ln.split(":")[0] in keep)


def main(argv: list[str]) -> int:
    runs = [Path(a) for a in argv[1:]]
    if not runs:
        print(__doc__, file=sys.stderr)
        return 2
    titles = ["Varying body (every request a new update_id: routing path active)",
              "Identical body (BENCH_STATIC=1: after the first request every POST is a redelivery, "
              "answered from the redelivery memory without routing or forwarding)",
              "Anchor: naive Starlette + raw aiohttp pass-through (`starlette-aiohttp`) beside stickyroute "
              "(varying body), same run"]
    md = ["# stickyroute in ../shared/proxy-bench (beside nginx, same run)", ""]
    for title, run in zip(titles, runs, strict=False):
        md += [f"## {title}", "", f"Run `{run.name}`: {env_line(run)}", ""] + table(load(run)) + [""]
    md += NOTES.splitlines()
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text("\n".join(md) + "\n", encoding="utf-8")
    print("\n".join(md))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
