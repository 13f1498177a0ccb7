"""Recent activity in time buckets, for a chart of the last 15 minutes (the admin API's
`GET /v1/series`): requests per status class, decisions per reason, classifier calls and tokens.

    series = Series(bucket_s=10.0, span_s=900.0)
    series.bucket(now)                    the bucket of `now` (seconds, the dispatcher's clock)
    series.window(now, span_s)            {"bucket_s", "start", "end", "buckets": [...]} oldest first

A bucket is kept while it is within `span_s` of the newest one; older ones are dropped as time
moves on (at most span_s / bucket_s + 1 buckets, whatever the traffic). Buckets of one process:
with `--workers`, of the worker serving the admin listener.
"""

from __future__ import annotations

import math
from collections import deque
from typing import Any

__all__ = ["Bucket", "Series"]


class Bucket:
    """Counts of one `bucket_s` interval starting at `start` (seconds)."""

    __slots__ = ("classifier_calls", "decisions", "requests", "start", "tokens")

    def __init__(self, start: float) -> None:
        self.start = start
        self.requests: dict[str, int] = {}
        """Requests answered, by status class ("2xx"...)."""
        self.decisions: dict[str, int] = {}
        """Routing decisions, by reason."""
        self.classifier_calls = 0
        self.tokens = 0
        """Prompt and completion tokens the classifier's provider reported (0 for keywords)."""

    def as_dict(self) -> dict[str, Any]:
        return {"start": self.start, "requests": dict(sorted(self.requests.items())),
                "decisions": dict(sorted(self.decisions.items())),
                "classifier_calls": self.classifier_calls, "tokens": self.tokens}


class Series:
    """Time buckets of `bucket_s` seconds over the last `span_s` seconds (see the module docstring)."""

    def __init__(self, bucket_s: float = 10.0, span_s: float = 900.0) -> None:
        self.bucket_s = bucket_s
        self.span_s = span_s
        self._buckets: deque[Bucket] = deque()
        self._index = -math.inf

    def bucket(self, now: float) -> Bucket:
        """The bucket holding `now` (a clock going back counts into the newest bucket)."""
        index = math.floor(now / self.bucket_s)
        if index <= self._index:
            return self._buckets[-1] if index == self._index else self._older(index)
        self._index = index
        bucket = Bucket(index * self.bucket_s)
        self._buckets.append(bucket)
        horizon = bucket.start - self.span_s
        while self._buckets[0].start < horizon:
            self._buckets.popleft()
        return bucket

    def _older(self, index: int) -> Bucket:
        start = index * self.bucket_s
        for bucket in reversed(self._buckets):
            if bucket.start <= start:
                return bucket
        return self._buckets[0]

    def window(self, now: float, span_s: float | None = None) -> dict[str, Any]:
        """The buckets of the last `span_s` seconds (default all kept) up to `now`, oldest first;
        intervals without traffic have no bucket (the chart draws them as zero)."""
        span = self.span_s if span_s is None else min(span_s, self.span_s)
        end = (math.floor(now / self.bucket_s) + 1) * self.bucket_s
        start = end - span
        return {"bucket_s": self.bucket_s, "start": start, "end": end,
                "buckets": [b.as_dict() for b in self._buckets if start <= b.start < end]}
