"""End to end, LINE: Verify answered once signed, a mixed batch split into bodies that
line-bot-sdk accepts, redelivered events answered from the delivery log, a switch by `@name`,
a one-agent batch forwarded byte for byte. Real upstream agents on 127.0.0.1."""

from __future__ import annotations

import json

from linebot.v3 import WebhookParser

from tests.proxy.harness import Proxy, sha, upstream_set, write_channels
from tests.proxy.platforms import LINE_SECRET, line_body, line_event, line_headers

LINE = (f'type = "line"\ndefault_agent = "general"\nchannel_secret = "{LINE_SECRET}"\n'
        '[[channels.line.bindings]]\nuser = "Ubilling"\nagent = "billing"\n')
PATH = "/webhooks/line"


async def test_verify_is_answered_by_the_proxy_once_signed(tmp_path):
    body = line_body()
    with upstream_set("general", "billing") as ups:
        async with Proxy(write_channels(tmp_path, ups, {"line": LINE})) as proxy:
            verified = await proxy.post(PATH, body, line_headers(body))
            unsigned = await proxy.post(PATH, body)
        assert (verified.status_code, unsigned.status_code) == (200, 401)
        assert ups["general"].requests == ups["billing"].requests == []


async def test_a_mixed_batch_is_split_re_signed_and_its_redelivery_answered_from_the_log(tmp_path):
    batch = line_body(line_event("E1", "Ubilling", "my invoice please"), line_event("E2", "Uana", "hello there"),
                      line_event("E3", "Ubilling"))
    with upstream_set("general", "billing") as ups:
        async with Proxy(write_channels(tmp_path, ups, {"line": LINE})) as proxy:
            response = await proxy.post(PATH, batch, line_headers(batch))
            redelivered = batch.replace(b'"isRedelivery":false', b'"isRedelivery":true')
            again = await proxy.post(PATH, redelivered, line_headers(redelivered))
        assert response.status_code == 200
        assert (again.status_code, again.headers["x-stickyroute-reason"]) == (200, "redelivery")
        parser = WebhookParser(LINE_SECRET)
        for agent, ids in (("billing", ["E1", "E3"]), ("general", ["E2"])):
            (request,) = ups[agent].requests
            [signature] = request.header_values(b"x-line-signature")
            events = parser.parse(request.body.decode(), signature.decode())
            assert [e.webhook_event_id for e in events] == ids
            assert json.loads(request.body)["destination"] == "Ubot"


async def test_a_switch_by_name_and_a_one_agent_batch_forwarded_byte_for_byte(tmp_path):
    switch = line_body(line_event("E1", "Uana", "@billing the refund is late"))
    both = line_body(line_event("E2", "Uana", "it was due last week"), line_event("E3", "Ubilling", "same here"))
    with upstream_set("general", "billing") as ups:
        async with Proxy(write_channels(tmp_path, ups, {"line": LINE})) as proxy:
            await proxy.post(PATH, switch, line_headers(switch))
            await proxy.post(PATH, both, line_headers(both))
        assert [sha(r.body) for r in ups["billing"].requests] == [sha(switch), sha(both)]
        assert ups["billing"].requests[1].header_values(b"x-line-signature") == [
            line_headers(both)["X-Line-Signature"].encode()]
        assert ups["general"].requests == []
