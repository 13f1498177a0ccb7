"""TokenBucket, CircuitBreaker and GuardedClassifier, driven by a fake clock (no sleeping)."""

from __future__ import annotations

import asyncio
import json
import logging

import httpx
import pytest
import respx
from groq_fakes import CHAT_URL, FakeClock, completion, request

from stickyroute.classifier.base import Classification, ClassificationRequest, Outcome
from stickyroute.classifier.guard import BreakerState, GuardedClassifier
from stickyroute.classifier.stats import ClassifierStats
from stickyroute.config.model import ClassifierSettings

AGENT = Classification(outcome=Outcome.AGENT, agent="coder", prompt_tokens=100, completion_tokens=2)
NONE = Classification(
    outcome=Outcome.NONE, raw_answer="none", prompt_tokens=100, completion_tokens=1
)
FAIL = Classification(outcome=Outcome.ERROR, error_kind="server_error")


class ScriptedClassifier:
    """Inner classifier returning scripted results; each call takes `call_s` on the fake clock."""

    name = "scripted"

    def __init__(self, clock: FakeClock, *results: Classification, call_s: float = 0.0) -> None:
        self.clock = clock
        self.results = list(results)
        self.call_s = call_s
        self.requests: list[ClassificationRequest] = []

    async def classify(self, request: ClassificationRequest) -> Classification:
        self.requests.append(request)
        self.clock.advance(self.call_s)
        return self.results.pop(0)


class HangingClassifier:
    """Inner classifier that never answers (until cancelled)."""

    name = "hanging"

    def __init__(self) -> None:
        self.started = asyncio.Event()

    async def classify(self, request: ClassificationRequest) -> Classification:
        self.started.set()
        await asyncio.Event().wait()
        raise AssertionError("unreachable")  # pragma: no cover


class RaisingClassifier:
    name = "raising"

    async def classify(self, request: ClassificationRequest) -> Classification:
        raise RuntimeError("bug")


def guard(inner, clock: FakeClock, **settings: object) -> GuardedClassifier:
    config = ClassifierSettings(**settings)  # type: ignore[arg-type]
    return GuardedClassifier(inner, config, ClassifierStats(), clock)


# ---------------------------------------------------------------- GuardedClassifier: budget


async def test_budget_exhaustion_skips_the_classifier_until_the_bucket_refills() -> None:
    clock = FakeClock(100.0)
    inner = ScriptedClassifier(clock, AGENT, AGENT, AGENT)
    guarded = guard(inner, clock, calls_per_minute=2)

    first = await guarded.classify(request())
    second = await guarded.classify(request())
    third = await guarded.classify(request())

    assert [r.outcome for r in (first, second, third)] == [
        Outcome.AGENT, Outcome.AGENT, Outcome.BUDGET,
    ]
    assert third == Classification(outcome=Outcome.BUDGET)
    assert len(inner.requests) == 2
    clock.advance(29.0)
    assert (await guarded.classify(request())).outcome is Outcome.BUDGET
    clock.advance(1.0)  # 30 s at 2 calls per minute = one token
    assert (await guarded.classify(request())).outcome is Outcome.AGENT
    assert len(inner.requests) == 3
    assert guarded.stats.snapshot()["channels"]["telegram"]["budget_skips"] == 2


async def test_budget_is_per_channel() -> None:
    clock = FakeClock()
    inner = ScriptedClassifier(clock, AGENT, AGENT)
    guarded = guard(inner, clock, calls_per_minute=1)

    a = await guarded.classify(request(channel="telegram"))
    b = await guarded.classify(request(channel="telegram"))
    c = await guarded.classify(request(channel="whatsapp"))

    assert [r.outcome for r in (a, b, c)] == [Outcome.AGENT, Outcome.BUDGET, Outcome.AGENT]


async def test_zero_calls_per_minute_never_calls() -> None:
    clock = FakeClock()
    inner = ScriptedClassifier(clock)
    guarded = guard(inner, clock, calls_per_minute=0)

    assert (await guarded.classify(request())).outcome is Outcome.BUDGET
    clock.advance(3600.0)
    assert (await guarded.classify(request())).outcome is Outcome.BUDGET
    assert inner.requests == []


