"""Conversations through the admin API, on both state backends: list live routes (their hashed
key is the decision log's `conversation`), look one up by platform ids, pin it, reset it; each
change is a decision line with reason `admin`; unknown conversations 404, bad bodies 422."""

from __future__ import annotations

import json
import logging

import pytest

from tests.admin.operated import Operated
from tests.proxy.harness import telegram_text

TG = "/webhooks/telegram"
AUTO = '[channels.telegram.overrides]\nauto_route = "sticky_heuristic"\nauto_route_first_message_margin = 0'
ONLY_SOME = 'agents = ["general", "coder", "internal"]\n' + AUTO


async def routed(op: Operated) -> None:
    """User 111 to billing, user 222 to coder (keywords), a second later."""
    assert (await op.webhook(TG, telegram_text(1, "my invoice shows a wrong refund", user=111))).status_code == 200
    op.clock.advance(1.0)
    assert (await op.webhook(TG, telegram_text(2, "please refactor this python code", user=222))).status_code == 200


async def test_listing_shows_live_routes_keyed_like_the_decision_log(tmp_path, upstreams, backend) -> None:
    async with Operated(tmp_path, upstreams, backend=backend, telegram=AUTO) as op:
        await routed(op)
        listed = (await op.api("GET", "/v1/conversations")).json()
        billing = (await op.api("GET", "/v1/conversations?agent=billing")).json()
        newest = (await op.api("GET", "/v1/conversations?channel=telegram&limit=1")).json()
        whatsapp = (await op.api("GET", "/v1/conversations?channel=whatsapp")).json()
        logged = (await op.api("GET", "/v1/decisions")).json()["decisions"]
    t0 = op.clock.t - 1.0
    assert listed == {"count": 2, "conversations": [
        {"conversation": logged[0]["conversation"], "channel": "telegram", "agent": "coder", "reason": "keywords",
         "explicit": False, "counter": 0, "candidate": None, "chosen_at": t0 + 1, "last_active": t0 + 1,
         "expires_at": t0 + 1 + 1800, "held": False, "held_until": None},
        {"conversation": logged[1]["conversation"], "channel": "telegram", "agent": "billing", "reason": "keywords",
         "explicit": False, "counter": 0, "candidate": None, "chosen_at": t0, "last_active": t0,
         "expires_at": t0 + 1800, "held": False, "held_until": None}]}
    assert [c["agent"] for c in billing["conversations"]] == ["billing"]
    assert [c["agent"] for c in newest["conversations"]] == ["coder"]
    assert whatsapp == {"conversations": [], "count": 0}


@pytest.mark.parametrize(("query", "status", "detail"), [
    ("?limit=0", 422, "limit: expected an integer between 1 and 1000, got 0"),
    ("?limit=many", 422, 'limit: expected an integer between 1 and 1000, got "many"'),
    ("?channel=slack", 404, "no channel 'slack' in the running config (channels: telegram, whatsapp)"),
    ("?agent=nobody", 404, "no agent 'nobody' in the running config"),
    ("?held=yes", 422, 'held: expected true or false, got "yes"'),
])
async def test_a_bad_listing_query_says_what_is_wrong(tmp_path, upstreams, query, status, detail) -> None:
    async with Operated(tmp_path, upstreams) as op:
        answer = await op.api("GET", "/v1/conversations" + query)
    assert (answer.status_code, answer.json()["detail"]) == (status, detail)


async def test_a_conversation_is_looked_up_by_platform_ids(tmp_path, upstreams, backend) -> None:
    async with Operated(tmp_path, upstreams, backend=backend, telegram=AUTO) as op:
        await routed(op)
        found = await op.api("GET", "/v1/conversations/telegram/111/111")
        unknown = await op.api("GET", "/v1/conversations/telegram/999/999")
        channel = await op.api("GET", "/v1/conversations/slack/111/111")
        decisions = (await op.api("GET", "/v1/decisions")).json()["decisions"]
    body = found.json()
    assert (found.status_code, body["agent"], body["reason"], body["chat"], body["sender"], body["thread"],
            body["layer1"], body["conversation"]) == (
        200, "billing", "keywords", "111", "111", None, {"agent": "general", "reason": "default"},
        decisions[1]["conversation"])
    assert (unknown.status_code, unknown.json()["error"], len(unknown.json()["conversation"])) == (404, "not found", 12)
    assert channel.status_code == 404


async def test_a_forum_topic_is_its_own_conversation(tmp_path, upstreams, backend) -> None:
    async with Operated(tmp_path, upstreams, backend=backend, telegram=AUTO) as op:
        body = telegram_text(5, "the invoice refund again", user=111, chat=-100777, thread=42, topic=True)
        assert (await op.webhook(TG, body)).status_code == 200
        topic = await op.api("GET", "/v1/conversations/telegram/-100777/111?thread=42")
        group = await op.api("GET", "/v1/conversations/telegram/-100777/111")
    assert (topic.status_code, topic.json()["thread"], topic.json()["agent"], group.status_code) == (
        200, "42", "billing", 404)


