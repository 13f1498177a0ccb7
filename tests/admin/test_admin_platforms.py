"""The operator's tools on the Slack and LINE channels, on both state backends: a conversation
looked up by the platform's own ids (a Slack thread, a Slack DM, a LINE group), pinned; the
metrics per channel; an agent's handoff header on a Slack thread."""

from __future__ import annotations

from tests.admin.operated import Operated
from tests.proxy.platforms import (
    LINE_SECRET,
    SLACK_SECRET,
    line_body,
    line_event,
    line_headers,
    slack_headers,
    slack_message,
)

T0 = 1_700_000_000.0
AUTO = 'auto_route = "sticky_heuristic"\nauto_route_first_message_margin = 0\n'
PLATFORMS = (f'[channels.slack]\npath = "/webhooks/slack"\ndefault_agent = "general"\n'
             f'signing_secret = "{SLACK_SECRET}"\n[channels.slack.overrides]\n{AUTO}\n'
             f'[channels.line]\npath = "/webhooks/line"\ndefault_agent = "general"\n'
             f'channel_secret = "{LINE_SECRET}"\n[channels.line.overrides]\n{AUTO}\n')
ROOT = "1700000001.000100"


async def slack(op: Operated, body: bytes):
    assert op.public is not None
    return await op.public.post("/webhooks/slack", content=body, headers=slack_headers(body, op.clock()))


async def line(op: Operated, body: bytes):
    assert op.public is not None
    return await op.public.post("/webhooks/line", content=body, headers=line_headers(body))


async def test_conversations_are_looked_up_by_the_platforms_ids(tmp_path, upstreams, backend) -> None:
    async with Operated(tmp_path, upstreams, backend=backend, top=PLATFORMS) as op:
        thread = slack_message("my invoice shows a wrong refund", ts=ROOT, event_id="Ev1", channel="C0TEST")
        dm = slack_message("please refactor this python code", ts="1700000002.000100", event_id="Ev2")
        group = line_body(dict(line_event("E1", "Uana", "a refund for my invoice"),
                               source={"type": "group", "groupId": "Cgroup", "userId": "Uana"}))
        assert (await slack(op, thread)).status_code == 200
        assert (await slack(op, dm)).status_code == 200
        assert (await line(op, group)).status_code == 200
        in_thread = await op.api("GET", f"/v1/conversations/slack/C0TEST/U0TEST?thread={ROOT}")
        channel_level = await op.api("GET", "/v1/conversations/slack/C0TEST/U0TEST")
        in_dm = await op.api("GET", "/v1/conversations/slack/D0TEST/U0TEST")
        in_group = await op.api("GET", "/v1/conversations/line/Cgroup/Uana")
        pinned = await op.api("PUT", f"/v1/conversations/slack/C0TEST/U0TEST/route?thread={ROOT}",
                              json={"agent": "coder"})
        op.clock.advance(5)
        reply = slack_message("and a second invoice for the refund", ts="1700000009.000100", event_id="Ev3",
                              channel="C0TEST", thread_ts=ROOT)
        await slack(op, reply)
    assert (in_thread.status_code, in_thread.json()["agent"], in_thread.json()["thread"]) == (200, "billing", ROOT)
    assert channel_level.status_code == 404
    assert (in_dm.json()["agent"], in_dm.json()["chat"], in_dm.json()["thread"]) == ("coder", "D0TEST", None)
    assert (in_group.json()["agent"], in_group.json()["sender"]) == ("billing", "Uana")
    assert pinned.json()["route"]["agent"] == "coder"
    assert upstreams["coder"].requests[-1].body == reply


async def test_metrics_count_the_new_channels(tmp_path, upstreams) -> None:
    async with Operated(tmp_path, upstreams, top=PLATFORMS) as op:
        await slack(op, slack_message("my invoice shows a wrong refund", ts=ROOT, event_id="Ev1"))
        await line(op, line_body(line_event("E1", "Uana", "a refund for my invoice")))
        assert op.public is not None
        await op.public.post("/webhooks/line", content=line_body(), headers={"X-Line-Signature": "AAAA"})
        metrics = (await op.api("GET", "/metrics", token=None)).text
    for line_text in ('stickyroute_requests_total{agent="billing",channel="slack",reason="keywords",status="2xx"} 1.0',
                      'stickyroute_requests_total{agent="billing",channel="line",reason="keywords",status="2xx"} 1.0',
                      'stickyroute_requests_total{agent="",channel="line",reason="unauthorized",status="4xx"} 1.0',
                      'stickyroute_conversations_live{channel="slack"} 1.0'):
        assert line_text in metrics


async def test_a_handoff_from_the_agent_moves_the_slack_thread(tmp_path, upstreams) -> None:
    upstreams["billing"].respond(headers=[(b"content-type", b"application/json"), (b"X-Stickyroute-Handoff", b"coder")])
    async with Operated(tmp_path, upstreams, top=PLATFORMS) as op:
        first = await slack(op, slack_message("my invoice shows a wrong refund", ts=ROOT, event_id="Ev1",
                                              channel="C0TEST"))
        op.clock.advance(5)
        await slack(op, slack_message("ok and then what?", ts="1700000009.000100", event_id="Ev2", channel="C0TEST",
                                      thread_ts=ROOT))
    assert "x-stickyroute-handoff" not in first.headers
    assert [r.header_values(b"x-stickyroute-reason")[0] for r in upstreams["coder"].requests] == [b"handoff"]
