"""The ledger's counting rules (bench/ledger/book.py) and the fake agents' id reading."""

from __future__ import annotations

import json

from bench.ledger.agents import update_ids
from bench.ledger.book import Ledger, percentile
from bench.ledger.traffic import BOUND_WHATSAPP, Traffic, whatsapp_body


def test_every_outcome_is_counted_once() -> None:
    book = Ledger()
    for key in ("once", "twice", "lost", "retrying", "refused-then-ok", "misrouted"):
        book.sent(key, "coder" if key == "misrouted" else None, 0.0)
        book.attempt(key)
    book.attempt("refused-then-ok")
    for key in ("once", "twice", "lost", "refused-then-ok", "misrouted"):
        book.acked(key, 0.5)
    book.received("once", "support", True, 0.1)
    book.received("twice", "support", True, 0.1)
    book.received("twice", "coder", True, 0.2)
    book.received("refused-then-ok", "support", False, 0.1)
    book.received("refused-then-ok", "support", True, 0.3)
    book.received("misrouted", "ops", True, 0.1)
    counts = book.counts(retrying={"retrying"})
    assert (counts.sent, counts.acknowledged, counts.delivered_once, counts.duplicated, counts.lost, counts.pending,
            counts.retried, counts.misrouted, counts.refused_receipts, counts.extra_deliveries) == (
        6, 5, 3, 1, 1, 1, 1, 1, 1, 1)
    assert counts.p50_ms == 500.0


def test_percentile_is_nearest_rank() -> None:
    assert (percentile([], 50), percentile([3.0, 1.0, 2.0], 50), percentile(list(map(float, range(1, 101))), 99)) == (
        0.0, 2.0, 99.0)


def test_agents_read_the_proxys_delivery_keys() -> None:
    traffic = Traffic(senders=20, chats=4, seed=1, statuses=0.5, whatsapp=1.0)
    updates = [traffic.next() for _ in range(12)]
    assert update_ids(whatsapp_body(updates)) == [u.key for u in updates if "OUT" not in u.key] + [
        u.key for u in updates if "OUT" in u.key]
    telegram = Traffic(senders=20, chats=4, seed=1, whatsapp=0.0).next()
    assert update_ids(telegram.body) == [telegram.key] and update_ids(b"[1]") == [] and update_ids(b"{") == []


def test_deterministic_updates_carry_the_agent_the_shipped_rules_say() -> None:
    traffic = Traffic(senders=100, chats=4, seed=3, special=1.0, explicit=0.0, statuses=0.0, whatsapp=0.5)
    seen = {}
    for _ in range(200):
        update = traffic.next()
        if update.platform == "telegram":
            message = json.loads(update.body)["message"]
            who = ("user111" if message["from"]["id"] == 111 else "topic" if message.get("is_topic_message")
                   else "chat")
        else:
            who = "wa-bound" if update.item["message"]["from"] == BOUND_WHATSAPP else "wa"
        seen.setdefault(who, set()).add(update.expected)
    assert seen == {"user111": {"coder"}, "chat": {"ops"}, "topic": {"writer"}, "wa-bound": {"coder"}}


def test_the_crash_rule_allows_only_updates_in_flight_at_a_kill_to_one_agent_within_the_lease() -> None:
    book = Ledger()
    cases = {  # key: (acked at, [(agent, accepted at)])
        "in-flight": (None, [("coder", 9.9), ("coder", 13.0)]),
        "late-but-same": (12.0, [("ops", 10.3), ("ops", 14.0)]),
        "acked-before": (9.95, [("coder", 9.8), ("coder", 12.0)]),
        "after-kill": (None, [("coder", 11.0), ("coder", 12.0)]),
        "two-agents": (None, [("coder", 9.9), ("ops", 12.0)]),
        "too-late": (None, [("coder", 9.9), ("coder", 19.5)]),
        "once": (None, [("coder", 9.9)]),
    }
    for key, (acked, receipts) in cases.items():
        book.sent(key, None, 9.0)
        if acked is not None:
            book.acked(key, acked)
        for agent, t in receipts:
            book.received(key, agent, True, t)
    broken = book.crash_rule([10.0], lease_s=5.0, margin_s=4.0)
    assert [line.split()[0] for line in broken] == ["acked-before", "after-kill", "two-agents", "too-late"]
    restarted = book.crash_rule([10.0], lease_s=5.0, margin_s=4.0, back=[12.0])  # served again at 12 s: due 21 s
    assert [line.split()[0] for line in restarted] == ["acked-before", "after-kill", "two-agents"]