async def test_unprotected_guard_has_no_budget_or_breaker() -> None:
    clock = FakeClock()
    inner = ScriptedClassifier(clock, FAIL, FAIL, AGENT)
    guarded = GuardedClassifier(
        inner, ClassifierSettings(calls_per_minute=1, breaker_failures=1), ClassifierStats(), clock,
        protect=False,
    )

    results = [await guarded.classify(request()) for _ in range(3)]

    assert [r.outcome for r in results] == [Outcome.ERROR, Outcome.ERROR, Outcome.AGENT]


# ---------------------------------------------------------------- GuardedClassifier: breaker


async def test_breaker_opens_after_n_failures_and_closes_after_a_successful_trial() -> None:
    clock = FakeClock(0.0)
    inner = ScriptedClassifier(clock, FAIL, FAIL, NONE, AGENT)
    guarded = guard(inner, clock, breaker_failures=2, breaker_cooldown_s=10.0)

    assert (await guarded.classify(request())).outcome is Outcome.ERROR
    assert (await guarded.classify(request())).outcome is Outcome.ERROR
    skipped = await guarded.classify(request())
    clock.advance(9.999)
    still_skipped = await guarded.classify(request())

    assert skipped == still_skipped == Classification(outcome=Outcome.OPEN)
    assert len(inner.requests) == 2
    clock.advance(0.001)
    assert guarded.breaker.state(clock()) is BreakerState.HALF_OPEN
    assert (await guarded.classify(request())).outcome is Outcome.NONE   # trial succeeds
    assert guarded.breaker.state(clock()) is BreakerState.CLOSED
    assert (await guarded.classify(request())).outcome is Outcome.AGENT
    snapshot = guarded.stats.snapshot()["total"]
    assert snapshot["open_skips"] == 2
    assert snapshot["failures"]["server_error"] == 2
    assert snapshot["calls"] == 4


async def test_failed_trial_reopens_the_breaker() -> None:
    clock = FakeClock(0.0)
    inner = ScriptedClassifier(clock, FAIL, FAIL)
    guarded = guard(inner, clock, breaker_failures=1, breaker_cooldown_s=5.0)

    await guarded.classify(request())
    clock.advance(5.0)
    trial = await guarded.classify(request())
    after = await guarded.classify(request())

    assert (trial.outcome, after.outcome) == (Outcome.ERROR, Outcome.OPEN)
    assert guarded.breaker.state(clock() + 4.9) is BreakerState.OPEN


async def test_budget_skip_in_half_open_keeps_the_trial_for_later() -> None:
    clock = FakeClock(0.0)
    inner = ScriptedClassifier(clock, FAIL, AGENT)
    guarded = guard(inner, clock, breaker_failures=1, breaker_cooldown_s=10.0, calls_per_minute=1)

    await guarded.classify(request())              # spends the only token, opens the breaker
    clock.advance(10.0)                            # half-open, but only 1/6 of a token back
    assert (await guarded.classify(request())).outcome is Outcome.BUDGET
    clock.advance(50.0)                            # a full token again
    assert (await guarded.classify(request())).outcome is Outcome.AGENT
    assert guarded.breaker.state(clock()) is BreakerState.CLOSED


async def test_cancelled_trial_is_released() -> None:
    clock = FakeClock(0.0)
    hanging = HangingClassifier()
    settings = ClassifierSettings(breaker_failures=1, breaker_cooldown_s=10.0, timeout_s=60.0)
    guarded = GuardedClassifier(hanging, settings, ClassifierStats(), clock)
    guarded.breaker.record_failure(0.0)
    clock.advance(10.0)

    task = asyncio.create_task(guarded.classify(request()))
    await asyncio.wait_for(hanging.started.wait(), timeout=10)
    assert (await guarded.classify(request())).outcome is Outcome.OPEN  # trial in flight
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task

    assert guarded.breaker.allow(clock()) is True


# ---------------------------------------------------------------- GuardedClassifier: timeout


