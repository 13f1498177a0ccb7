"""The proxy's Prometheus metrics, in the service's one `CollectorRegistry`, and the /stats views
derived from the same counters (one source of truth).

    stickyroute_requests_total{channel,agent,reason,status}     every webhook request, once
    stickyroute_decisions_total{channel,reason}                 every routing decision (an item of a body)
    stickyroute_switches_total{channel,reason}                  decisions that moved a conversation
    stickyroute_upstream_latency_seconds{agent}                 histogram of each forward to an agent
    stickyroute_upstream_failures_total{agent,kind}             refused | timeout | pool_exhausted | too_large | error
    stickyroute_conversations_live{channel}                     live routes (refreshed at each scrape)
    stickyroute_delivery_log_size                               stored answers (refreshed at each scrape)
    stickyroute_delivery_log_hits_total{channel}                requests answered from the delivery log
    stickyroute_config_info{hash,path}, stickyroute_config_loaded_timestamp_seconds,
    stickyroute_config_reloads_total{result=ok|rejected}

Label sets are bounded: channels and agents are the config's (plus "" when the proxy answered
itself, "(several)" for a body split between agents), reasons are the code's fixed set, status is
the class ("2xx"...), failure kinds are the list above. Children are made once per label set and
kept (the hot path pays one dict look-up). The per-request counters and the latency histogram
are plain numbers exported at scrape time (`stickyroute.tallies`: the same samples as
prometheus_client's own metrics, without a lock per increment).
"""

from __future__ import annotations

from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Info

from stickyroute import clock
from stickyroute.tallies import Tallies, TimeTallies

__all__ = ["FAILURE_KINDS", "Metrics", "status_class"]

FAILURE_KINDS = ("refused", "timeout", "pool_exhausted", "too_large", "error")
UPSTREAM_BUCKETS_S = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
_CLASSES = ("0xx", "1xx", "2xx", "3xx", "4xx", "5xx")


def status_class(status: int) -> str:
    """"2xx" for 200..299 (and so on); "5xx" for anything outside 100..599."""
    index = status // 100
    return _CLASSES[index] if 1 <= index <= 5 else "5xx"


class _Children:
    """`.labels(*values)` of one metric, made once per label set."""

    __slots__ = ("_cache", "_metric")

    def __init__(self, metric: Any) -> None:
        self._metric = metric
        self._cache: dict[tuple[str, ...], Any] = {}

    def __call__(self, *values: str) -> Any:
        child = self._cache.get(values)
        if child is None:
            child = self._cache[values] = self._metric.labels(*values)
        return child


