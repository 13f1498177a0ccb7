"""End to end, WhatsApp Cloud API: signatures, verification, batches, statuses, redeliveries."""

from __future__ import annotations

import json

import pytest

from stickyroute.channels.whatsapp_split import sign
from stickyroute.core.route import ConversationKey
from tests.proxy.harness import Proxy, payload, sha, upstream_set, whatsapp_text, write_config

SECRET = "test-app-secret"
T1_BODY = (b'{"object":"whatsapp_business_account","entry":[{"id":"WABA1","changes":[{"field":"messages","value":'
           b'{"messaging_product":"whatsapp","metadata":{"phone_number_id":"PN1"},"contacts":[{"wa_id":"15550000001",'
           b'"profile":{"name":"Ana Test"}}],"messages":[{"from":"15550000001","id":"wamid.T1","timestamp":"1700000000",'
           b'"type":"text","text":{"body":"see http:\\/\\/ex.test\\/a caf\\u00e9"}}]}}]}]}')


def signed(body: bytes) -> dict[str, str]:
    return {"X-Hub-Signature-256": sign(body, SECRET)}


async def test_escaped_body_forwarded_byte_identical_with_signature(tmp_path):
    """T1: `\\/` and `\\u00e9` survive; the router sees the decoded text."""
    with upstream_set("general", "billing") as ups:
        config = write_config(tmp_path, ups, whatsapp=f'app_secret = "{SECRET}"\n',
                              agents={"billing": 'keywords = ["café"]'},
                              top='[routing]\nauto_route = "sticky_heuristic"\n' if False else "")
        async with Proxy(config) as proxy:
            response = await proxy.post("/webhooks/whatsapp", T1_BODY, signed(T1_BODY))
        assert response.status_code == 200
        request = ups["general"].requests[0]
        assert sha(request.body) == sha(T1_BODY)
        assert b"http:\\/\\/" in request.body and b"\\u00e9" in request.body
        assert request.header_values(b"x-hub-signature-256") == [sign(T1_BODY, SECRET).encode()]


@pytest.mark.parametrize(("headers", "status"), [
    ({"X-Hub-Signature-256": "sha256=" + "0" * 64}, 401),
    ({}, 401),
])
async def test_bad_or_missing_signature_rejected(tmp_path, headers, status):
    with upstream_set("general") as ups:
        config = write_config(tmp_path, ups, whatsapp=f'app_secret = "{SECRET}"\n')
        async with Proxy(config) as proxy:
            response = await proxy.post("/webhooks/whatsapp", T1_BODY, headers)
        assert response.status_code == status
        assert ups["general"].requests == []


@pytest.mark.parametrize(("token", "status", "body"), [
    ("VT-123", 200, "1158201444"),
    ("wrong", 403, "forbidden"),
])
async def test_verification_get_answered_by_proxy(tmp_path, token, status, body):
    """T14: raw challenge as text/plain, no signature needed; wrong token 403."""
    with upstream_set("general") as ups:
        config = write_config(tmp_path, ups, whatsapp=f'verify_token = "VT-123"\napp_secret = "{SECRET}"\n')
        async with Proxy(config) as proxy:
            response = await proxy.get(f"/webhooks/whatsapp?hub.mode=subscribe&hub.verify_token={token}&hub.challenge=1158201444")
        assert (response.status_code, response.text) == (status, body)
        assert response.headers["content-type"].startswith("text/plain")
        assert ups["general"].requests == []


async def test_verification_get_forwarded_with_query_when_no_verify_token(tmp_path):
    query = b"hub.mode=subscribe&hub.verify_token=VT-123&hub.challenge=1158201444"
    with upstream_set("general") as ups:
        ups["general"].respond(status=200, headers=[(b"content-type", b"text/plain")], body=b"1158201444")
        config = write_config(tmp_path, ups)
        async with Proxy(config) as proxy:
            response = await proxy.get("/webhooks/whatsapp?" + query.decode())
        assert (response.status_code, response.text) == (200, "1158201444")
        assert [(r.method, r.query_string) for r in ups["general"].requests] == [("GET", query)]


async def test_mixed_batch_split_per_agent_and_resigned(tmp_path):
    """T13 kind: two senders bound to two agents -> one re-signed body each."""
    bindings = ('[[channels.whatsapp.bindings]]\nuser = "+15550000001"\nagent = "billing"\n'
                '[[channels.whatsapp.bindings]]\nuser = "15550000002"\nagent = "support"\n')
    body = whatsapp_text([("15550000001", "wamid.A", "invoice please"), ("15550000002", "wamid.B", "my login fails")])
    with upstream_set("general", "billing", "support") as ups:
        config = write_config(tmp_path, ups, whatsapp=f'app_secret = "{SECRET}"\n' + bindings)
        async with Proxy(config) as proxy:
            response = await proxy.post("/webhooks/whatsapp", body, signed(body))
        assert response.status_code == 200
        assert ups["general"].requests == []
        for agent, wamid, sender in (("billing", "wamid.A", "15550000001"), ("support", "wamid.B", "15550000002")):
            (request,) = ups[agent].requests
            doc = json.loads(request.body)
            value = doc["entry"][0]["changes"][0]["value"]
            assert [m["id"] for m in value["messages"]] == [wamid]
            assert [c["wa_id"] for c in value["contacts"]] == [sender]
            assert value["metadata"] == {"phone_number_id": "PN1"}
            assert request.header_values(b"x-hub-signature-256") == [sign(request.body, SECRET).encode()]