async def test_hard_timeout_turns_a_hanging_classifier_into_a_timeout_error() -> None:
    clock = FakeClock()
    hanging = HangingClassifier()
    settings = ClassifierSettings(timeout_s=0.01, breaker_failures=1)
    guarded = GuardedClassifier(hanging, settings, ClassifierStats(), clock)

    result = await asyncio.wait_for(guarded.classify(request()), timeout=10)

    assert result == Classification(outcome=Outcome.ERROR, error_kind="timeout")
    assert guarded.stats.snapshot()["total"]["failures"]["timeout"] == 1
    assert guarded.breaker.state(clock()) is BreakerState.OPEN


async def test_a_classifier_that_raises_is_an_error_not_a_crash() -> None:
    clock = FakeClock()
    guarded = guard(RaisingClassifier(), clock)

    result = await guarded.classify(request())

    assert result == Classification(outcome=Outcome.ERROR, error_kind="error")
    assert guarded.stats.snapshot()["total"]["failures"]["error"] == 1


async def test_latency_is_measured_with_the_injected_clock() -> None:
    clock = FakeClock(0.0)
    inner = ScriptedClassifier(clock, AGENT, call_s=0.25)
    guarded = guard(inner, clock)

    result = await guarded.classify(request())

    assert result.latency_s == 0.25
    assert guarded.stats.snapshot()["total"]["latency_ms"]["max"] == 250.0


# ---------------------------------------------------------------- GuardedClassifier: logging


async def test_one_log_line_per_call_without_message_text(caplog: pytest.LogCaptureFixture) -> None:
    clock = FakeClock(0.0)
    guarded = guard(ScriptedClassifier(clock, AGENT, call_s=0.125), clock)
    caplog.set_level(logging.INFO, logger="stickyroute.classifier")

    await guarded.classify(request("secret plans for the refactor"))

    records = [r for r in caplog.records if r.name == "stickyroute.classifier"]
    assert len(records) == 1
    assert records[0].getMessage() == (
        'classifier channel="telegram" provider="scripted" outcome="agent" agent="coder" '
        "error_kind=null latency_ms=125.0 prompt_tokens=100 completion_tokens=2"
    )
    assert records[0].fields == {  # type: ignore[attr-defined]
        "channel": "telegram", "provider": "scripted", "outcome": "agent", "agent": "coder",
        "error_kind": None, "latency_ms": 125.0, "prompt_tokens": 100, "completion_tokens": 2,
    }
    assert "secret" not in caplog.text


async def test_log_text_adds_the_message_and_answer(caplog: pytest.LogCaptureFixture) -> None:
    clock = FakeClock(0.0)
    guarded = GuardedClassifier(
        ScriptedClassifier(clock, NONE), ClassifierSettings(), ClassifierStats(), clock,
        log_text=True,
    )
    caplog.set_level(logging.INFO, logger="stickyroute.classifier")

    await guarded.classify(request('say "hi"'))

    (record,) = [r for r in caplog.records if r.name == "stickyroute.classifier"]
    assert record.getMessage().endswith(' text="say \\"hi\\"" answer="none"')
    assert record.fields["text"] == 'say "hi"'  # type: ignore[attr-defined]


async def test_skips_are_logged_too(caplog: pytest.LogCaptureFixture) -> None:
    clock = FakeClock(0.0)
    guarded = guard(ScriptedClassifier(clock), clock, calls_per_minute=0)
    caplog.set_level(logging.INFO, logger="stickyroute.classifier")

    await guarded.classify(request())

    (record,) = [r for r in caplog.records if r.name == "stickyroute.classifier"]
    fields = record.fields  # type: ignore[attr-defined]
    assert json.loads(json.dumps(fields))["outcome"] == "budget"


# ---------------------------------------------------------------- guard + Groq end to end