async def test_a_pin_holds_the_next_decision_and_is_logged_as_admin(tmp_path, upstreams, backend, caplog) -> None:
    caplog.set_level(logging.INFO, logger="stickyroute.decision")
    async with Operated(tmp_path, upstreams, backend=backend, telegram=AUTO) as op:
        await routed(op)
        pinned = await op.api("PUT", "/v1/conversations/telegram/111/111/route", json={"agent": "coder"})
        op.clock.advance(5.0)
        await op.webhook(TG, telegram_text(3, "another invoice and a refund, please", user=111))
        after = (await op.api("GET", "/v1/conversations/telegram/111/111")).json()
        ring = (await op.api("GET", "/v1/decisions?limit=2")).json()["decisions"]
    assert pinned.status_code == 200
    assert (pinned.json()["route"]["agent"], pinned.json()["route"]["explicit"], pinned.json()["route"]["reason"],
            pinned.json()["previous"]["agent"]) == ("coder", True, "admin", "billing")
    assert (after["agent"], after["reason"], after["explicit"]) == ("coder", "admin", True)
    assert [(d["agent"], d["reason"]) for d in ring] == [("coder", "explicit_pin"), ("coder", "admin")]
    admin_lines = [json.loads(r.getMessage()) for r in caplog.records
                   if r.name == "stickyroute.decision" and '"admin"' in r.getMessage()]
    assert admin_lines == [{"channel": "telegram", "conversation": after["conversation"], "agent": "coder",
                            "reason": "admin", "action": "pin", "explicit": True}]
    assert upstreams["coder"].requests[-1].body == telegram_text(3, "another invoice and a refund, please", user=111)


async def test_a_reset_goes_back_to_auto_routing(tmp_path, upstreams, backend) -> None:
    async with Operated(tmp_path, upstreams, backend=backend, telegram=AUTO) as op:
        await routed(op)
        await op.api("PUT", "/v1/conversations/telegram/111/111/route", json={"agent": "coder", "explicit": False})
        reset = await op.api("DELETE", "/v1/conversations/telegram/111/111/route")
        again = await op.api("DELETE", "/v1/conversations/telegram/111/111/route")
        await op.webhook(TG, telegram_text(3, "another invoice and a refund, please", user=111))
        after = (await op.api("GET", "/v1/conversations/telegram/111/111")).json()
        logged = (await op.api("GET", "/v1/decisions?limit=2")).json()["decisions"]
    assert (reset.status_code, reset.json()["route"], reset.json()["previous"]["agent"],
            reset.json()["previous"]["explicit"]) == (200, None, "coder", False)
    assert (again.status_code, again.json()["error"]) == (404, "not found")
    assert (after["agent"], after["reason"]) == ("billing", "keywords")
    assert [(d["reason"], d.get("action")) for d in logged] == [("keywords", None), ("admin", "reset")]


@pytest.mark.parametrize(("body", "detail"), [
    (b"not json", "body: not JSON (Expecting value: line 1 column 1 (char 0))"),
    (b"[1, 2]", "body: expected a JSON object"),
    (b"{}", "agent: is required"),
    (b'{"agent": 5}', "agent: expected a non-empty string, got 5"),
    (b'{"agent": "nobody"}', "agent: no agent 'nobody' in the running config"),
    (b'{"agent": "billing"}', "agent: 'billing' is not reachable on channel telegram (not in its agents)"),
    (b'{"agent": "coder", "explicit": "yes"}', 'explicit: expected true or false, got "yes"'),
    (b'{"agent": "coder", "sticky": true}', "sticky: unknown key (expected agent, explicit)"),
])
async def test_a_bad_pin_is_422_with_the_reason(tmp_path, upstreams, body, detail) -> None:
    async with Operated(tmp_path, upstreams, telegram=ONLY_SOME) as op:
        answer = await op.api("PUT", "/v1/conversations/telegram/111/111/route", content=body)
        nothing = await op.api("GET", "/v1/conversations/telegram/111/111")
    assert (answer.status_code, answer.json()) == (422, {"error": "unprocessable", "detail": detail})
    assert nothing.status_code == 404


async def test_an_operator_may_pin_a_hidden_agent_of_the_channel(tmp_path, upstreams) -> None:
    async with Operated(tmp_path, upstreams, telegram=ONLY_SOME) as op:
        pinned = await op.api("PUT", "/v1/conversations/telegram/111/111/route", json={"agent": "internal"})
        await op.webhook(TG, telegram_text(1, "something long enough to route", user=111))
        after = (await op.api("GET", "/v1/conversations/telegram/111/111")).json()
    assert (pinned.status_code, after["agent"], after["reason"]) == (200, "internal", "admin")
