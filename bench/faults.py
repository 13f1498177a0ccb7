"""`make faults`: every fault scenario of the ledger (bench/ledger/scenarios.py), long form.

    .venv/bin/python bench/faults.py [--rate 100] [--duration 10] [--only agent_down,agent_slow]

Prints the fault table (scenario, sent, acknowledged, delivered once, duplicates, duplicates
outside the scenario's rule, lost, pending, retried, misrouted, latency) and writes it to
results/faults.md (ignored by git). Exit status 1 when a scenario breaks its rule (0 lost and 0
duplicated; the memory-backend restart reports its duplicates; a SIGKILL on the Redis backend
keeps the crash rule: duplicates only among the updates in flight at the kill, each to one
agent, within the claim lease plus a margin).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.ledger.report import fault_table, ledger_lines  # noqa: E402
from bench.ledger.scenarios import SCENARIOS, Load, Row, run  # noqa: E402


async def main_async(args: argparse.Namespace) -> list[Row]:
    names = args.only.split(",") if args.only else list(SCENARIOS)
    load = Load(rate=args.rate, duration_s=args.duration, senders=args.senders, chats=args.chats)
    rows = []
    for name in names:
        row = await run(SCENARIOS[name], load)
        rows.append(row)
        print(f"{name}: " + ("; ".join(ledger_lines(row.counts)) if row.counts else row.note), flush=True)
        for line in (row.broken or [])[:10]:
            print(f"  outside the crash rule: {line}", flush=True)
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=float, default=100.0, help="updates per second")
    parser.add_argument("--duration", type=float, default=10.0, help="seconds of traffic per scenario")
    parser.add_argument("--senders", type=int, default=1000)
    parser.add_argument("--chats", type=int, default=20)
    parser.add_argument("--only", help="comma-separated scenario names")
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    rows = asyncio.run(main_async(args))
    table = fault_table(rows)
    print(table)
    out = ROOT / "results" / "faults.md"
    out.parent.mkdir(exist_ok=True)
    out.write_text(table + "\n")
    return 0 if all(r.ok for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
