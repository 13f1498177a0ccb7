"""Protection around any Classifier: per-channel call budget, circuit breaker, hard timeout.

    GuardedClassifier.classify(request)
      breaker open (cool-down running)   -> Outcome.OPEN    (not called; reason classifier_open)
      channel's token bucket empty       -> Outcome.BUDGET  (not called; reason classifier_budget)
      else inner.classify in timeout_s   -> its result, or Outcome.ERROR kind `timeout` (timeout_s, or
                                            less: what is left of the request's deadline)
    then: breaker and stats updated, one structured log line.

The budget is a `stickyroute.state.budget.ClassifierBudget` (a `TokenBucket` per channel, in this
process or, with the Redis state backend, shared by every replica); the `CircuitBreaker` is a
small pure state machine driven by `now` (seconds) and stays per process (a provider outage is
seen by each replica within `breaker_failures` calls). Libraries were considered: aiolimiter
reads the event loop's clock, pybreaker/aiobreaker read the wall clock (datetime), pyrate-limiter
is a sliding-window log with its own clock classes in milliseconds; none is driven by our
injected clock, so both are written here.
"""

from __future__ import annotations

import asyncio
import enum
import json
import logging
import math
from collections.abc import Callable
from dataclasses import replace

from stickyroute.classifier.base import Classification, ClassificationRequest, Classifier, Outcome
from stickyroute.classifier.stats import ClassifierStats
from stickyroute.config.model import ClassifierSettings
from stickyroute.state.budget import ClassifierBudget, MemoryBudget, TokenBucket

logger = logging.getLogger("stickyroute.classifier")
_ENCODE = json.JSONEncoder(ensure_ascii=False).encode
"""One encoder for every classifier line (`json.dumps(v, ensure_ascii=False)` builds a new one per call)."""


def _json(value: object) -> str:
    """`_ENCODE(value)`, with None, int and finite floats written directly (the same text)."""
    kind = type(value)
    if value is None:
        return "null"
    if kind is int:
        return int.__repr__(value)
    if kind is float and math.isfinite(value):  # type: ignore[arg-type]
        return float.__repr__(value)
    return _ENCODE(value)

__all__ = ["BreakerState", "CircuitBreaker", "GuardedClassifier", "TokenBucket"]


class BreakerState(enum.Enum):
    """Circuit breaker state."""

    CLOSED = "closed"        # calls go through; consecutive failures are counted
    OPEN = "open"            # calls are skipped until the cool-down has passed
    HALF_OPEN = "half_open"  # cool-down over: one trial call decides closed or open again


class CircuitBreaker:
    """Opens after `failures` consecutive failures; after `cooldown_s` lets one trial through.

    A successful trial closes it, a failed one reopens it for another cool-down. While the
    trial is in flight other calls are refused. `failures <= 0` disables the breaker.
    """

    __slots__ = ("_consecutive", "_cooldown_s", "_opened_at", "_threshold", "_trial")

    def __init__(self, failures: int, cooldown_s: float) -> None:
        self._threshold = failures
        self._cooldown_s = cooldown_s
        self._consecutive = 0
        self._opened_at: float | None = None
        self._trial = False

    def state(self, now: float) -> BreakerState:
        """The state at `now` (seconds)."""
        if self._opened_at is None:
            return BreakerState.CLOSED
        if now - self._opened_at >= self._cooldown_s:
            return BreakerState.HALF_OPEN
        return BreakerState.OPEN

    def allow(self, now: float) -> bool:
        """May a call go through at `now`? In half-open this reserves the single trial."""
        state = self.state(now)
        if state is BreakerState.CLOSED:
            return True
        if state is BreakerState.HALF_OPEN and not self._trial:
            self._trial = True
            return True
        return False

    def release(self) -> None:
        """Give back a reserved trial that was not used (budget skip, cancelled call)."""
        self._trial = False

    def record_success(self) -> None:
        """A call succeeded: close and forget past failures."""
        self._consecutive = 0
        self._opened_at = None
        self._trial = False

    def record_failure(self, now: float) -> None:
        """A call failed at `now`: count it; open at the threshold; a failed trial reopens."""
        if self._trial:
            self._trial = False
            self._opened_at = now
            return
        if self._opened_at is not None or self._threshold <= 0:
            return
        self._consecutive += 1
        if self._consecutive >= self._threshold:
            self._opened_at = now