class Metrics:
    """Every metric of the request path, registered in `registry` (see the module docstring)."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.registry = registry
        now = clock.now
        self._requests = Tallies("stickyroute_requests", "Webhook requests answered, by channel, agent, reason of "
                                 "their first decision and status class.", ("channel", "agent", "reason", "status"),
                                 now)
        self._decisions = Tallies("stickyroute_decisions", "Routing decisions (one per item of a body), by reason.",
                                  ("channel", "reason"), now)
        self._switches = Tallies("stickyroute_switches", "Decisions that moved a conversation to another agent.",
                                 ("channel", "reason"), now)
        self._latency = TimeTallies("stickyroute_upstream_latency_seconds", "Time of each forward to an agent "
                                    "(seconds), failures included.", ("agent",), UPSTREAM_BUCKETS_S, now)
        self._failures = Tallies("stickyroute_upstream_failures", "Forwards that got no reply from the agent, by "
                                 "kind.", ("agent", "kind"), now)
        for tallies in (self._requests, self._decisions, self._switches, self._latency, self._failures):
            registry.register(tallies)
        self.conversations = Gauge("stickyroute_conversations_live", "Live conversation routes (at the last "
                                   "scrape).", ("channel",), registry=registry)
        self.deliveries = Gauge("stickyroute_delivery_log_size", "Stored answers of the delivery log (at the last "
                                "scrape).", registry=registry)
        self._hits = Tallies("stickyroute_delivery_log_hits", "Requests answered from the delivery log "
                             "(platform redeliveries).", ("channel",), now)
        registry.register(self._hits)
        self.config_info = Info("stickyroute_config", "The running config: its hash and path.", registry=registry)
        self.config_loaded = Gauge("stickyroute_config_loaded_timestamp_seconds", "When the running config was "
                                   "loaded (Unix time).", registry=registry)
        self._reloads = Counter("stickyroute_config_reloads", "Config reloads, by result.", ("result",),
                                registry=registry)
        self.requests = _Children(self._requests)
        self.decisions = _Children(self._decisions)
        self.switches = _Children(self._switches)
        self.latency = _Children(self._latency)
        self.failures = _Children(self._failures)
        self.hits = _Children(self._hits)
        self.reloads = _Children(self._reloads)

    def requests_view(self) -> dict[str, dict[str, Any]]:
        """/stats: {channel: {"total", "by_status": {class: n}, "by_reason": {reason: n},
        "by_agent": {agent: n}}} from `stickyroute_requests_total`."""
        out: dict[str, dict[str, Any]] = {}
        for labels, value in _samples(self._requests):
            view = out.setdefault(labels["channel"], {"total": 0, "by_status": {}, "by_reason": {}, "by_agent": {}})
            view["total"] += value
            for key, label in (("by_status", "status"), ("by_reason", "reason"), ("by_agent", "agent")):
                view[key][labels[label]] = view[key].get(labels[label], 0) + value
        return _sorted(out)

    def decisions_view(self) -> dict[str, dict[str, int]]:
        """/stats: {channel: {reason: n}} from `stickyroute_decisions_total`."""
        return _by(self._decisions, "channel", "reason")

    def switches_view(self) -> dict[str, dict[str, int]]:
        """/stats: {channel: {reason: n}} from `stickyroute_switches_total`."""
        return _by(self._switches, "channel", "reason")

    def upstream_view(self) -> dict[str, dict[str, Any]]:
        """/stats: {agent: {"forwards", "seconds", "failures": {kind: n}}} from the upstream
        histogram and failure counter."""
        out: dict[str, dict[str, Any]] = {}
        for metric in self._latency.collect():
            for sample in metric.samples:
                if sample.name.endswith("_count") or sample.name.endswith("_sum"):
                    view = out.setdefault(sample.labels["agent"], {"forwards": 0, "seconds": 0.0, "failures": {}})
                    if sample.name.endswith("_count"):
                        view["forwards"] = int(sample.value)
                    else:
                        view["seconds"] = round(sample.value, 6)
        for labels, value in _samples(self._failures):
            view = out.setdefault(labels["agent"], {"forwards": 0, "seconds": 0.0, "failures": {}})
            view["failures"][labels["kind"]] = value
        return _sorted(out)

    def hits_view(self) -> dict[str, int]:
        """/stats: {channel: requests answered from the delivery log}."""
        return dict(sorted((labels["channel"], value) for labels, value in _samples(self._hits)))

    def reloads_view(self) -> dict[str, int]:
        """/stats: {result: n} of config reloads."""
        return {labels["result"]: value for labels, value in _samples(self._reloads)}


def _samples(counter: Counter | Tallies) -> list[tuple[dict[str, str], int]]:
    """(labels, value) of every `_total` sample of a labelled counter."""
    return [(dict(sample.labels), int(sample.value)) for metric in counter.collect() for sample in metric.samples
            if sample.name.endswith("_total")]


def _by(counter: Counter | Tallies, outer: str, inner: str) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for labels, value in _samples(counter):
        inner_map = out.setdefault(labels[outer], {})
        inner_map[labels[inner]] = inner_map.get(labels[inner], 0) + value
    return _sorted(out)


def _sorted(out: dict[str, Any]) -> dict[str, Any]:
    """Keys sorted at every level (stable JSON for people and tests)."""
    return {k: _sorted(v) if isinstance(v, dict) else v for k, v in sorted(out.items())}
