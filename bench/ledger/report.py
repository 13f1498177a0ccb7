"""The printed tables: the fault table (one row per scenario) and the ledger of one run."""

from __future__ import annotations

from bench.ledger.book import Counts
from bench.ledger.scenarios import Row

FAULT_HEADER = ("| scenario | sent | acknowledged | delivered once | duplicates | outside the rule | lost | pending "
                "| retried | misrouted | p50 / p99 ms | verdict |\n"
                "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")


def fault_line(row: Row) -> str:
    if row.counts is None:
        return f"| {row.scenario} | | | | | | | | | | | {row.note} |"
    c = row.counts
    verdict = "ok" if row.ok else "FAILED"
    if row.scenario == "proxy_killed_memory":
        verdict += f" (a restart cost {c.duplicated} duplicate(s))"
    elif row.broken is not None:
        verdict += f" ({c.duplicated} in flight at the kill, each to one agent)"
    return (f"| {row.scenario} | {c.sent} | {c.acknowledged} | {c.delivered_once} | {c.duplicated} "
            f"| {row.outside_rule} | {c.lost} | {c.pending} | {c.retried} | {c.misrouted} "
            f"| {c.p50_ms:.1f} / {c.p99_ms:.1f} | {verdict} |")


def fault_table(rows: list[Row]) -> str:
    return "\n".join([FAULT_HEADER, *(fault_line(r) for r in rows)])


def ledger_lines(c: Counts) -> list[str]:
    lines = [f"sent {c.sent}, acknowledged {c.acknowledged}, delivered once {c.delivered_once}, "
             f"delivered twice or more {c.duplicated} ({c.extra_deliveries} extra), lost {c.lost}, "
             f"still retried {c.pending}, retried {c.retried}, misrouted {c.misrouted}, "
             f"refused receipts {c.refused_receipts}",
             f"end-to-end latency (first POST to first 2xx): p50 {c.p50_ms:.1f} ms, p99 {c.p99_ms:.1f} ms"]
    lines += [f"  problem: {p}" for p in c.problems]
    return lines