class GuardedClassifier:
    """Wraps a Classifier with budget, breaker, hard timeout, stats and a log line per call.

    `clock()` returns seconds (monotonic). Budget: `budget` (default a `MemoryBudget`: one
    bucket per `request.channel`, refilled at `settings.calls_per_minute` with a burst capacity
    of one minute's worth, at least 1; 0 calls per minute means never call), asked at
    `budget_clock()` (default: the call's start on `clock`; the wall clock when replicas share
    the budget). Breaker: one per guard (a provider outage is not per
    channel), `settings.breaker_failures` / `settings.breaker_cooldown_s`. `protect=False`
    skips budget and breaker (for a zero-cost classifier such as the heuristic) but keeps the
    timeout, stats and logs. Message text is logged only when `log_text` is true (a bool, or
    a function of the channel name: each channel's own `log_text` setting).
    """

    def __init__(
        self,
        inner: Classifier,
        settings: ClassifierSettings,
        stats: ClassifierStats,
        clock: Callable[[], float],
        *,
        log_text: bool | Callable[[str], bool] = False,
        protect: bool = True,
        budget: ClassifierBudget | None = None,
        budget_clock: Callable[[], float] | None = None,
    ) -> None:
        self.name = inner.name
        self.inner = inner
        self.stats = stats
        self.breaker = CircuitBreaker(settings.breaker_failures, settings.breaker_cooldown_s)
        self._settings = settings
        self._clock = clock
        self._log_text = log_text
        self._protect = protect
        self.budget = budget if budget is not None else MemoryBudget(settings.calls_per_minute)
        self._budget_clock = budget_clock
        self._now: Callable[[ClassificationRequest], Classification] | None = (
            None if protect else getattr(inner, "classify_now", None))
        """The inner classifier's synchronous answer, when it has one and nothing is asked first."""

    async def aclose(self) -> None:
        """Close the inner classifier's resources, if it has any."""
        aclose = getattr(self.inner, "aclose", None)
        if aclose is not None:
            await aclose()

    async def classify(self, request: ClassificationRequest) -> Classification:
        """Classify through the guards; never raises (except the caller's own cancellation)."""
        start = self._clock()
        trial = False
        if self._protect:
            trial = self.breaker.state(start) is BreakerState.HALF_OPEN
            if not self.breaker.allow(start):
                return self._done(request, Classification(outcome=Outcome.OPEN))
            budget_now = start if self._budget_clock is None else self._budget_clock()
            try:
                allowed = await self.budget.take(request.channel, budget_now)
            except BaseException:
                if trial:
                    self.breaker.release()
                raise
            if not allowed:
                if trial:
                    self.breaker.release()
                return self._done(request, Classification(outcome=Outcome.BUDGET))
        try:
            result = await self._call(request)
        except asyncio.CancelledError:
            if trial:
                self.breaker.release()
            raise
        return self._settled(request, result, start, trial)

    def classify_now(self, request: ClassificationRequest) -> Classification | None:
        """The same answer, stats and log line as `classify` without awaiting anything, when the
        inner classifier answers synchronously (`classify_now`, the keyword classifier) and no
        budget or breaker is asked (`protect=False`); None otherwise (then await `classify`).
        A classifier that cannot wait needs no timeout."""
        answer = self._now
        if answer is None:
            return None
        start = self._clock()
        try:
            result = answer(request)
        except Exception:  # a classifier must not raise; keep the webhook alive if one does
            logger.exception("classifier %s raised instead of returning an error", self.name)
            result = Classification(outcome=Outcome.ERROR, error_kind="error")
        return self._settled(request, result, start, False)

    async def _call(self, request: ClassificationRequest) -> Classification:
        """The inner classifier's answer within the timeout (errors as Outcome.ERROR)."""
        timeout_s = self._settings.timeout_s
        if request.timeout_s is not None:  # what is left of the request's deadline
            timeout_s = min(timeout_s, request.timeout_s)
        try:
            async with asyncio.timeout(timeout_s):
                result = await self.inner.classify(request)
        except TimeoutError:
            result = Classification(outcome=Outcome.ERROR, error_kind="timeout")
        except Exception:  # a classifier must not raise; keep the webhook alive if one does
            logger.exception("classifier %s raised instead of returning an error", self.name)
            result = Classification(outcome=Outcome.ERROR, error_kind="error")
        return result

    def _settled(self, request: ClassificationRequest, result: Classification, start: float,
                 trial: bool) -> Classification:
        """Latency, breaker, stats and the log line of one answered call that started at `start`."""
        end = self._clock()
        result = replace(result, latency_s=max(0.0, end - start))
        if result.outcome is Outcome.ERROR:
            self.breaker.record_failure(end)
        elif result.outcome in (Outcome.AGENT, Outcome.NONE):
            self.breaker.record_success()
        elif trial:  # an inner guard skipped the call: the trial is still to be made
            self.breaker.release()
        return self._done(request, result)

    def _done(self, request: ClassificationRequest, result: Classification) -> Classification:
        self.stats.record(request.channel, self.name, result)
        fields: dict[str, object] = {
            "channel": request.channel,
            "provider": self.name,
            "outcome": result.outcome.value,
            "agent": result.agent,
            "error_kind": result.error_kind,
            "latency_ms": round(result.latency_s * 1000.0, 3),
            "prompt_tokens": result.prompt_tokens,
            "completion_tokens": result.completion_tokens,
        }
        if self._log_text(request.channel) if callable(self._log_text) else self._log_text:
            fields["text"] = request.text
            fields["answer"] = result.raw_answer
        line = " ".join([f"{k}={_json(v)}" for k, v in fields.items()])
        logger.info("classifier %s", line, extra={"event": "classifier", "fields": fields})
        return result
