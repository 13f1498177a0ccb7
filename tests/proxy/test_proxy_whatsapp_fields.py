"""WhatsApp fields end to end (issue #10): calls and other one-user events follow the user's
binding or route without refreshing it; history never creates routes or calls the classifier;
a group status matches a binding on the participant's BSUID."""

from __future__ import annotations

import json
from pathlib import Path

from stickyroute.core.route import ConversationKey
from tests.proxy.harness import Proxy, upstream_set, whatsapp_text, write_config

WHATSAPP = """
[[channels.whatsapp.bindings]]
user = "15550000001"
agent = "bound"

[[channels.whatsapp.bindings]]
user = "US.7"
agent = "bound"

[channels.whatsapp.overrides]
auto_route = "sticky_heuristic"
"""
AGENTS = {"coder": 'keywords = ["python", "refactor", "function"]'}
TOP = '[classifier]\nprovider = "heuristic"\n'


def body(field: str, value: dict) -> bytes:
    change = {"field": field, "value": {"messaging_product": "whatsapp", "metadata": {"phone_number_id": "PN1"},
                                        **value}}
    return json.dumps({"object": "whatsapp_business_account", "entry": [{"id": "W", "changes": [change]}]}).encode()


def reasons(up) -> list[bytes]:
    return [r.header_values(b"x-stickyroute-reason")[0] for r in up.requests]


async def test_a_call_from_a_bound_user_goes_to_the_binding(tmp_path: Path) -> None:
    call = body("calls", {"calls": [{"id": "wacid.1", "from": "15550000001", "to": "15550100100",
                                     "event": "connect", "direction": "USER_INITIATED"}]})
    with upstream_set("general", "bound", "coder") as ups:
        config = write_config(tmp_path, ups, whatsapp=WHATSAPP, agents=AGENTS, top=TOP)
        async with Proxy(config) as proxy:
            response = await proxy.post("/webhooks/whatsapp", call)
    assert (response.status_code, reasons(ups["bound"]), len(ups["general"].requests)) == (200, [b"binding"], 0)


async def test_history_never_classifies_never_creates_routes_and_follows_a_binding(tmp_path: Path) -> None:
    thread = {"id": "15550000002", "messages": [{"from": "15550000002", "id": "wamid.H", "type": "text",
                                                  "text": {"body": "please refactor this python function"}}]}
    unbound = body("history", {"history": [{"metadata": {"phase": 0}, "threads": [thread]}]})
    bound = body("history", {"history": [{"threads": [{**thread, "id": "15550000001"}]}]})
    with upstream_set("general", "bound", "coder") as ups:
        config = write_config(tmp_path, ups, whatsapp=WHATSAPP, agents=AGENTS, top=TOP)
        async with Proxy(config) as proxy:
            first = await proxy.post("/webhooks/whatsapp", unbound)
            second = await proxy.post("/webhooks/whatsapp", bound)
            routes = await proxy.live_routes("whatsapp")
            stats = await proxy.service.stats_snapshot()
    assert (first.status_code, second.status_code, routes) == (200, 200, 0)
    assert (reasons(ups["general"]), reasons(ups["bound"]), ups["coder"].requests) == ([b"history"], [b"binding"], [])
    assert stats["classifier"]["total"]["calls"] == 0
    assert stats["decisions"]["whatsapp"] == {"history": 1, "binding": 1}


async def test_a_user_event_follows_the_live_route_without_refreshing_it(tmp_path: Path) -> None:
    prefs = body("user_preferences", {"user_preferences": [{"wa_id": "15550000003", "category": "marketing_messages",
                                                            "value": "stop"}]})
    echo = body("smb_message_echoes", {"message_echoes": [{"from": "15550100100", "to": "15550000003",
                                                          "id": "wamid.E", "type": "text", "text": {"body": "hi"}}]})
    with upstream_set("general", "bound", "coder") as ups:
        config = write_config(tmp_path, ups, whatsapp=WHATSAPP, agents=AGENTS, top=TOP)
        async with Proxy(config) as proxy:
            await proxy.post("/webhooks/whatsapp", whatsapp_text([("15550000003", "wamid.1", "/agent coder")]))
            state = proxy.service.state.views
            key = ConversationKey("whatsapp", "15550000003", None, "15550000003")
            before = await state.route_of(key, proxy.service.dispatcher.clock())
            for raw in (prefs, echo):
                assert (await proxy.post("/webhooks/whatsapp", raw)).status_code == 200
            after = await state.route_of(key, proxy.service.dispatcher.clock())
    assert reasons(ups["coder"]) == [b"explicit", b"user_event", b"user_event"]
    assert after == before


async def test_a_group_status_matches_a_binding_on_the_participant_bsuid(tmp_path: Path) -> None:
    status = body("messages", {"statuses": [{"id": "wamid.G", "status": "read", "recipient_type": "group",
                                             "recipient_id": "G1", "recipient_participant_user_id": "US.7"}]})
    with upstream_set("general", "bound", "coder") as ups:
        config = write_config(tmp_path, ups, whatsapp=WHATSAPP, agents=AGENTS, top=TOP)
        async with Proxy(config) as proxy:
            response = await proxy.post("/webhooks/whatsapp", status)
    assert (response.status_code, reasons(ups["bound"]), ups["general"].requests) == (200, [b"binding"], [])