async def test_batch_to_one_agent_forwarded_unchanged(tmp_path):
    body = payload("whatsapp", "batched_two_messages")
    with upstream_set("general") as ups:
        config = write_config(tmp_path, ups)
        async with Proxy(config) as proxy:
            response = await proxy.post("/webhooks/whatsapp", body)
        assert response.status_code == 200
        assert [sha(r.body) for r in ups["general"].requests] == [sha(body)]


async def test_split_batch_answers_502_unless_every_part_ok_and_retry_resends_failed_part(tmp_path):
    bindings = ('[[channels.whatsapp.bindings]]\nuser = "15550000001"\nagent = "billing"\n'
                '[[channels.whatsapp.bindings]]\nuser = "15550000002"\nagent = "support"\n')
    body = whatsapp_text([("15550000001", "wamid.A", "invoice please"), ("15550000002", "wamid.B", "my login fails")])
    with upstream_set("general", "billing", "support") as ups:
        ups["support"].respond(status=503)
        config = write_config(tmp_path, ups, whatsapp=bindings)
        async with Proxy(config) as proxy:
            first = await proxy.post("/webhooks/whatsapp", body)
            ups["support"].respond(status=200)
            retry = await proxy.post("/webhooks/whatsapp", body)
            third = await proxy.post("/webhooks/whatsapp", body)
        assert (first.status_code, retry.status_code, third.status_code) == (502, 200, 200)
        assert len(ups["billing"].requests) == 1
        assert [json.loads(r.body)["entry"][0]["changes"][0]["value"]["messages"][0]["id"]
                for r in ups["support"].requests] == ["wamid.B", "wamid.B"]
        assert third.headers["x-stickyroute-reason"] == "redelivery"


async def test_explicit_switch_found_past_first_change(tmp_path):
    """T13: changes[0] statuses only, changes[1] a message `/agent billing`."""
    doc = {"object": "whatsapp_business_account", "entry": [{"id": "WABA1", "changes": [
        {"field": "messages", "value": {"messaging_product": "whatsapp", "metadata": {"phone_number_id": "PN1"},
                                        "statuses": [{"id": "wamid.OUT1", "status": "read", "timestamp": "1700000100",
                                                      "recipient_id": "15550000002"}]}},
        {"field": "messages", "value": {"messaging_product": "whatsapp", "metadata": {"phone_number_id": "PN1"},
                                        "contacts": [{"wa_id": "15550000002"}],
                                        "messages": [{"from": "15550000002", "id": "wamid.T13", "timestamp": "1700000000",
                                                      "type": "text", "text": {"body": "/agent billing"}}]}},
    ]}]}
    body = json.dumps(doc).encode()
    with upstream_set("general", "billing") as ups:
        config = write_config(tmp_path, ups)
        async with Proxy(config) as proxy:
            await proxy.post("/webhooks/whatsapp", body)
            followup = whatsapp_text([("15550000002", "wamid.T13b", "and another question here")])
            await proxy.post("/webhooks/whatsapp", followup)
            routes = await proxy.live_routes("whatsapp")
        assert routes == 1
        billing = [json.loads(r.body) for r in ups["billing"].requests]
        # the status of the same recipient went with its conversation's decision at that time
        assert [d["entry"][0]["changes"][-1]["value"].get("messages", [{}])[0].get("id") for d in billing] == [
            "wamid.T13", "wamid.T13b"]


async def test_status_goes_to_recipient_route_and_touches_nothing(tmp_path):
    """T11: statuses-only payload, contact without profile."""
    status = (b'{"object":"whatsapp_business_account","entry":[{"id":"W","changes":[{"field":"messages","value":'
              b'{"messaging_product":"whatsapp","metadata":{"phone_number_id":"PN1"},"contacts":[{"wa_id":"15550000001"}],'
              b'"statuses":[{"id":"wamid.OUT1","status":"read","timestamp":"1700000100","recipient_id":"15550000001"}]}}]}]}')
    with upstream_set("general", "billing") as ups:
        config = write_config(tmp_path, ups)
        async with Proxy(config) as proxy:
            before = await proxy.post("/webhooks/whatsapp", status)
            await proxy.post("/webhooks/whatsapp", whatsapp_text([("15550000001", "wamid.S1", "/agent billing")]))
            key = ConversationKey("whatsapp", "15550000001", None, "15550000001")
            route = await proxy.service.state.views.route_of(key, proxy.service.dispatcher.clock())
            again = status.replace(b"wamid.OUT1", b"wamid.OUT2")
            after = await proxy.post("/webhooks/whatsapp", again)
            route_after = await proxy.service.state.views.route_of(key, route.last_active)
        assert (before.status_code, after.status_code) == (200, 200)
        assert len(ups["general"].requests) == 1 and len(ups["billing"].requests) == 2
        assert ups["billing"].requests[1].header_values(b"x-stickyroute-reason") == [b"status"]
        assert route_after == route
