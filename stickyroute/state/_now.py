"""The memory backend's cache time: a `ContextVar` each method sets to its `now` argument.

A context variable belongs to the calling task, so a decision awaiting the classifier can never
see a time set by another conversation's task. cachetools' `timer` reads it (`timer()`).
"""

from __future__ import annotations

import contextvars

NOW: contextvars.ContextVar[float] = contextvars.ContextVar("stickyroute_state_now", default=0.0)


def timer() -> float:
    """The `now` last set in this task (seconds on the caller's clock)."""
    return NOW.get()