async def test_groq_failures_and_tokens_are_accounted_through_the_guard(
    groq_api: respx.MockRouter, make_groq
) -> None:
    groq_api.post(CHAT_URL).mock(side_effect=[
        httpx.Response(200, json=completion("coder", 120, 2)),
        httpx.Response(429, json={"error": {"message": "slow down"}}),
        httpx.Response(500, json={"error": {"message": "boom"}}),
        httpx.ConnectError("refused"),
        httpx.ReadTimeout("slow"),
        httpx.Response(200, json=completion("I think coder", 130, 4)),
        httpx.Response(200, json={"choices": []}),
        httpx.Response(401, json={"error": {"message": "Invalid API Key"}}),
    ])
    clock = FakeClock(0.0)
    settings = ClassifierSettings(breaker_failures=100)
    guarded = GuardedClassifier(make_groq(settings), settings, ClassifierStats(), clock)

    outcomes = [(r.outcome, r.agent, r.error_kind)
                for r in [await guarded.classify(request()) for _ in range(8)]]

    assert outcomes == [
        (Outcome.AGENT, "coder", None),
        (Outcome.ERROR, None, "rate_limit"),
        (Outcome.ERROR, None, "server_error"),
        (Outcome.ERROR, None, "server_error"),
        (Outcome.ERROR, None, "timeout"),
        (Outcome.NONE, None, None),
        (Outcome.ERROR, None, "unparseable"),
        (Outcome.ERROR, None, "auth"),
    ]
    total = guarded.stats.snapshot()["total"]
    assert total["calls"] == 8
    assert total["successes"] == 2
    assert (total["agent_answers"], total["none_answers"], total["answers_unmatched"]) == (1, 1, 1)
    assert total["failures"] == {"timeout": 1, "rate_limit": 1, "auth": 1, "server_error": 2, "unparseable": 1}
    assert (total["prompt_tokens"], total["completion_tokens"]) == (250, 6)
    assert guarded.name == "groq"


# ---------------------------------------------------------------- GuardedClassifier: synchronous path


async def test_the_keyword_classifier_is_answered_synchronously_with_the_same_stats_and_line(
        caplog: pytest.LogCaptureFixture) -> None:
    """`classify_now` (no budget or breaker asked, an inner that never waits): the same answer,
    stats and log line as `classify`, without a task or a timeout."""
    from stickyroute.classifier.keywords import KeywordClassifier

    def scores(text: str) -> dict[str, int]:
        return {"coder": 6} if "refactor" in text else {}

    clock = FakeClock(0.0)
    answers, lines, stats = [], [], []
    caplog.set_level(logging.INFO, logger="stickyroute.classifier")
    for synchronous in (False, True):
        guarded = GuardedClassifier(KeywordClassifier(scores, 6), ClassifierSettings(), ClassifierStats(), clock,
                                    protect=False)
        caplog.clear()
        for text in ("please refactor this", "nothing to see"):
            answer = guarded.classify_now(request(text)) if synchronous else await guarded.classify(request(text))
            answers.append(answer)
        lines.append([r.getMessage() for r in caplog.records if r.name == "stickyroute.classifier"])
        stats.append(guarded.stats.snapshot())
    assert answers[:2] == answers[2:] == [Classification(outcome=Outcome.AGENT, agent="coder"),
                                          Classification(outcome=Outcome.NONE)]
    assert lines[0] == lines[1] == [
        'classifier channel="telegram" provider="keywords" outcome="agent" agent="coder" error_kind=null '
        "latency_ms=0.0 prompt_tokens=0 completion_tokens=0",
        'classifier channel="telegram" provider="keywords" outcome="none" agent=null error_kind=null '
        "latency_ms=0.0 prompt_tokens=0 completion_tokens=0"]
    assert stats[0] == stats[1]


def test_classify_now_declines_when_the_guard_protects_or_the_inner_classifier_waits() -> None:
    from stickyroute.classifier.keywords import KeywordClassifier

    clock = FakeClock(0.0)
    protected = GuardedClassifier(KeywordClassifier(lambda _t: {}, 6), ClassifierSettings(), ClassifierStats(), clock)
    waiting = GuardedClassifier(ScriptedClassifier(clock, AGENT), ClassifierSettings(), ClassifierStats(), clock,
                                protect=False)
    assert (protected.classify_now(request()), waiting.classify_now(request())) == (None, None)


@pytest.mark.parametrize("value", [None, 0, 12, -3, 0.0, 0.125, 1e-3, 1234.567, 1e16, 1e-7, float("nan"), 'x"y', "é",
                                   True, False, "a\nb"])
def test_a_line_value_is_written_as_the_json_encoder_writes_it(value: object) -> None:
    from stickyroute.classifier.guard import _ENCODE, _json

    assert _json(value) == _ENCODE(value)
