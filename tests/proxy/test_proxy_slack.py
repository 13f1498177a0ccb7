"""End to end, Slack: handshakes, signatures and their window, one DM conversation routed,
switched by `@name` and by the `/agent` slash command, redelivered, a channel thread with the
app's own reply, a deadline of the channel's own. Real upstream agents on 127.0.0.1."""

from __future__ import annotations

import json

import pytest

from stickyroute.clock import FakeClock
from tests.proxy.harness import Proxy, sha, upstream_set, write_channels
from tests.proxy.platforms import SLACK_SECRET, slack_command, slack_headers, slack_message

NOW = 1767600000.0
SLACK = f'type = "slack"\ndefault_agent = "general"\nsigning_secret = "{SLACK_SECRET}"\n'
PATH = "/webhooks/slack"


def config_for(tmp_path, ups, extra: str = ""):
    return write_channels(tmp_path, ups, {"slack": SLACK + extra})


async def test_url_verification_and_ssl_check_are_answered_by_the_proxy(tmp_path):
    challenge = json.dumps({"token": "x", "challenge": "c-123", "type": "url_verification"}).encode()
    with upstream_set("general") as ups:
        async with Proxy(config_for(tmp_path, ups), clock=FakeClock(NOW)) as proxy:
            verified = await proxy.post(PATH, challenge, slack_headers(challenge, NOW))
            unsigned = await proxy.post(PATH, challenge)
            ssl = await proxy.post(PATH, b"ssl_check=1&token=x",
                                   {"content-type": "application/x-www-form-urlencoded"})
        assert (verified.status_code, verified.json()) == (200, {"challenge": "c-123"})
        assert (unsigned.status_code, ssl.status_code, ssl.content) == (401, 200, b"")
        assert ups["general"].requests == []


@pytest.mark.parametrize(("signed_at", "headers"), [
    pytest.param(NOW - 301, None, id="older-than-5-minutes"),
    pytest.param(NOW + 301, None, id="from-the-future"),
    pytest.param(NOW, {"X-Slack-Signature": "v0=" + "0" * 64, "X-Slack-Request-Timestamp": str(int(NOW))},
                 id="bad-signature"),
    pytest.param(NOW, {}, id="missing"),
])
async def test_bad_signatures_are_401_and_touch_nothing(tmp_path, signed_at, headers):
    body = slack_message("@billing hello", ts="1767600000.000100", event_id="Ev1")
    with upstream_set("general", "billing") as ups:
        async with Proxy(config_for(tmp_path, ups), clock=FakeClock(NOW)) as proxy:
            response = await proxy.post(PATH, body, headers if headers is not None else slack_headers(body, signed_at))
            assert response.status_code == 401
            assert await proxy.live_routes("slack") == 0
        assert ups["general"].requests == ups["billing"].requests == []


async def test_a_dm_conversation_routed_switched_redelivered_and_listed(tmp_path):
    clock = FakeClock(NOW)
    with upstream_set("general", "billing") as ups:
        async with Proxy(config_for(tmp_path, ups), clock=clock) as proxy:
            async def post(body: bytes, retry: int | None = None):
                clock.advance(1)
                return await proxy.post(PATH, body, slack_headers(body, clock(), retry))

            first = slack_message("hello, I need some help please", ts="1767600001.000001", event_id="Ev1")
            switch = slack_message("<@U0BOT> @billing my invoice is wrong", ts="1767600002.000001", event_id="Ev2")
            again = slack_message("and it was charged twice last month", ts="1767600003.000001", event_id="Ev3")
            assert (await post(first)).status_code == 200
            assert (await post(switch)).status_code == 200
            assert (await post(again)).status_code == 200
            copy = again.replace(b'"Ev3"', b'"Ev3-again"')  # the same message, a new event_id, no retry header
            retried = await post(again, retry=1)
            duplicate = await post(copy)
            listing = await proxy.post(PATH, slack_command("", trigger="t1"),
                                       {"content-type": "application/x-www-form-urlencoded",
                                        **slack_headers(slack_command("", trigger="t1"), clock())})
            back = slack_command("general", trigger="t2")
            switched = await proxy.post(PATH, back, slack_headers(back, clock()))
            last = slack_message("one more question about it", ts="1767600009.000001", event_id="Ev9")
            await post(last)
        general = [json.loads(r.body)["event"]["ts"] for r in ups["general"].requests]
        billing = [json.loads(r.body)["event"]["ts"] for r in ups["billing"].requests]
        assert general == ["1767600001.000001", "1767600009.000001"]
        assert billing == ["1767600002.000001", "1767600003.000001"]
        forwarded = ups["billing"].requests[0]
        assert sha(forwarded.body) == sha(switch)
        assert forwarded.header_values(b"x-slack-signature") == [slack_headers(switch, NOW + 2)["X-Slack-Signature"]
                                                                 .encode()]
        assert forwarded.header_values(b"x-stickyroute-reason") == [b"explicit"]
        assert (retried.status_code, retried.headers["x-stickyroute-reason"]) == (200, "redelivery")
        assert (duplicate.status_code, duplicate.headers["x-stickyroute-reason"]) == (200, "redelivery")
        answer = listing.json()
        assert answer["response_type"] == "ephemeral"
        assert "\u2022 billing (current) - the billing agent" in answer["text"].split("\n")
        assert switched.json()["text"].startswith("Now talking to general.")


