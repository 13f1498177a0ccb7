"""One classifier deadline per request (`routing.deadline`): it starts at the request's first wait
on the classifier, every classification is asked with what is left, a message past it is not
classified (`classifier_timeout`) and a held conversation is waited for at most what is left
(`busy`). The whole request on a real server: tests/proxy/test_classifier_deadline.py."""

from __future__ import annotations

import asyncio

import pytest

from stickyroute.classifier.base import Outcome
from stickyroute.classifier.guard import GuardedClassifier
from stickyroute.classifier.stats import ClassifierStats
from stickyroute.clock import monotonic
from stickyroute.config.model import ClassifierSettings, Strategy
from stickyroute.routing.deadline import MIN_LEFT_S, ClassifierDeadline
from tests.classifier.groq_fakes import request
from tests.scenario import CHANNEL, Scenario, ScriptedClassifier, key, make_config, text

HEUR = Strategy.STICKY_HEURISTIC
BUG = "my python script has a bug"
HANG_GUARD_S = 5.0


class Timer:
    def __init__(self, t: float = 100.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


def test_the_deadline_starts_once_and_counts_down_to_zero() -> None:
    timer = Timer()
    deadline = ClassifierDeadline(2.0, timer)
    before = (deadline.started, deadline.remaining())
    deadline.start()
    timer.t = 100.5
    deadline.start()  # already running: not moved
    half = deadline.remaining()
    timer.t = 102.0 - MIN_LEFT_S / 2
    almost = deadline.remaining()
    timer.t = 103.0
    assert (before, half, almost, deadline.remaining()) == ((False, None), 1.5, 0.0, 0.0)


async def test_a_classification_is_asked_with_what_is_left_of_the_request_deadline() -> None:
    timer = Timer()
    sc = Scenario(make_config(HEUR), ScriptedClassifier("coder"))
    deadline = ClassifierDeadline(2.0, timer)
    deadline.start()
    timer.t = 100.75
    decision = await sc.router.decide(CHANNEL, text(BUG), sc.now, deadline)
    assert ((decision.agent, decision.reason), [c.timeout_s for c in sc.classifier.calls]) == (
        ("coder", "classified"), [1.25])


async def test_without_a_deadline_a_classification_has_only_the_classifiers_own_timeout() -> None:
    sc = Scenario(make_config(HEUR), ScriptedClassifier("coder"))
    await sc.router.decide(CHANNEL, text(BUG), sc.now)
    assert [c.timeout_s for c in sc.classifier.calls] == [None]


@pytest.mark.parametrize(("seeded", "expected", "stored"), [
    pytest.param(None, ("general", "classifier_timeout"), None, id="first message: the default, nothing stored"),
    pytest.param("billing", ("billing", "classifier_timeout"), ("billing", False, None, 0),
                 id="a live route: stays on it"),
])
async def test_past_the_deadline_a_message_is_not_classified(seeded, expected, stored) -> None:
    timer = Timer()
    sc = Scenario(make_config(HEUR), ScriptedClassifier("coder"))
    if seeded is not None:
        await sc.seed(seeded, age_s=60.0, candidate="coder", counter=1)  # one more divergence asks the classifier
    deadline = ClassifierDeadline(2.0, timer)
    deadline.start()
    timer.t = 102.0
    decision = await sc.router.decide(CHANNEL, text(BUG), sc.now, deadline)
    assert ((decision.agent, decision.reason), sc.calls, await sc.state()) == (expected, 0, stored)


async def test_a_wait_for_a_held_conversation_starts_the_deadline_and_ends_with_it() -> None:
    sc = Scenario(make_config(HEUR, classifier_timeout_s=30.0), ScriptedClassifier("coder"))
    await sc.seed("billing")
    lease = await sc.conversations.acquire(key(), sc.now)  # another request
    try:
        deadline = ClassifierDeadline(0.2, monotonic)
        decision = await asyncio.wait_for(sc.router.decide(CHANNEL, text(BUG), sc.now, deadline), HANG_GUARD_S)
    finally:
        await sc.conversations.release(lease)
    assert ((decision.agent, decision.reason), deadline.started, deadline.remaining(), sc.calls) == (
        ("billing", "busy"), True, 0.0, 0)


async def test_once_the_deadline_passed_a_held_conversation_is_not_waited_for() -> None:
    timer = Timer()
    sc = Scenario(make_config(HEUR, classifier_timeout_s=30.0), ScriptedClassifier("coder"))
    await sc.seed("billing")
    lease = await sc.conversations.acquire(key(), sc.now)
    deadline = ClassifierDeadline(2.0, timer)
    deadline.start()
    timer.t = 103.0
    try:  # the fake timer never moves: only a wait of zero can end this
        decision = await asyncio.wait_for(sc.router.decide(CHANNEL, text(BUG), sc.now, deadline), HANG_GUARD_S)
    finally:
        await sc.conversations.release(lease)
    assert (decision.agent, decision.reason) == ("billing", "busy")


async def test_the_guard_cuts_a_call_at_what_is_left_of_the_request_deadline() -> None:
    class Hung:
        name = "hung"

        async def classify(self, _request):
            await asyncio.Event().wait()

    guard = GuardedClassifier(Hung(), ClassifierSettings(timeout_s=60.0), ClassifierStats(), clock=lambda: 0.0)
    cut = request()
    result = await asyncio.wait_for(guard.classify(type(cut)(cut.channel, cut.text, cut.candidates, cut.current,
                                                             cut.context, timeout_s=0.05)), HANG_GUARD_S)
    assert (result.outcome, result.error_kind) == (Outcome.ERROR, "timeout")
