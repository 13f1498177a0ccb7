"""Every request accounted for (issue #11): the decision line of each routed item and of each
request decided as a whole, the counters behind /stats and /metrics, switches, upstream
forwards, what the webhook app answers itself, an operator's change.

The first three tests moved here from tests/test_router.py when the decision line moved from the
router to the accounting (written once the request is answered, with its status)."""

from __future__ import annotations

import json
import logging

import pytest
from prometheus_client import CollectorRegistry, generate_latest

from stickyroute.classifier.base import Classification, Outcome
from stickyroute.clock import FakeClock
from stickyroute.config.model import Binding, ChannelType, Strategy
from stickyroute.observe import Accounting
from stickyroute.routing.engine import Decision
from tests.scenario import CHANNEL, T0, USER, Scenario, ScriptedClassifier, key, make_config, text

HEUR = Strategy.STICKY_HEURISTIC
INVOICE = "my invoice shows a refund that is still pending"
BUG = "there is a bug in my python script"


def lines(caplog: pytest.LogCaptureFixture) -> list[dict[str, object]]:
    return [json.loads(r.getMessage()) for r in caplog.records if r.name == "stickyroute.decision"]


def accounting() -> Accounting:
    return Accounting(CollectorRegistry(), FakeClock(T0))


async def routed(sc: Scenario, acc: Accounting, *messages: str, status: int = 200) -> None:
    """Decide each message with the scenario's router and account it as one answered request."""
    for message in messages:
        envelope = text(message)
        decision = await sc.decide(envelope, sc.clock())
        acc.request(sc.config.channels[CHANNEL], sc.clock(), [(envelope, decision, status)], status)


@pytest.mark.parametrize(("log_text", "with_text"), [(False, False), (True, True)])
async def test_each_decision_is_one_structured_log_line(
    caplog: pytest.LogCaptureFixture, log_text: bool, with_text: bool
) -> None:
    caplog.set_level(logging.INFO, logger="stickyroute.decision")
    sc = Scenario(make_config(HEUR, log_text=log_text))
    await sc.seed("coder")
    await routed(sc, accounting(), INVOICE, "yes")
    expected: list[dict[str, object]] = [
        {"channel": CHANNEL, "conversation": key().hashed(), "kind": "text", "agent": "coder",
         "reason": "divergence_pending", "status": 200, "scores": {"billing": 12}},
        {"channel": CHANNEL, "conversation": key().hashed(), "kind": "text", "agent": "coder", "reason": "short",
         "status": 200},
    ]
    if with_text:
        expected[0]["text"], expected[1]["text"] = INVOICE, "yes"
    assert lines(caplog) == expected
    assert any(INVOICE in r.getMessage() for r in caplog.records) is with_text


async def test_layer1_decisions_are_logged_with_the_hashed_conversation_key(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="stickyroute.decision")
    sc = Scenario(make_config(HEUR, bindings=(Binding("support", user=USER),)))
    await routed(sc, accounting(), BUG)
    assert lines(caplog) == [{"channel": CHANNEL, "conversation": key().hashed(), "kind": "text", "agent": "support",
                              "reason": "binding", "status": 200}]


async def test_reasons_are_counted_per_channel() -> None:
    sc = Scenario(make_config(HEUR), ScriptedClassifier("coder"))
    acc = accounting()
    await routed(sc, acc, BUG, "yes", "ok", INVOICE, "/agent billing")
    assert acc.metrics.decisions_view() == {
        CHANNEL: {"ack": 1, "classified": 1, "divergence_pending": 1, "explicit": 1, "short": 1}}
    assert acc.metrics.switches_view() == {CHANNEL: {"explicit": 1}}
    assert acc.metrics.requests_view() == {CHANNEL: {
        "by_agent": {"billing": 1, "coder": 4}, "by_reason": {"ack": 1, "classified": 1, "divergence_pending": 1,
                                                              "explicit": 1, "short": 1},
        "by_status": {"2xx": 5}, "total": 5}}


