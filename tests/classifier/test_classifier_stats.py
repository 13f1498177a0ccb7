"""ClassifierStats: the JSON snapshot and the Prometheus metrics of the same events."""

from __future__ import annotations

import json

from prometheus_client import generate_latest

from stickyroute.classifier.base import Classification, Outcome
from stickyroute.classifier.stats import ClassifierStats


def tally(**overrides: object) -> dict:
    base = {
        "calls": 0, "successes": 0, "agent_answers": 0, "none_answers": 0,
        "answers_unmatched": 0,
        "failures": {"timeout": 0, "rate_limit": 0, "auth": 0, "server_error": 0, "unparseable": 0},
        "budget_skips": 0, "open_skips": 0, "prompt_tokens": 0, "completion_tokens": 0,
        "latency_ms": {"count": 0, "sum": 0.0, "max": 0.0, "p50": None, "p99": None},
    }
    base.update(overrides)
    return base


def test_empty_snapshot() -> None:
    assert ClassifierStats().snapshot() == {"total": tally(), "channels": {}}


def test_snapshot_counts_every_outcome_per_channel_and_in_total() -> None:
    stats = ClassifierStats()
    stats.record("telegram", "groq", Classification(
        Outcome.AGENT, agent="coder", latency_s=0.25, prompt_tokens=120, completion_tokens=2,
        raw_answer="coder"))
    stats.record("telegram", "groq", Classification(
        Outcome.NONE, latency_s=0.5, prompt_tokens=110, completion_tokens=1, raw_answer="none"))
    stats.record("telegram", "groq", Classification(
        Outcome.NONE, latency_s=0.125, prompt_tokens=100, completion_tokens=4,
        raw_answer="I think coder"))
    stats.record("whatsapp", "groq", Classification(
        Outcome.ERROR, latency_s=2.0, error_kind="timeout"))
    stats.record("whatsapp", "groq", Classification(Outcome.BUDGET))
    stats.record("whatsapp", "groq", Classification(Outcome.OPEN))

    snapshot = stats.snapshot()

    assert snapshot["channels"]["telegram"] == tally(
        calls=3, successes=3, agent_answers=1, none_answers=2, answers_unmatched=1,
        prompt_tokens=330, completion_tokens=7,
        latency_ms={"count": 3, "sum": 875.0, "max": 500.0, "p50": 250.0, "p99": 500.0},
    )
    assert snapshot["channels"]["whatsapp"] == tally(
        calls=1, failures={"timeout": 1, "rate_limit": 0, "auth": 0, "server_error": 0, "unparseable": 0},
        budget_skips=1, open_skips=1,
        latency_ms={"count": 1, "sum": 2000.0, "max": 2000.0, "p50": 2000.0, "p99": 2000.0},
    )
    assert snapshot["total"] == tally(
        calls=4, successes=3, agent_answers=1, none_answers=2, answers_unmatched=1,
        failures={"timeout": 1, "rate_limit": 0, "auth": 0, "server_error": 0, "unparseable": 0},
        budget_skips=1, open_skips=1, prompt_tokens=330, completion_tokens=7,
        latency_ms={"count": 4, "sum": 2875.0, "max": 2000.0, "p50": 250.0, "p99": 2000.0},
    )
    assert json.loads(json.dumps(snapshot)) == snapshot


def test_heuristic_none_without_raw_answer_is_not_unmatched() -> None:
    stats = ClassifierStats()
    stats.record("telegram", "heuristic", Classification(Outcome.NONE))
    assert stats.snapshot()["total"]["answers_unmatched"] == 0


def test_percentiles_use_nearest_rank_over_a_bounded_reservoir() -> None:
    stats = ClassifierStats(reservoir_size=100)
    for ms in range(1, 201):  # 1..200 ms; the reservoir keeps the last 100: 101..200
        stats.record("c", "groq", Classification(Outcome.NONE, latency_s=ms / 1000))

    latency = stats.snapshot()["total"]["latency_ms"]

    assert (latency["count"], latency["max"]) == (200, 200.0)
    assert (latency["p50"], latency["p99"]) == (150.0, 199.0)


def test_prometheus_metrics_live_in_the_stats_registry() -> None:
    stats = ClassifierStats()
    stats.record("telegram", "groq", Classification(
        Outcome.AGENT, agent="coder", latency_s=0.25, prompt_tokens=120, completion_tokens=2))
    stats.record("telegram", "groq", Classification(
        Outcome.ERROR, latency_s=0.75, error_kind="rate_limit"))
    stats.record("telegram", "groq", Classification(
        Outcome.NONE, latency_s=0.1, raw_answer="translator"))
    stats.record("telegram", "groq", Classification(Outcome.OPEN))
    value = stats.registry.get_sample_value

    assert value("stickyroute_classifier_calls_total",
                 {"channel": "telegram", "provider": "groq", "outcome": "agent"}) == 1.0
    assert value("stickyroute_classifier_calls_total",
                 {"channel": "telegram", "provider": "groq", "outcome": "error"}) == 1.0
    assert value("stickyroute_classifier_failures_total",
                 {"channel": "telegram", "provider": "groq", "kind": "rate_limit"}) == 1.0
    assert value("stickyroute_classifier_skips_total",
                 {"channel": "telegram", "reason": "open"}) == 1.0
    assert value("stickyroute_classifier_unmatched_answers_total",
                 {"channel": "telegram", "provider": "groq"}) == 1.0
    assert value("stickyroute_classifier_tokens_total",
                 {"channel": "telegram", "provider": "groq", "type": "prompt"}) == 120.0
    assert value("stickyroute_classifier_tokens_total",
                 {"channel": "telegram", "provider": "groq", "type": "completion"}) == 2.0
    assert value("stickyroute_classifier_latency_seconds_count",
                 {"channel": "telegram", "provider": "groq"}) == 3.0
    assert value("stickyroute_classifier_latency_seconds_bucket",
                 {"channel": "telegram", "provider": "groq", "le": "0.25"}) == 2.0
    assert b"stickyroute_classifier_calls_total" in generate_latest(stats.registry)


def test_two_stats_objects_do_not_share_metrics() -> None:
    first, second = ClassifierStats(), ClassifierStats()
    first.record("c", "groq", Classification(Outcome.AGENT, agent="coder"))

    assert second.registry.get_sample_value(
        "stickyroute_classifier_calls_total",
        {"channel": "c", "provider": "groq", "outcome": "agent"},
    ) is None