async def test_an_app_mention_and_its_message_copy_both_reach_the_agent_once_each(tmp_path):
    clock = FakeClock(NOW)
    mention = slack_message("<@U0BOT> what changed?", ts="1767600100.000100", event_id="EvA", channel="C0TEST",
                            kind="app_mention")
    copy = slack_message("<@U0BOT> what changed?", ts="1767600100.000100", event_id="EvB", channel="C0TEST")
    with upstream_set("general") as ups:
        async with Proxy(config_for(tmp_path, ups), clock=clock) as proxy:
            for body in (copy, mention, copy, mention):
                await proxy.post(PATH, body, slack_headers(body, NOW))
        assert [json.loads(r.body)["event"]["type"] for r in ups["general"].requests] == ["message", "app_mention"]


async def test_a_channel_thread_keeps_its_agent_and_the_apps_own_reply_is_no_switch(tmp_path):
    clock = FakeClock(NOW)
    root = slack_message("@billing the invoice total looks wrong", ts="1767600200.000100", event_id="Ev1",
                         channel="C0TEST")
    reply = slack_message("Looking into it @general", ts="1767600201.000100", event_id="Ev2", channel="C0TEST",
                          thread_ts="1767600200.000100", bot=True, parent="U0TEST", user="U0BOT")
    follow = slack_message("thanks, it is invoice 42 from March", ts="1767600202.000100", event_id="Ev3",
                           channel="C0TEST", thread_ts="1767600200.000100")
    fresh = slack_message("a new question about something else", ts="1767600300.000100", event_id="Ev4",
                          channel="C0TEST")
    with upstream_set("general", "billing") as ups:
        async with Proxy(config_for(tmp_path, ups), clock=clock) as proxy:
            for body in (root, reply, follow, fresh):
                await proxy.post(PATH, body, slack_headers(body, NOW))
        billing = [(json.loads(r.body)["event"]["ts"], r.header_values(b"x-stickyroute-reason")[0])
                   for r in ups["billing"].requests]
        assert billing == [("1767600200.000100", b"explicit"), ("1767600201.000100", b"user_event"),
                           ("1767600202.000100", b"explicit_pin")]
        assert [json.loads(r.body)["event"]["ts"] for r in ups["general"].requests] == ["1767600300.000100"]


async def test_a_slack_channels_own_deadline_answers_504_before_slacks_3_seconds(tmp_path):
    body = slack_message("hello there agent", ts="1767600400.000100", event_id="Ev1")
    with upstream_set("general") as ups:
        ups["general"].respond(hang=True)
        config = config_for(tmp_path, ups, "[channels.slack.upstream]\nconnect_timeout_s = 0.5\ntimeout_s = 0.3\n"
                                           "late_answer_s = 0\n")
        try:
            async with Proxy(config, clock=FakeClock(NOW)) as proxy:
                response = await proxy.post(PATH, body, slack_headers(body, NOW))
        finally:
            ups["general"].release()
        assert response.status_code == 504
        assert response.text == "upstream general timed out"


async def test_a_retry_after_a_failed_attempt_is_forwarded_again_to_the_same_agent(tmp_path):
    """Slack's retries are the only copy of an event the agent failed: never dropped by header."""
    body = slack_message("@billing the invoice is wrong", ts="1767600500.000100", event_id="Ev1")
    with upstream_set("general", "billing") as ups:
        ups["billing"].respond(status=500, body=b"restarting")
        async with Proxy(config_for(tmp_path, ups), clock=FakeClock(NOW)) as proxy:
            failed = await proxy.post(PATH, body, slack_headers(body, NOW))
            ups["billing"].respond(status=200)
            retried = await proxy.post(PATH, body, slack_headers(body, NOW + 60, retry=1))
            again = await proxy.post(PATH, body, slack_headers(body, NOW + 300, retry=2))
        assert (failed.status_code, retried.status_code, again.status_code) == (500, 200, 200)
        assert [r.header_values(b"x-slack-retry-num") for r in ups["billing"].requests] == [[], [b"1"]]
        assert again.headers["x-stickyroute-reason"] == "redelivery"
        assert ups["general"].requests == []
