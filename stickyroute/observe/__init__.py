"""Observation: every request accounted for (decision lines, Prometheus metrics, /stats views),
the recent decisions ring with live subscribers, and time buckets for a 15-minute chart.

    accounting.py   Accounting: the one place the dispatcher and the webhook app report to
    metrics.py      Metrics: the Prometheus series of the request path, and the /stats views
    ring.py         DecisionRing, Subscription: the last decisions and their live readers
    series.py       Series, Bucket: requests, decisions, classifier calls per time bucket
"""

from stickyroute.observe.accounting import Accounting, Entry, conversation_of
from stickyroute.observe.metrics import FAILURE_KINDS, Metrics, status_class
from stickyroute.observe.ring import DecisionRing, Subscription
from stickyroute.observe.series import Bucket, Series

__all__ = [
    "FAILURE_KINDS",
    "Accounting",
    "Bucket",
    "DecisionRing",
    "Entry",
    "Metrics",
    "Series",
    "Subscription",
    "conversation_of",
    "status_class",
]
