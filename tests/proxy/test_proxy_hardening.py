"""Regression tests for faults found by trying to break the proxy (bad ids, retries that
overlap, privacy of logs, unsigned methods, exact agent URLs, unsplittable batches)."""

from __future__ import annotations

import asyncio
import json
import logging

from stickyroute.channels.whatsapp_split import sign
from stickyroute.config.model import UpstreamSettings
from tests.proxy.harness import Proxy, telegram_text, upstream_set, whatsapp_text, write_config


def with_timeout(config, timeout_s):
    fields = {f: getattr(config, f) for f in config.__dataclass_fields__}
    return type(config)(**{**fields, "upstream": UpstreamSettings(connect_timeout_s=2.0, timeout_s=timeout_s)})


async def test_lone_surrogate_ids_are_forwarded_not_500(tmp_path):
    """An id holding an unpaired surrogate escape must not crash the decision log (was a 500)."""
    bodies = [
        b'{"update_id":7001,"message":{"message_id":1,"from":{"id":"\\ud800"},"chat":{"id":5},"text":"please refactor this"}}',
        b'{"update_id":7002,"message":{"message_id":2,"from":{"id":7},"chat":{"id":"\\udfff"},"text":"/agent"}}',
    ]
    with upstream_set("general") as ups:
        config = write_config(tmp_path, ups, telegram='[channels.telegram.overrides]\nauto_route = "sticky_heuristic"\n')
        async with Proxy(config) as proxy:
            statuses = [(await proxy.post("/webhooks/telegram", body)).status_code for body in bodies]
        assert statuses == [200, 200]
        assert len(ups["general"].requests) == 1  # the second was answered with the agent list


async def test_overlapping_whatsapp_retries_never_ack_an_undelivered_message(tmp_path):
    """Retries arriving while earlier attempts are in flight wait for them; none is acked 200
    while every attempt failed."""
    body = whatsapp_text([("15550000001", "wamid.IF2", "where is my order please")])
    with upstream_set("general") as ups:
        ups["general"].respond(hang=True)
        config = with_timeout(write_config(tmp_path, ups), 0.3)
        async with Proxy(config) as proxy:
            first = asyncio.ensure_future(proxy.post("/webhooks/whatsapp", body))
            await ups["general"].until_requests(1)
            retries = [asyncio.ensure_future(proxy.post("/webhooks/whatsapp", body)) for _ in range(2)]
            responses = await asyncio.wait_for(asyncio.gather(first, *retries), 10)
        assert [r.status_code for r in responses] == [504, 504, 504]


async def test_classifier_log_follows_the_channels_log_text(tmp_path, caplog):
    caplog.set_level(logging.INFO)
    top = "[routing]\nlog_text = true\n"
    telegram = '[channels.telegram.overrides]\nauto_route = "sticky_heuristic"\nlog_text = false\n'
    with upstream_set("general", "coder") as ups:
        config = write_config(tmp_path, ups, top=top, telegram=telegram, agents={"coder": 'keywords = ["python"]'})
        async with Proxy(config) as proxy:
            await proxy.post("/webhooks/telegram", telegram_text(1, "SECRETTEXT please help with python"))
    lines = [r.getMessage() for r in caplog.records if r.name.startswith("stickyroute")]
    assert any(line.startswith("classifier ") for line in lines)
    assert not [line for line in lines if "SECRETTEXT" in line]


async def test_unsigned_non_post_requests_are_rejected_when_app_secret_is_set(tmp_path):
    body = whatsapp_text([("15550000001", "wamid.P1", "hello there agent")])
    with upstream_set("general") as ups:
        config = write_config(tmp_path, ups, whatsapp='app_secret = "s3cret"\n')
        async with Proxy(config) as proxy:
            assert proxy.client is not None
            unsigned = await proxy.client.put("/webhooks/whatsapp", content=body)
            signed = await proxy.client.put("/webhooks/whatsapp", content=body,
                                            headers={"X-Hub-Signature-256": sign(body, "s3cret")})
            handshake = await proxy.get("/webhooks/whatsapp?hub.mode=subscribe&hub.verify_token=x&hub.challenge=9")
        assert (unsigned.status_code, signed.status_code, handshake.status_code) == (401, 200, 200)
        assert [(r.method, r.query_string) for r in ups["general"].requests] == [
            ("PUT", b""), ("GET", b"hub.mode=subscribe&hub.verify_token=x&hub.challenge=9")]


async def test_exact_agent_url_for_a_channel_keeps_the_inbound_query(tmp_path):
    with upstream_set("general") as ups:
        exact = f'[agents."general".channels]\nwhatsapp = "{ups["general"].url}/hooks/wa"'
        config = write_config(tmp_path, ups, agents={"general": exact})
        async with Proxy(config) as proxy:
            await proxy.get("/webhooks/whatsapp?hub.mode=subscribe&hub.verify_token=VT&hub.challenge=123")
        assert [r.target for r in ups["general"].requests] == [
            b"/hooks/wa?hub.mode=subscribe&hub.verify_token=VT&hub.challenge=123"]


