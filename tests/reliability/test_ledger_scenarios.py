"""The ledger's fault scenarios, short form (issue #10): a real proxy process, fake agents and a
fake Groq on 127.0.0.1, Telegram and Meta retrying until 2xx. Each scenario's rule: every update
acknowledged and accepted by exactly one agent (0 lost, 0 duplicated, 0 misrouted); the
memory-backend restart reports its duplicates; a SIGKILL on the Redis backend keeps the crash
rule (`bench.ledger.book.Ledger.crash_rule`: duplicates only among the updates in flight at the
kill, each to one agent, within the claim lease plus a margin). Long form: `make faults`."""

from __future__ import annotations

import pytest

from bench.ledger.scenarios import SCENARIOS, Load, Row, redis_available, run

KILLS = {"proxy_killed_redis", "replica_killed"}
"""The Redis scenarios that SIGKILL a proxy process (the crash rule applies)."""
LOAD = Load(rate=50.0, duration_s=2.0, senders=100, chats=6, drain_s=60.0)
EVIDENCE = {
    "agent_down": lambda row: row.extra["platform_answers"].get("502", 0) > 0,
    "agent_slow": lambda row: row.extra["platform_answers"].get("504", 0) > 0,
    "agent_500": lambda row: row.extra["platform_answers"].get("500", 0) > 0,
    "agent_429": lambda row: row.extra["platform_answers"].get("429", 0) > 0,
    "agent_reset": lambda row: row.extra["platform_answers"].get("502", 0) > 0,
    "classifier_down": lambda row: row.extra["groq_calls"].get("down", 0) > 0,
    "classifier_slow": lambda row: row.extra["groq_calls"].get("slow", 0) > 0,
    "classifier_garbage": lambda row: row.extra["groq_calls"].get("garbage", 0) > 0,
    "proxy_killed_memory": lambda row: row.restarts == 1,
    "no_fault": lambda row: row.counts.retried == 0,
}
"""Proof that each fault really happened during the run."""


@pytest.mark.parametrize("name", [n for n, s in SCENARIOS.items() if not s.redis])
async def test_scenario_loses_nothing_and_duplicates_nothing(name: str) -> None:
    row: Row = await run(SCENARIOS[name], LOAD)
    c = row.counts
    assert c is not None
    assert (c.lost, c.pending, c.misrouted, c.acknowledged, c.problems[:0]) == (0, 0, 0, c.sent, [])
    assert c.sent >= 90
    if name == "proxy_killed_memory":
        assert c.delivered_once + c.duplicated == c.sent  # every update accepted; duplicates are the restart's cost
        print(f"\nproxy_killed_memory: a restart cost {c.duplicated} duplicate(s) of {c.sent}")
    else:
        assert (c.delivered_once, c.duplicated) == (c.sent, 0), c.problems
    assert EVIDENCE[name](row), row.extra


@pytest.mark.parametrize("name", [n for n, s in SCENARIOS.items() if s.redis])
async def test_redis_scenario_runs_or_says_it_is_pending(name: str) -> None:
    why = redis_available()
    row = await run(SCENARIOS[name], LOAD)
    if why is not None:
        assert (row.counts, row.note) == (None, f"pending: Redis backend not available ({why})")
        return
    c = row.counts
    assert c is not None
    assert (c.lost, c.pending, c.misrouted, c.acknowledged) == (0, 0, 0, c.sent), c.problems
    if name in KILLS:
        assert (len(row.extra["kills"]), row.broken) == (1, []), row.broken
        assert c.delivered_once + c.duplicated == c.sent
        print(f"\n{name}: {c.duplicated} update(s) in flight at the kill delivered twice, each to one agent")
    else:
        assert (c.duplicated, c.delivered_once) == (0, c.sent), c.problems
