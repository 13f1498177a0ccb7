"""End to end on the real-world payload shapes (`tests/channels/realworld.py`: samples of other
projects' test suites and the platforms' docs, invented ids), every sample of every platform
through the running proxy, signed as its platform signs, to real upstream agents on 127.0.0.1.

First every sample that cannot switch (bot messages, echoes, the account's own comments, events
without a user, statuses, edits, clicks), several carrying `@billing` / `@general` in their raw
text: they reach the default agent and write no route. Then the rest: texts switch by `@billing`,
the proxy answers its own commands, a mixed batch is split. Always: never a 5xx, handshakes never
forwarded, every forwarded sample byte-for-byte with its own signature header."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from stickyroute.channels import ADAPTERS
from stickyroute.clock import FakeClock
from stickyroute.config.model import ChannelType
from stickyroute.errors import UnparsedUpdate
from stickyroute.routing.envelope import MessageKind
from tests.channels import realworld
from tests.proxy.harness import Proxy, sha, upstream_set, write_channels
from tests.proxy.platforms import (
    DISCORD_PUBLIC,
    LINE_SECRET,
    META_SECRET,
    SLACK_SECRET,
    discord_headers,
    line_headers,
    meta_headers,
    slack_headers,
)

NOW = 1767700100.0
PLATFORMS: dict[str, tuple[str, str, Callable[[bytes], dict[str, str]], str]] = {
    # sample file: (channel type, its secret's TOML, signed headers, signature header)
    "slack": ("slack", f'signing_secret = "{SLACK_SECRET}"', lambda b: slack_headers(b, NOW), "x-slack-signature"),
    "discord": ("discord", f'public_key = "{DISCORD_PUBLIC}"', discord_headers, "x-signature-ed25519"),
    "line": ("line", f'channel_secret = "{LINE_SECRET}"', line_headers, "x-line-signature"),
    "meta": ("instagram", f'app_secret = "{META_SECRET}"\nverify_token = "VT-9"', meta_headers,
             "x-hub-signature-256"),
}
HANDSHAKES = {"slack": {"ssl_check", "url_verification"}, "discord": {"ping", "webhook_events_ping"},
              "line": {"verify"}, "meta": set()}
ANSWERED_BY_THE_PROXY = {"slack": {"slash_command_enterprise_dm"}, "discord": {"agent_subcommand",
                                                                             "agent_autocomplete"}}
SPLIT = {"meta": {"mixed_batch"}, "line": {"sdk_every_event", "mentions_and_emoji"}}
SWITCHED = {"slack": "shared_channel_app_mention", "discord": "guild_slash_command", "line": "mentions_and_emoji",
            "meta": "ig_comment"}
"""A sample whose text switches its conversation to billing by `@billing`."""
QUIET = frozenset({MessageKind.NO_SENDER, MessageKind.USER_EVENT, MessageKind.STATUS, MessageKind.EDIT,
                   MessageKind.NON_TEXT, MessageKind.BUTTON})


def quiet(platform: str, name: str) -> bool:
    """True when no envelope of the sample may create a route (and none is addressed to the proxy)."""
    channel_type = ChannelType(PLATFORMS[platform][0])
    try:
        envelopes = ADAPTERS[channel_type].parse(realworld.body(platform, name), [], platform)
    except UnparsedUpdate:  # unparsed: forwarded to the default, touches nothing
        return True
    return all(e.kind in QUIET and not e.to_proxy for e in envelopes)


@pytest.mark.parametrize("platform", sorted(PLATFORMS))
async def test_every_real_world_sample_through_the_proxy(tmp_path, platform):
    channel_type, secret, headers, signature = PLATFORMS[platform]
    toml = f'type = "{channel_type}"\ndefault_agent = "general"\n{secret}\n'
    names = [n for n in realworld.names(platform) if n not in HANDSHAKES[platform]]
    first = [n for n in names if quiet(platform, n)]
    assert len(first) >= 2 and SWITCHED[platform] not in first
    with upstream_set("general", "billing") as ups:
        async with Proxy(write_channels(tmp_path, ups, {platform: toml}), clock=FakeClock(NOW)) as proxy:
            seen: dict[str, list[tuple[str, bytes, list[bytes]]]] = {}

            async def post(name: str) -> int:
                body = realworld.body(platform, name)
                form = body[:1] != b"{"
                kind = "application/x-www-form-urlencoded" if form else "application/json"
                counts = {agent: len(up.requests) for agent, up in ups.items()}
                response = await proxy.post(f"/webhooks/{platform}", body, {"content-type": kind, **headers(body)})
                seen[name] = [(agent, r.body, r.header_values(signature.encode()))
                              for agent, up in ups.items() for r in up.requests[counts[agent]:]]
                return response.status_code

            statuses = {name: await post(name) for name in first}
            assert await proxy.live_routes(platform) == 0
            assert {n for n in first if [a for a, _b, _s in seen[n]] != ["general"]} <= SPLIT.get(platform, set())
            statuses |= {name: await post(name) for name in [*HANDSHAKES[platform], *names] if name not in first}
            routes = await proxy.live_routes(platform)
    assert {n: s for n, s in statuses.items() if s >= 500} == {}
    assert routes >= 1
    assert [a for a, _b, _s in seen[SWITCHED[platform]]] == (
        ["general", "billing"] if SWITCHED[platform] in SPLIT.get(platform, set()) else ["billing"])
    silent = HANDSHAKES[platform] | ANSWERED_BY_THE_PROXY.get(platform, set())
    assert {n for n in silent if seen[n]} == set()
    for name in set(names) - silent - SPLIT.get(platform, set()):
        body = realworld.body(platform, name)
        ((_agent, forwarded, signatures),) = seen[name]
        assert sha(forwarded) == sha(body), name
        assert signatures == [headers(body)[next(k for k in headers(body) if k.lower() == signature)].encode()]


async def test_the_line_sdk_batch_with_a_bound_user_is_split_and_each_part_re_signed(tmp_path):
    """line-bot-sdk's every-event sample with one user bound to billing: the events of that user go
    to billing, the rest (rooms, groups without a user, account events) to general, each part
    signed for the agent's own SDK."""
    from linebot.v3 import WebhookParser

    body = realworld.body("line", "sdk_every_event")
    user = "U0000000000000000000000000000aaa1"
    toml = (f'type = "line"\ndefault_agent = "general"\nchannel_secret = "{LINE_SECRET}"\n'
            f'[[channels.line.bindings]]\nuser = "{user}"\nagent = "billing"\n')
    with upstream_set("general", "billing") as ups:
        async with Proxy(write_channels(tmp_path, ups, {"line": toml}), clock=FakeClock(NOW)) as proxy:
            response = await proxy.post("/webhooks/line", body, line_headers(body))
    assert response.status_code == 200
    envelopes = ADAPTERS[ChannelType.LINE].parse(body, [], "line")
    for agent, mine in (("billing", True), ("general", False)):
        (request,) = ups[agent].requests
        (signed,) = request.header_values(b"x-line-signature")
        events = WebhookParser(LINE_SECRET).parse(request.body.decode(), signed.decode())
        assert [e.webhook_event_id for e in events] == [e.delivery_id for e in envelopes
                                                        if (e.sender_id == user) is mine]


