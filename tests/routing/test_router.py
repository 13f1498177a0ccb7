"""Router (issue #3 "Conversation key", "Layer 2 runs only when Layer 1 resolved to the channel
default", "Order and retries", "Reasons"): keys, Layer 1 first, per-conversation serialisation
with parallel conversations, decisions through the real channel adapters (the decision log and
its counts: tests/observe/test_accounting.py)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from stickyroute.channels import telegram, whatsapp
from stickyroute.classifier.base import Outcome
from stickyroute.config.model import Binding, ChannelType, Strategy, ThreadRoute
from stickyroute.routing.envelope import Envelope, MessageKind
from tests.scenario import (
    CHANNEL,
    GROUP,
    MIN,
    OTHER_GROUP,
    OTHER_USER,
    T0,
    TTL_S,
    USER,
    Scenario,
    ScriptedClassifier,
    make_config,
    text,
)

OFF, ONLY, TTL, HEUR = Strategy.OFF, Strategy.EXPLICIT_ONLY, Strategy.STICKY_TTL, Strategy.STICKY_HEURISTIC
HANG_GUARD_S = 5.0
BUG = "my python script has a bug"
INVOICE = "please refund the invoice"


async def _let_other_tasks_run() -> None:
    """Yield to the event loop a few times (no time passes) so started tasks reach their await."""
    for _ in range(10):
        await asyncio.sleep(0)


# --- conversation key -------------------------------------------------------------------------


async def test_two_members_of_one_group_have_separate_routes() -> None:
    sc = Scenario(make_config(HEUR), ScriptedClassifier({BUG: "coder", INVOICE: "billing"}))
    got = await sc.play([
        text("/agent support", sender=USER, chat=GROUP),
        text(BUG, sender=OTHER_USER, chat=GROUP),
        text(INVOICE, sender=USER, chat=GROUP),
    ])
    assert (got, sc.classifier.texts, await sc.state(sender=USER, chat=GROUP), await sc.state(sender=OTHER_USER, chat=GROUP)) == (
        [("support", "explicit"), ("coder", "classified"), ("support", "explicit_pin")], [BUG],
        ("support", True, None, 0), ("coder", False, None, 0))


async def test_one_user_in_two_groups_has_two_routes() -> None:
    sc = Scenario(make_config(ONLY), ScriptedClassifier({BUG: "coder", INVOICE: "billing"}))
    got = await sc.play([
        text(BUG, chat=GROUP),
        text(INVOICE, chat=OTHER_GROUP),
        text(INVOICE, chat=GROUP),
        text(BUG, chat=OTHER_GROUP),
    ])
    assert (got, sc.calls, await sc.state(chat=GROUP), await sc.state(chat=OTHER_GROUP), await sc.state()) == (
        [("coder", "classified"), ("billing", "classified"), ("coder", "cache"), ("billing", "cache")], 2,
        ("coder", False, None, 0), ("billing", False, None, 0), None)


async def test_forum_topics_have_their_own_route() -> None:
    sc = Scenario(make_config(ONLY), ScriptedClassifier({BUG: "coder", INVOICE: "billing"}))
    got = await sc.play([
        text(BUG, chat=GROUP, thread="7"),
        text(INVOICE, chat=GROUP, thread="8"),
        text(INVOICE, chat=GROUP),
        text(INVOICE, chat=GROUP, thread="7"),
    ])
    assert (got, sc.calls) == (
        [("coder", "classified"), ("billing", "classified"), ("billing", "classified"), ("coder", "cache")], 3)


def _tg(update_id: int, field: str = "message", **message: Any) -> bytes:
    body = {"message_id": update_id, "date": 1700000000, "from": {"id": int(USER), "is_bot": False, "first_name": "Ana"},
            "chat": {"id": int(GROUP), "type": "supergroup", "title": "G"}, **message}
    return json.dumps({"update_id": update_id, field: body}).encode()


async def _route_tg(sc: Scenario, body: bytes, after_s: float = 0.0) -> tuple[str, str]:
    (envelope,) = telegram.parse(body, CHANNEL)
    decision = await sc.send(envelope, after_s)
    return decision.agent, decision.reason


async def test_reply_chain_thread_id_is_not_a_topic_and_shares_the_group_route() -> None:
    sc = Scenario(make_config(ONLY), ScriptedClassifier({BUG: "coder", INVOICE: "billing"}))
    got = [
        await _route_tg(sc, _tg(1, text=BUG)),
        await _route_tg(sc, _tg(2, text=INVOICE, message_thread_id=55)),  # plain reply chain
        await _route_tg(sc, _tg(3, text=INVOICE, message_thread_id=7, is_topic_message=True)),  # forum topic
    ]
    assert (got, sc.calls, await sc.state(chat=GROUP, thread="7")) == (
        [("coder", "classified"), ("coder", "cache"), ("billing", "classified")], 2, ("billing", False, None, 0))


# --- real adapters: captions, edits, buttons, statuses ----------------------------------------


@pytest.mark.parametrize("strategy", [OFF, ONLY, TTL, HEUR], ids=lambda s: s.value)
async def test_a_caption_counts_as_text_for_explicit_switches(strategy: Strategy) -> None:
    sc = Scenario(make_config(strategy))
    photo_with_caption = _tg(1, photo=[{"file_id": "f", "file_unique_id": "u", "width": 1, "height": 1}],
                             caption="@billing here is the receipt")
    assert (await _route_tg(sc, photo_with_caption), await sc.state(chat=GROUP)) == (
        ("billing", "explicit"), ("billing", True, None, 0))


async def test_an_edited_command_never_switches() -> None:
    sc = Scenario(make_config(HEUR))
    await sc.seed("coder", chat=GROUP)
    edited = _tg(2, field="edited_message", text="/agent billing", edit_date=1700000100)
    assert (await _route_tg(sc, edited), await sc.state(chat=GROUP)) == (("coder", "non_text"), ("coder", False, None, 0))


async def test_a_button_press_goes_to_the_pressers_route() -> None:
    sc = Scenario(make_config(HEUR))
    await sc.seed("billing", chat=GROUP)
    await sc.seed("support", sender=OTHER_USER, chat=GROUP)
    press = json.dumps({"update_id": 9, "callback_query": {
        "id": "cq", "from": {"id": int(OTHER_USER), "is_bot": False, "first_name": "Ben"}, "chat_instance": "c",
        "data": "/agent billing",
        "message": {"message_id": 5, "date": 1700000000, "from": {"id": 999, "is_bot": True, "first_name": "Bot"},
                    "chat": {"id": int(GROUP), "type": "supergroup"}, "text": "pick"}}}).encode()
    assert (await _route_tg(sc, press), await sc.state(sender=OTHER_USER, chat=GROUP)) == (
        ("support", "non_text"), ("support", False, None, 0))


def _wa(value: dict[str, Any]) -> bytes:
    return json.dumps({"object": "whatsapp_business_account", "entry": [{"id": "WABA", "changes": [{
        "field": "messages", "value": {"messaging_product": "whatsapp",
                                       "metadata": {"display_phone_number": "15550009999", "phone_number_id": "1"},
                                       **value}}]}]}).encode()


async def test_whatsapp_status_goes_to_the_recipients_route_and_agent_alone_is_forwarded() -> None:
    sc = Scenario(make_config(ONLY, platform=ChannelType.WHATSAPP, bot_username=None), ScriptedClassifier("coder"))
    phone = "15550000001"
    message = _wa({"contacts": [{"wa_id": phone, "profile": {"name": "A"}}], "messages": [
        {"from": phone, "id": "wamid.1", "timestamp": "1700000000", "type": "text", "text": {"body": "/agent billing"}}]})
    listing = _wa({"contacts": [{"wa_id": phone, "profile": {"name": "A"}}], "messages": [
        {"from": phone, "id": "wamid.2", "timestamp": "1700000001", "type": "text", "text": {"body": "/agent"}}]})
    delivered = _wa({"statuses": [
        {"id": "wamid.3", "status": "delivered", "timestamp": "1700000002", "recipient_id": phone}]})
    other = _wa({"statuses": [
        {"id": "wamid.4", "status": "read", "timestamp": "1700000003", "recipient_id": "15550000002"}]})
    got = []
    for body in (message, listing, delivered, other):
        (envelope,) = whatsapp.parse(body, CHANNEL)
        decision = await sc.send(envelope, MIN)
        got.append((decision.agent, decision.reason, decision.list_agents))
    assert (got, sc.calls) == (
        [("billing", "explicit", False), ("billing", "cache", False), ("billing", "status", False),
         ("general", "status", False)], 0)
    assert (await sc.route(sender=phone)).last_active == T0 + 2 * MIN  # the status did not refresh it


# --- Layer 1 first ----------------------------------------------------------------------------

LAYER1 = {
    "bindings": (Binding("support", user=USER), Binding("billing", chat=OTHER_GROUP)),
    "thread_routes": (ThreadRoute(GROUP, "7", "ops-agent"),),
}


@pytest.mark.parametrize("strategy", [OFF, ONLY, TTL, HEUR], ids=lambda s: s.value)
@pytest.mark.parametrize(
    ("envelope", "expected"),
    [
        pytest.param(text("/agent billing"), ("support", "binding"), id="bound-user-agent-command"),
        pytest.param(text("@billing refund my invoice"), ("support", "binding"), id="bound-user-mention"),
        pytest.param(text("/agent auto"), ("support", "binding"), id="bound-user-agent-auto"),
        pytest.param(text("/agent"), ("support", "binding"), id="bound-user-agent-alone"),
        pytest.param(text(BUG), ("support", "binding"), id="bound-user-keywords"),
        pytest.param(text("/agent billing", sender=OTHER_USER, chat=GROUP, thread="7"), ("ops-agent", "thread_route"),
                     id="thread-route-agent-command"),
        pytest.param(text(BUG, sender=OTHER_USER, chat=OTHER_GROUP), ("billing", "chat_binding"),
                     id="chat-binding-keywords"),
        pytest.param(Envelope(CHANNEL, MessageKind.NO_SENDER, chat_id=GROUP, text="@billing refund"),
                     ("general", "no_sender"), id="no-sender"),
        pytest.param(Envelope(CHANNEL, MessageKind.NO_SENDER, chat_id=OTHER_GROUP, text="@support hi"),
                     ("billing", "chat_binding"), id="no-sender-chat-binding"),
    ],
)
async def test_layer1_wins_and_touches_no_route_state(strategy: Strategy, envelope: Envelope, expected: tuple) -> None:
    sc = Scenario(make_config(strategy, **LAYER1), ScriptedClassifier("coder"))
    decision = await sc.send(envelope)
    assert ((decision.agent, decision.reason), decision.list_agents, sc.calls, sc.score_calls, await sc.live_routes()) == (
        expected, False, 0, 0, 0)


# --- order: one conversation serialised, different conversations in parallel ------------------


@pytest.mark.parametrize(
    ("strategy", "second_reason"),
    [(ONLY, "cache"), (TTL, "cache"), (HEUR, "agreement")],
    ids=["explicit_only", "sticky_ttl", "sticky_heuristic"],
)
async def test_concurrent_first_messages_of_one_conversation_make_one_classifier_call(
    strategy: Strategy, second_reason: str
) -> None:
    classifier = ScriptedClassifier("coder")
    started, release = classifier.hold(BUG)
    sc = Scenario(make_config(strategy), classifier)
    first = asyncio.create_task(sc.send(BUG))
    await asyncio.wait_for(started.wait(), HANG_GUARD_S)
    second = asyncio.create_task(sc.send("please check my python bug again"))
    await _let_other_tasks_run()
    waiting = (second.done(), sc.calls)
    release.set()
    one, two = await asyncio.wait_for(asyncio.gather(first, second), HANG_GUARD_S)
    assert (waiting, (one.agent, one.reason), (two.agent, two.reason), sc.calls) == (
        (False, 1), ("coder", "classified"), ("coder", second_reason), 1)


async def test_a_second_message_waits_for_the_first_decision_and_applies_after_it() -> None:
    classifier = ScriptedClassifier("coder")
    started, release = classifier.hold(BUG)
    sc = Scenario(make_config(HEUR), classifier)
    first = asyncio.create_task(sc.send(BUG))
    await asyncio.wait_for(started.wait(), HANG_GUARD_S)
    second = asyncio.create_task(sc.send("/agent billing"))
    await _let_other_tasks_run()
    release.set()
    one, two = await asyncio.wait_for(asyncio.gather(first, second), HANG_GUARD_S)
    assert ((one.agent, one.reason), (two.agent, two.reason), await sc.state()) == (
        ("coder", "classified"), ("billing", "explicit"), ("billing", True, None, 0))


async def test_messages_queued_behind_a_hung_classifier_wait_one_timeout_not_n() -> None:
    """Issue #10: with a hung classifier the N-th message of one conversation waited N x timeout_s.
    Now each waits at most `classifier.timeout_s` for the lease, then stays on the route read
    (reason `busy`, nothing written), while the first decision still hangs."""
    classifier = ScriptedClassifier("coder")
    started, release = classifier.hold(BUG)
    sc = Scenario(make_config(HEUR, classifier_timeout_s=0.2), classifier)
    await sc.send("/agent billing")
    first = asyncio.create_task(sc.send("/agent auto"))
    await first
    blocked = asyncio.create_task(sc.send(BUG))
    await asyncio.wait_for(started.wait(), HANG_GUARD_S)
    queued = await asyncio.wait_for(asyncio.gather(*(sc.send(f"{INVOICE} number {n}") for n in range(12))),
                                    HANG_GUARD_S)
    still_blocked = not blocked.done()
    release.set()
    one = await asyncio.wait_for(blocked, HANG_GUARD_S)
    assert (still_blocked, {(d.agent, d.reason) for d in queued}, len(queued)) == (True, {("general", "busy")}, 12)
    assert ((one.agent, one.reason), sc.calls, await sc.state()) == (
        ("coder", "classified"), 1, ("coder", False, None, 0))


@pytest.mark.parametrize(
    "other",
    [
        pytest.param({"sender": OTHER_USER}, id="other-user"),
        pytest.param({"sender": USER, "chat": GROUP}, id="same-user-other-chat"),
        pytest.param({"sender": USER, "chat": GROUP, "thread": "7"}, id="same-user-other-topic"),
    ],
)
async def test_different_conversations_run_in_parallel(other: dict[str, str]) -> None:
    classifier = ScriptedClassifier({BUG: "coder", INVOICE: "billing"})
    started, release = classifier.hold(BUG)
    sc = Scenario(make_config(HEUR), classifier)
    blocked = asyncio.create_task(sc.send(BUG))
    await asyncio.wait_for(started.wait(), HANG_GUARD_S)
    free = await asyncio.wait_for(sc.send(text(INVOICE, **other)), HANG_GUARD_S)
    still_blocked = blocked.done()
    release.set()
    one = await asyncio.wait_for(blocked, HANG_GUARD_S)
    assert (still_blocked, (free.agent, free.reason), (one.agent, one.reason), sc.calls) == (
        False, ("billing", "classified"), ("coder", "classified"), 2)


async def test_a_conversation_is_usable_after_a_classifier_exception_is_raised() -> None:
    def boom(_request: Any) -> None:
        raise RuntimeError("classifier bug")

    sc = Scenario(make_config(HEUR), ScriptedClassifier(boom))
    with pytest.raises(RuntimeError):
        await sc.send(BUG)
    decision = await asyncio.wait_for(sc.send("/agent billing"), HANG_GUARD_S)
    assert (decision.agent, decision.reason) == ("billing", "explicit")


# --- classifier request context ---------------------------------------------------------------


async def test_classifier_gets_previous_messages_of_the_same_conversation_as_context() -> None:
    a, b, c = "first long message here", "second long message here", "third long message here"
    sc = Scenario(make_config(ONLY, context_messages=2),
                  ScriptedClassifier({a: Outcome.ERROR, b: Outcome.ERROR}, default="coder"))
    await sc.play([a, (MIN, b), (MIN, text("another person speaks up", sender=OTHER_USER)), (MIN, c)])
    assert [(r.text, r.context) for r in sc.classifier.calls] == [
        (a, ()), (b, (a,)), ("another person speaks up", ()), (c, (a, b))]


async def test_context_is_dropped_after_ttl_of_inactivity() -> None:
    a, b = "first long message here", "second long message here"
    sc = Scenario(make_config(ONLY, context_messages=2), ScriptedClassifier({a: Outcome.ERROR}, default="coder"))
    await sc.play([a, (TTL_S, b)])
    assert [(r.text, r.context) for r in sc.classifier.calls] == [(a, ()), (b, ())]


# --- the reason kept with a route (issue #11: the admin API shows why a route is what it is) ---


async def test_a_route_keeps_the_reason_that_chose_its_agent_through_refreshes() -> None:
    sc = Scenario(make_config(HEUR), ScriptedClassifier("coder"))
    reasons = []
    for message in (BUG, "ok", "tell me something interesting please", "/agent billing", INVOICE):
        await sc.send(message, MIN)
        route = await sc.route()
        assert route is not None
        reasons.append((route.agent, route.reason))
    assert reasons == [("coder", "classified"), ("coder", "classified"), ("coder", "classified"),
                       ("billing", "explicit"), ("billing", "explicit")]
