"""The classifier wait of one request: one deadline shared by every message of its body.

    deadline = ClassifierDeadline(timeout_s, timer)      one per request (the dispatcher's)
    deadline.start()                                      at the request's first wait on the classifier
    deadline.remaining()                                  seconds left (0 once passed; None before start)

It starts when the request first waits on the classifier: its first classification, or its
first wait for a conversation that another request's classification holds (the router tries the
lease without waiting first). From then on every classification of the request is asked with
what is left (the classifier's own `timeout_s` caps it too) and every lease is waited for at most
that long; a message that would be classified after the deadline is not: it goes where its route
points (reason `classifier_timeout`), one whose lease is still held goes there too (`busy`). So a
webhook waits at most `classifier.timeout_s` for classifications, whatever its body holds (a
WhatsApp batch of 6 first messages from 4 senders behind a hung classifier: one timeout, not 6).
`timer` returns seconds on a monotonic clock.
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["MIN_LEFT_S", "ClassifierDeadline"]

MIN_LEFT_S = 0.01
"""Less than this left counts as passed: no classification fits in it (and the event loop's clock,
which ends a timed-out call, may run a millisecond apart from `timer`)."""


class ClassifierDeadline:
    """One request's classifier deadline (see the module docstring)."""

    __slots__ = ("_ends", "_timeout_s", "_timer")

    def __init__(self, timeout_s: float, timer: Callable[[], float]) -> None:
        self._timeout_s = timeout_s
        self._timer = timer
        self._ends: float | None = None

    @property
    def started(self) -> bool:
        return self._ends is not None

    def start(self) -> None:
        """Start it now, unless it already runs."""
        if self._ends is None:
            self._ends = self._timer() + self._timeout_s

    def remaining(self) -> float | None:
        """Seconds left (0.0 once passed, or less than MIN_LEFT_S left), or None before it started."""
        if self._ends is None:
            return None
        left = self._ends - self._timer()
        return left if left >= MIN_LEFT_S else 0.0
