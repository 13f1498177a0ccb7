"""Classifier accounting: calls, answers, failures by kind, skips, tokens and latency.

One `ClassifierStats` per process, fed by `GuardedClassifier` with every Classification. Two
views of the same numbers:

- `snapshot()`: a JSON-able dict for `GET /stats` and `stickyroute stats`, shaped
      {"total": TALLY, "channels": {channel name: TALLY}}
      TALLY = {"calls", "successes", "agent_answers", "none_answers", "answers_unmatched",
               "failures": {"timeout", "rate_limit", "auth", "server_error", "unparseable", ...},
               "budget_skips", "open_skips", "prompt_tokens", "completion_tokens",
               "latency_ms": {"count", "sum", "max", "p50", "p99"}}
  `calls` counts provider calls made (skips are not calls); `successes` = agent + none answers;
  `answers_unmatched` counts the none answers whose text was neither a candidate nor `none` nor
  empty ("I think coder"); p50/p99 (nearest rank) cover the last `reservoir_size` calls and are
  None before the first call. Milliseconds are rounded to 0.001.
- Prometheus metrics in `registry` (the service's CollectorRegistry, or one of its own) for `/metrics`:
  stickyroute_classifier_calls_total{channel,provider,outcome=agent|none|error},
  stickyroute_classifier_failures_total{channel,provider,kind},
  stickyroute_classifier_skips_total{channel,reason=budget|open},
  stickyroute_classifier_unmatched_answers_total{channel,provider},
  stickyroute_classifier_tokens_total{channel,provider,type=prompt|completion},
  stickyroute_classifier_latency_seconds{channel,provider} (histogram).
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from prometheus_client import CollectorRegistry

from stickyroute import clock
from stickyroute.classifier.base import Classification, Outcome
from stickyroute.tallies import Tallies, TimeTallies

FAILURE_KINDS: tuple[str, ...] = ("timeout", "rate_limit", "auth", "server_error", "unparseable")
LATENCY_BUCKETS_S: tuple[float, ...] = (0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 5.0)


def says_none(raw_answer: str) -> bool:
    """True when a raw answer trims (as `base.parse_answer` does) to `none` or nothing."""
    text = raw_answer.strip().strip("\"'`").strip()
    if text.endswith("."):
        text = text[:-1]
    return text.strip().strip("\"'`").strip().casefold() in ("", "none")


def _percentile(sorted_values: list[float], fraction: float) -> float | None:
    """Nearest-rank percentile of ascending values (None when empty)."""
    if not sorted_values:
        return None
    rank = max(1, math.ceil(fraction * len(sorted_values)))
    return sorted_values[rank - 1]


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds * 1000.0, 3)


@dataclass(slots=True)
class _Tally:
    """Mutable counters of one channel (or of all channels)."""

    reservoir_size: int
    calls: int = 0
    successes: int = 0
    agent_answers: int = 0
    none_answers: int = 0
    answers_unmatched: int = 0
    failures: dict[str, int] = field(default_factory=lambda: dict.fromkeys(FAILURE_KINDS, 0))
    budget_skips: int = 0
    open_skips: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_count: int = 0
    latency_sum_s: float = 0.0
    latency_max_s: float = 0.0
    recent_s: deque[float] = field(init=False)

    def __post_init__(self) -> None:
        self.recent_s = deque(maxlen=self.reservoir_size)

    def add(self, result: Classification, unmatched: bool) -> None:
        if result.outcome is Outcome.BUDGET:
            self.budget_skips += 1
            return
        if result.outcome is Outcome.OPEN:
            self.open_skips += 1
            return
        self.calls += 1
        self.prompt_tokens += result.prompt_tokens
        self.completion_tokens += result.completion_tokens
        self.latency_count += 1
        self.latency_sum_s += result.latency_s
        self.latency_max_s = max(self.latency_max_s, result.latency_s)
        self.recent_s.append(result.latency_s)
        if result.outcome is Outcome.ERROR:
            kind = result.error_kind or "error"
            self.failures[kind] = self.failures.get(kind, 0) + 1
            return
        self.successes += 1
        if result.outcome is Outcome.AGENT:
            self.agent_answers += 1
        else:
            self.none_answers += 1
            self.answers_unmatched += unmatched

    def as_dict(self) -> dict[str, Any]:
        recent = sorted(self.recent_s)
        return {
            "calls": self.calls,
            "successes": self.successes,
            "agent_answers": self.agent_answers,
            "none_answers": self.none_answers,
            "answers_unmatched": self.answers_unmatched,
            "failures": dict(self.failures),
            "budget_skips": self.budget_skips,
            "open_skips": self.open_skips,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "latency_ms": {
                "count": self.latency_count,
                "sum": _ms(self.latency_sum_s),
                "max": _ms(self.latency_max_s),
                "p50": _ms(_percentile(recent, 0.50)),
                "p99": _ms(_percentile(recent, 0.99)),
            },
        }


class ClassifierStats:
    """Per-channel and total classifier accounting, plus Prometheus metrics in `registry`."""

    def __init__(self, reservoir_size: int = 1024, registry: CollectorRegistry | None = None) -> None:
        self._reservoir_size = reservoir_size
        self._total = _Tally(reservoir_size)
        self._channels: dict[str, _Tally] = {}
        self.registry = registry if registry is not None else CollectorRegistry(auto_describe=True)
        now = clock.now
        self._calls = Tallies("stickyroute_classifier_calls", "Classifier calls made, by outcome.",
                              ("channel", "provider", "outcome"), now)
        self._failures = Tallies("stickyroute_classifier_failures", "Failed classifier calls, by kind.",
                                 ("channel", "provider", "kind"), now)
        self._skips = Tallies("stickyroute_classifier_skips", "Classifications skipped (budget spent, breaker open).",
                              ("channel", "reason"), now)
        self._unmatched = Tallies("stickyroute_classifier_unmatched_answers",
                                  "Answers that were neither a candidate nor none (counted as none).",
                                  ("channel", "provider"), now)
        self._tokens = Tallies("stickyroute_classifier_tokens", "Tokens reported by the provider's usage.",
                               ("channel", "provider", "type"), now)
        self._children: dict[tuple[object, ...], Any] = {}
        self._latency = TimeTallies("stickyroute_classifier_latency_seconds", "Classifier call latency in seconds.",
                                    ("channel", "provider"), LATENCY_BUCKETS_S, now)
        for tallies in (self._calls, self._failures, self._skips, self._unmatched, self._tokens, self._latency):
            self.registry.register(tallies)
        """Plain numbers exported at scrape time (`stickyroute.tallies`): the same samples as
        prometheus_client's metrics, without a lock per call."""

    def record(self, channel: str, provider: str, result: Classification) -> None:
        """Account one classification of `channel` by `provider` (any outcome, skips included)."""
        unmatched = (
            result.outcome is Outcome.NONE
            and result.raw_answer is not None
            and not says_none(result.raw_answer)
        )
        tally = self._channels.get(channel)
        if tally is None:
            tally = self._channels[channel] = _Tally(self._reservoir_size)
        tally.add(result, unmatched)
        self._total.add(result, unmatched)
        self._export(channel, provider, result, unmatched)

    def _child(self, metric: Any, *values: str) -> Any:
        """`metric.labels(*values)`, made once per label set (`labels` validates and locks)."""
        key = (id(metric), *values)
        child = self._children.get(key)
        if child is None:
            child = self._children[key] = metric.labels(*values)
        return child

    def _export(self, channel: str, provider: str, result: Classification, unmatched: bool) -> None:
        child = self._child
        if result.outcome in (Outcome.BUDGET, Outcome.OPEN):
            child(self._skips, channel, result.outcome.value).inc()
            return
        child(self._calls, channel, provider, result.outcome.value).inc()
        if result.outcome is Outcome.ERROR:
            child(self._failures, channel, provider, result.error_kind or "error").inc()
        if unmatched:
            child(self._unmatched, channel, provider).inc()
        child(self._tokens, channel, provider, "prompt").inc(result.prompt_tokens)
        child(self._tokens, channel, provider, "completion").inc(result.completion_tokens)
        child(self._latency, channel, provider).observe(result.latency_s)

    def snapshot(self) -> dict[str, Any]:
        """{"total": TALLY, "channels": {name: TALLY}} (see the module docstring), JSON-able."""
        return {
            "total": self._total.as_dict(),
            "channels": {name: t.as_dict() for name, t in sorted(self._channels.items())},
        }
