"""The only place that reads the wall clock; everything else takes `now` (seconds) as an argument."""

from __future__ import annotations

import time


def now() -> float:
    """Current time in seconds (float, `time.time()` epoch), for route TTLs and budgets."""
    return time.time()


def monotonic() -> float:
    """Seconds on a clock that never steps back (`time.monotonic()`): for budgets, breakers and
    latencies, which must not jump when the system clock is set."""
    return time.monotonic()


class FakeClock:
    """A clock for tests and replays: `clock()` returns `t`; `advance(seconds)` moves it."""

    def __init__(self, start: float = 1_700_000_000.0) -> None:
        self.t = start

    def __call__(self) -> float:
        return self.t

    def advance(self, seconds: float) -> float:
        """Move the clock forward by `seconds`; returns the new time."""
        self.t += seconds
        return self.t