def test_the_quiet_samples_cover_bots_echoes_and_own_comments():
    """The first pass above holds the samples that must never switch although their raw text names
    an agent (a guard against this test silently checking less)."""
    assert {n for n in ("bot_message_classic", "bot_message_other_app", "bot_reply_in_thread",
                        "assistant_title_changed") if quiet("slack", n)} == {
        "bot_message_classic", "bot_message_other_app", "bot_reply_in_thread", "assistant_title_changed"}
    assert all(quiet("meta", n) for n in ("echo_with_app_id", "ig_echo", "ig_own_comment", "page_feed_comment"))
    assert b"@general" in realworld.body("meta", "ig_own_comment")
    assert b"@general" in realworld.body("slack", "bot_reply_in_thread")


async def test_the_accounts_own_comment_naming_an_agent_switches_nothing(tmp_path):
    """A person's comment `@billing ...` switches that person; the account's own reply `@general ...`
    (Instagram sends the account's comments back) reaches the default and writes no route."""
    toml = f'type = "instagram"\ndefault_agent = "general"\napp_secret = "{META_SECRET}"\n'
    person, own = realworld.body("meta", "ig_comment"), realworld.body("meta", "ig_own_comment")
    with upstream_set("general", "billing") as ups:
        async with Proxy(write_channels(tmp_path, ups, {"meta": toml}), clock=FakeClock(NOW)) as proxy:
            for body in (person, own):
                assert (await proxy.post("/webhooks/meta", body, meta_headers(body))).status_code == 200
            routes = await proxy.live_routes("meta")
    assert routes == 1
    assert [sha(r.body) for r in ups["billing"].requests] == [sha(person)]
    assert [sha(r.body) for r in ups["general"].requests] == [sha(own)]