def test_a_request_decided_as_a_whole_is_one_line_and_one_count(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="stickyroute.decision")
    acc = accounting()
    channel = make_config(HEUR).channels[CHANNEL]
    acc.request(channel, T0, [(None, Decision("", "unauthorized"), 401)], 401)
    acc.request(channel, T0, [(None, Decision("general", "default"), 200)], 200, method="GET")
    acc.request(channel, T0, [(None, Decision("general", "unparsed"), 502)], 502)
    acc.request(channel, T0, [(None, Decision("coder", "redelivery"), 200)], 200)
    assert lines(caplog) == [
        {"channel": CHANNEL, "agent": None, "reason": "unauthorized", "status": 401},
        {"channel": CHANNEL, "method": "GET", "agent": "general", "reason": "default", "status": 200},
        {"channel": CHANNEL, "agent": "general", "reason": "unparsed", "status": 502},
        {"channel": CHANNEL, "agent": "coder", "reason": "redelivery", "status": 200},
    ]
    assert acc.metrics.requests_view()[CHANNEL]["by_status"] == {"2xx": 2, "4xx": 1, "5xx": 1}
    assert acc.metrics.hits_view() == {CHANNEL: 1}


def test_a_body_split_between_agents_counts_once_under_several(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="stickyroute.decision")
    acc = accounting()
    channel = make_config(HEUR, platform=ChannelType.WHATSAPP).channels[CHANNEL]
    first, second = text("hello there coder", sender="1"), text("hello there billing", sender="2")
    acc.request(channel, T0, [(first, Decision("coder", "classified"), 200),
                              (second, Decision("billing", "keywords"), 502)], 502)
    assert acc.metrics.requests_view()[CHANNEL]["by_agent"] == {"(several)": 1}
    assert [(line["agent"], line["status"]) for line in lines(caplog)] == [("coder", 200), ("billing", 502)]


def test_switches_upstream_and_classifier_calls_are_counted() -> None:
    acc = accounting()
    channel = make_config(HEUR).channels[CHANNEL]
    call = Classification(outcome=Outcome.AGENT, agent="billing", prompt_tokens=90, completion_tokens=2)
    skip = Classification(outcome=Outcome.BUDGET)
    acc.request(channel, T0 + 3, [(text("a long message about refunds"),
                                   Decision("billing", "llm_confirmed", classification=call, switched=True), 200)], 200)
    acc.request(channel, T0 + 4, [(text("another long message here"),
                                   Decision("coder", "classifier_budget", classification=skip), 200)], 200)
    acc.upstream("billing", 0.02, None)
    acc.upstream("billing", 5.0, "timeout")
    acc.upstream("coder", 0.001, "refused")
    assert acc.metrics.switches_view() == {CHANNEL: {"llm_confirmed": 1}}
    assert acc.metrics.upstream_view() == {
        "billing": {"failures": {"timeout": 1}, "forwards": 2, "seconds": 5.02},
        "coder": {"failures": {"refused": 1}, "forwards": 1, "seconds": 0.001}}
    (bucket,) = acc.series.window(T0 + 5)["buckets"]
    assert (bucket["classifier_calls"], bucket["tokens"], bucket["requests"], bucket["decisions"]) == (
        1, 92, {"2xx": 2}, {"classifier_budget": 1, "llm_confirmed": 1})


def test_what_the_app_answers_itself_is_counted_and_logged_on_a_channel(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="stickyroute.decision")
    acc = accounting()
    channel = make_config(HEUR).channels[CHANNEL]
    acc.rejected(channel, 413, "too_large")
    acc.rejected(None, 404, "not_found")
    assert lines(caplog) == [{"channel": CHANNEL, "agent": None, "reason": "too_large", "status": 413}]
    exposition = generate_latest(acc.metrics.registry).decode()
    assert 'stickyroute_requests_total{agent="",channel="",reason="not_found",status="4xx"} 1.0' in exposition
    assert 'stickyroute_requests_total{agent="",channel="telegram",reason="too_large",status="4xx"} 1.0' in exposition


def test_an_operators_change_is_a_decision_line_with_reason_admin(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="stickyroute.decision")
    acc = accounting()
    acc.admin(CHANNEL, "29c533d71776", "coder", "pin", T0, True)
    acc.admin(CHANNEL, "29c533d71776", None, "reset", T0 + 1)
    assert lines(caplog) == [
        {"channel": CHANNEL, "conversation": "29c533d71776", "agent": "coder", "reason": "admin", "action": "pin",
         "explicit": True},
        {"channel": CHANNEL, "conversation": "29c533d71776", "agent": None, "reason": "admin", "action": "reset"}]
    assert acc.metrics.decisions_view() == {CHANNEL: {"admin": 2}}
    assert [e["id"] for e in acc.ring.recent(10)] == [2, 1]