async def test_a_deeply_nested_batch_is_split_like_any_other(tmp_path):
    """Split parts share the parsed sub-objects (no deep copy, issue #10: linear in the body), so a
    600-deep value that the parser accepts no longer defeats the split (it used to go whole to
    the default)."""
    plain = whatsapp_text([("15550000001", "wamid.N1", "invoice please"), ("15550000002", "wamid.N2", "hello")])
    body = plain.replace(b'"messaging_product"', b'"extra":' + b"[" * 600 + b"]" * 600 + b',"messaging_product"', 1)
    assert len(json.loads(body)["entry"][0]["changes"][0]["value"]["messages"]) == 2
    bindings = '[[channels.whatsapp.bindings]]\nuser = "15550000001"\nagent = "billing"\n'
    with upstream_set("general", "billing") as ups:
        config = write_config(tmp_path, ups, whatsapp=bindings)
        async with Proxy(config) as proxy:
            response = await proxy.post("/webhooks/whatsapp", body)
        assert response.status_code == 200
        ids = {name: [m["id"] for r in up.requests for m in
                      json.loads(r.body)["entry"][0]["changes"][0]["value"]["messages"]] for name, up in ups.items()}
        assert ids == {"general": ["wamid.N2"], "billing": ["wamid.N1"]}


async def test_batch_that_cannot_be_split_goes_whole_to_the_default(tmp_path):
    """A history change whose threads belong to users of two agents is never cut: the body goes
    whole to the default (the documented fallback)."""
    threads = [{"id": "15550000001", "messages": []}, {"id": "15550000002", "messages": []}]
    change = {"field": "history", "value": {"messaging_product": "whatsapp", "history": [{"threads": threads}]}}
    body = json.dumps({"object": "whatsapp_business_account", "entry": [{"id": "W", "changes": [change]}]}).encode()
    bindings = '[[channels.whatsapp.bindings]]\nuser = "15550000001"\nagent = "billing"\n'
    with upstream_set("general", "billing") as ups:
        config = write_config(tmp_path, ups, whatsapp=bindings)
        async with Proxy(config) as proxy:
            response = await proxy.post("/webhooks/whatsapp", body)
        assert response.status_code == 200
        assert [r.body for r in ups["general"].requests] == [body]
        assert ups["general"].requests[0].header_values(b"x-stickyroute-reason") == [b"binding,history"]
        assert ups["billing"].requests == []


async def test_origin_claims_from_untrusted_peers_are_dropped(tmp_path):
    with upstream_set("general") as ups:
        config = write_config(tmp_path, ups)
        async with Proxy(config) as proxy:
            await proxy.post("/webhooks/telegram", telegram_text(1, "hello"),
                             {"Forwarded": "for=10.0.0.1", "X-Real-IP": "10.0.0.1"})
        (request,) = ups["general"].requests
        assert request.header_values(b"forwarded") == [] and request.header_values(b"x-real-ip") == []


def _message_and_account_event() -> bytes:
    """One POST: a message from 15550000001 (bound to coder) and an account event (no id)."""
    doc = json.loads(whatsapp_text([("15550000001", "wamid.A", "please look at my code")]))
    doc["entry"][0]["changes"].append({"field": "account_update", "value": {"event": "VERIFIED_ACCOUNT"}})
    return json.dumps(doc, separators=(",", ":")).encode()


BOUND = '[[channels.whatsapp.bindings]]\nuser = "15550000001"\nagent = "coder"\n'


async def test_failed_item_without_id_is_resent_on_retry_not_acked(tmp_path):
    """An account event whose part failed must be forwarded again when Meta retries the POST."""
    body = _message_and_account_event()
    with upstream_set("general", "coder") as ups:
        ups["general"].respond(status=503)
        config = write_config(tmp_path, ups, whatsapp=BOUND)
        async with Proxy(config) as proxy:
            first = await proxy.post("/webhooks/whatsapp", body)
            ups["general"].respond(status=200)
            retry = await proxy.post("/webhooks/whatsapp", body)
            third = await proxy.post("/webhooks/whatsapp", body)
        assert (first.status_code, retry.status_code, third.status_code) == (502, 200, 200)
        assert (len(ups["general"].requests), len(ups["coder"].requests)) == (2, 1)
        assert third.headers["x-stickyroute-reason"] == "redelivery"


async def test_item_without_id_is_not_resent_when_a_sibling_failed(tmp_path):
    body = _message_and_account_event()
    with upstream_set("general", "coder") as ups:
        ups["coder"].respond(status=502)
        config = write_config(tmp_path, ups, whatsapp=BOUND)
        async with Proxy(config) as proxy:
            await proxy.post("/webhooks/whatsapp", body)
            await proxy.post("/webhooks/whatsapp", body)
            ups["coder"].respond(status=200)
            last = await proxy.post("/webhooks/whatsapp", body)
        assert last.status_code == 200
        assert (len(ups["general"].requests), len(ups["coder"].requests)) == (1, 3)


async def test_whatsapp_redelivery_returns_the_stored_answer(tmp_path):
    body = whatsapp_text([("15550000001", "wamid.R1", "where is my order please")])
    with upstream_set("general") as ups:
        ups["general"].respond(status=200, headers=[(b"content-type", b"application/json")], body=b'{"agent":"reply-1"}')
        config = write_config(tmp_path, ups)
        async with Proxy(config) as proxy:
            first = await proxy.post("/webhooks/whatsapp", body)
            again = await proxy.post("/webhooks/whatsapp", body)
        assert (again.status_code, again.content, again.headers["content-type"]) == (200, b'{"agent":"reply-1"}', "application/json")
        assert first.content == again.content
        assert again.headers["x-stickyroute-reason"] == "redelivery"
        assert len(ups["general"].requests) == 1
