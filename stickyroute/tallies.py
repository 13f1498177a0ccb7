"""Counters and histograms of the request path kept as plain numbers, exported at scrape time.

    requests = Tallies("stickyroute_requests", "Webhook requests...", ("channel", "agent"), created=now)
    requests.labels("telegram", "coder").inc()          # a dict look-up and an addition
    registry.register(requests)                         # a prometheus_client collector

prometheus_client's `Counter` and `Histogram` take a lock and go through value objects on every
`inc` / `observe`; the proxy counts from one thread (the event loop), so these keep a float per
label set and build the samples only when /metrics or /stats asks (`collect`). The samples are
the ones prometheus_client's own metrics give, in the same order and with the same names:
`<name>_total` and `<name>_created` for a counter; `_bucket{le}` (cumulative), `_count`, `_sum`,
`_created` for a histogram; `_created` is left out when prometheus_client is told to
(`PROMETHEUS_DISABLE_CREATED_SERIES`). Label sets appear in the order they were first counted.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from prometheus_client import metrics as _prometheus
from prometheus_client.metrics_core import Metric
from prometheus_client.utils import floatToGoString

__all__ = ["Tallies", "TimeTallies"]


def _created_series() -> bool:
    return bool(getattr(_prometheus, "_use_created", True))


class _Count:
    __slots__ = ("created", "value")

    def __init__(self, created: float) -> None:
        self.value = 0.0
        self.created = created

    def inc(self, amount: float = 1.0) -> None:
        self.value += amount


class Tallies:
    """A labelled counter `<name>_total` (a prometheus_client collector); `created()` gives the
    seconds (Unix time) a label set is first counted at."""

    def __init__(self, name: str, documentation: str, labelnames: Sequence[str],
                 created: Callable[[], float]) -> None:
        self.name = name
        self.documentation = documentation
        self.labelnames = self._labelnames = tuple(labelnames)
        """Label names (`_labelnames` too, as prometheus_client's metrics name them)."""
        self._created = created
        self._children: dict[tuple[str, ...], _Count] = {}

    def labels(self, *values: str) -> _Count:
        """The count of one label set (made on first use)."""
        child = self._children.get(values)
        if child is None:
            if len(values) != len(self.labelnames):
                raise ValueError(f"{self.name}: expected labels {self.labelnames}, got {values}")
            child = self._children[values] = _Count(self._created())
        return child

    def describe(self) -> Iterable[Metric]:
        return [Metric(self.name, self.documentation, "counter")]

    def collect(self) -> Iterable[Metric]:
        metric = Metric(self.name, self.documentation, "counter")
        created = _created_series()
        for values, child in list(self._children.items()):
            labels = dict(zip(self.labelnames, values, strict=True))
            metric.add_sample(self.name + "_total", labels, child.value)
            if created:
                metric.add_sample(self.name + "_created", labels, child.created)
        return [metric]


class _Times:
    __slots__ = ("bounds", "buckets", "created", "sum")

    def __init__(self, bounds: tuple[float, ...], created: float) -> None:
        self.bounds = bounds
        self.buckets = [0.0] * len(bounds)
        self.sum = 0.0
        self.created = created

    def observe(self, amount: float) -> None:
        self.sum += amount
        for i, bound in enumerate(self.bounds):
            if amount <= bound:
                self.buckets[i] += 1.0
                return


class TimeTallies:
    """A labelled histogram (a prometheus_client collector) with `buckets` (upper bounds, in
    order; +Inf added as prometheus_client does)."""

    def __init__(self, name: str, documentation: str, labelnames: Sequence[str], buckets: Sequence[float],
                 created: Callable[[], float]) -> None:
        self.name = name
        self.documentation = documentation
        self.labelnames = self._labelnames = tuple(labelnames)
        """Label names (`_labelnames` too, as prometheus_client's metrics name them)."""
        bounds = [float(b) for b in buckets]
        if bounds[-1] != float("inf"):
            bounds.append(float("inf"))
        self.bounds = tuple(bounds)
        self._created = created
        self._children: dict[tuple[str, ...], _Times] = {}

    def labels(self, *values: str) -> _Times:
        child = self._children.get(values)
        if child is None:
            if len(values) != len(self.labelnames):
                raise ValueError(f"{self.name}: expected labels {self.labelnames}, got {values}")
            child = self._children[values] = _Times(self.bounds, self._created())
        return child

    def describe(self) -> Iterable[Metric]:
        return [Metric(self.name, self.documentation, "histogram")]

    def collect(self) -> Iterable[Metric]:
        metric = Metric(self.name, self.documentation, "histogram")
        created = _created_series()
        for values, child in list(self._children.items()):
            labels: dict[str, Any] = dict(zip(self.labelnames, values, strict=True))
            total = 0.0
            for bound, count in zip(self.bounds, child.buckets, strict=True):
                total += count
                metric.add_sample(self.name + "_bucket", {**labels, "le": floatToGoString(bound)}, total)  # type: ignore[no-untyped-call]
            metric.add_sample(self.name + "_count", labels, total)
            metric.add_sample(self.name + "_sum", labels, child.sum)
            if created:
                metric.add_sample(self.name + "_created", labels, child.created)
        return [metric]
