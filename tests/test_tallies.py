"""stickyroute/tallies.py: the same exposition as prometheus_client's own metrics."""

from __future__ import annotations

import re

import pytest
from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest

from stickyroute.tallies import Tallies, TimeTallies

BUCKETS = (0.005, 0.1, 1.0, 30.0)


def _exposition(registry: CollectorRegistry) -> str:
    """The text exposition with every `_created` timestamp written as T (they differ by a few µs)."""
    return re.sub(r"(_created\{[^}]*\}) \S+", r"\1 T", generate_latest(registry).decode())


def test_counters_and_histograms_expose_the_same_samples_as_prometheus_client() -> None:
    ours, theirs = CollectorRegistry(auto_describe=True), CollectorRegistry(auto_describe=True)
    requests = Tallies("x_requests", "Requests.", ("channel", "reason"), lambda: 1.5)
    latency = TimeTallies("x_latency_seconds", "Latency.", ("agent",), BUCKETS, lambda: 1.5)
    ours.register(requests)
    ours.register(latency)
    counter = Counter("x_requests", "Requests.", ("channel", "reason"), registry=theirs)
    histogram = Histogram("x_latency_seconds", "Latency.", ("agent",), buckets=BUCKETS, registry=theirs)
    for channel, reason in [("tg", "neutral"), ("wa", "default"), ("tg", "neutral"), ("tg", "sticky")]:
        requests.labels(channel, reason).inc()
        counter.labels(channel, reason).inc()
    requests.labels("tg", "neutral").inc(2.5)
    counter.labels("tg", "neutral").inc(2.5)
    for agent, seconds in [("coder", 0.004), ("coder", 0.2), ("ops", 31.0), ("coder", 1.0), ("ops", 0.1)]:
        latency.labels(agent).observe(seconds)
        histogram.labels(agent).observe(seconds)
    assert _exposition(ours) == _exposition(theirs)
    assert 'x_requests_total{channel="tg",reason="neutral"} 4.5' in _exposition(ours)


def test_a_wrong_number_of_labels_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="expected labels"):
        Tallies("x", "X.", ("a", "b"), lambda: 0.0).labels("only-one")
    with pytest.raises(ValueError, match="expected labels"):
        TimeTallies("y", "Y.", ("a",), BUCKETS, lambda: 0.0).labels()
