"""A deadline in the event loop's free time: event-loop lag does not make a healthy backend late.

    async with loop_deadline(0.25):      like asyncio.timeout(0.25), but the time the loop spent
        await store.client.evalsha(...)  busy elsewhere (lag) is not counted

Why: a reply that Redis sent in 0.2 ms waits on the socket until the loop comes back to it; a
saturated or CPU-bound loop (200 concurrent webhooks, a large batch's JSON parse, a garbage
collection) can take hundreds of ms, and a plain deadline then counts the proxy's own lag as the
backend's slowness. Lag is measured by a tick every `TICK_S` seconds, running only while
deadlines are pending: how late each tick ran is lag (`LoopLag.total`). The same tick checks the
pending deadlines (no timer of their own: one fewer timer to set and cancel per Redis call): a
deadline passes at the first tick where the time elapsed since its start, minus the lag seen
since then, reaches its timeout (so up to one tick after it). A backend that does not answer
still expires after `timeout_s` of free loop time (so after longer wall time when the loop is
busy).
"""

from __future__ import annotations

import asyncio
import weakref
from types import TracebackType

TICK_S = 0.005
"""How often the lag tick runs while a deadline is pending (seconds)."""

_LAGS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, LoopLag] = weakref.WeakKeyDictionary()


class LoopLag:
    """Cumulative lateness of one event loop's ticks (seconds, `total`), ticking while a deadline
    is pending (a tick that finds none stops; the next `watch` starts it again)."""

    def __init__(self, loop: asyncio.AbstractEventLoop, tick_s: float = TICK_S) -> None:
        self.total = 0.0
        self._loop = loop
        self._tick_s = tick_s
        self._due = 0.0
        self._handle: asyncio.TimerHandle | None = None
        self._deadlines: set[loop_deadline] = set()

    @property
    def ticking(self) -> bool:
        """True while the tick is scheduled."""
        return self._handle is not None

    def watch(self, deadline: loop_deadline) -> None:
        """Check `deadline` at every tick until `unwatch` or until it passes (starts the tick
        when it is not running)."""
        if self._handle is None:
            self._due = self._loop.time() + self._tick_s
            self._handle = self._loop.call_at(self._due, self._tick)
        self._deadlines.add(deadline)

    def unwatch(self, deadline: loop_deadline) -> None:
        """Stop checking `deadline` (the tick stops at its next run when none is pending)."""
        self._deadlines.discard(deadline)

    def _tick(self) -> None:
        now = self._loop.time()
        if now > self._due:
            self.total += now - self._due
        if self._deadlines:
            passed = [deadline for deadline in self._deadlines if deadline.used(now, self.total)]
            for deadline in passed:
                self._deadlines.discard(deadline)
                deadline.expire()
        if not self._deadlines:
            self._handle = None
            return
        self._due = now + self._tick_s
        self._handle = self._loop.call_at(self._due, self._tick)


_LAST: list[LoopLag] = []
"""The `LoopLag` asked last (a process runs one loop: found without the weak dictionary)."""


def lag_of(loop: asyncio.AbstractEventLoop) -> LoopLag:
    """The `LoopLag` of `loop` (one per loop)."""
    if _LAST and _LAST[0]._loop is loop:
        return _LAST[0]
    lag = _LAGS.get(loop)
    if lag is None:
        lag = _LAGS[loop] = LoopLag(loop)
    _LAST[:] = [lag]
    return lag


class loop_deadline:  # a lower-case name, used like asyncio.timeout
    """`asyncio.timeout(timeout_s)` counting only the loop's free time (see the module
    docstring); raises TimeoutError when it passes. A context manager (async, or plain inside a
    task), used once.

    It cancels the task as `asyncio.timeout` does (and, like it, turns that cancellation into
    TimeoutError on exit, unless the task was also cancelled from elsewhere), checked by the
    loop's lag tick: no `asyncio.Timeout` and no timer of its own."""

    __slots__ = ("_cancelling", "_expired", "_lag", "_lag_at_start", "_start", "_task", "_timeout_s")

    def __init__(self, timeout_s: float) -> None:
        self._timeout_s = timeout_s
        self._expired = False

    async def __aenter__(self) -> None:
        self.__enter__()

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        self.__exit__(exc_type, exc, tb)

    def __enter__(self) -> None:
        """The same deadline as a plain context manager, inside a task (no coroutine to enter)."""
        loop = asyncio.get_running_loop()
        task = asyncio.current_task(loop)
        if task is None:
            raise RuntimeError("loop_deadline should be used inside a task")
        self._task = task
        self._cancelling = task.cancelling()
        lag = self._lag = lag_of(loop)
        self._start = loop.time()
        self._lag_at_start = lag.total
        lag.watch(self)

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._lag.unwatch(self)
        if self._expired and self._task.uncancel() <= self._cancelling and exc_type is asyncio.CancelledError:
            raise TimeoutError from exc

    def used(self, now: float, lag_total: float) -> bool:
        """True when the free loop time since the start (seconds, `now` minus the start minus
        the lag seen since) has reached the timeout."""
        return now - self._start - (lag_total - self._lag_at_start) >= self._timeout_s

    def expire(self) -> None:
        """Cancel the task (the exit turns it into TimeoutError)."""
        self._expired = True
        self._task.cancel()
