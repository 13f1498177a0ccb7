"""End to end, Discord: PING after the signature, 401 for a bad one (Discord tests that), one
conversation routed, switched with the `agent` command (answered by the proxy), redelivered,
the agent's interaction response relayed as its body. Real upstream agents on 127.0.0.1."""

from __future__ import annotations

import json

import pytest

from tests.proxy.harness import Proxy, sha, upstream_set, write_channels
from tests.proxy.platforms import DISCORD_PUBLIC, discord_command, discord_headers

DISCORD = f'type = "discord"\ndefault_agent = "general"\npublic_key = "{DISCORD_PUBLIC}"\n'
PATH = "/webhooks/discord"
PING = b'{"id":"1","application_id":"11","type":1,"token":"t","version":1}'
DEFERRED = b'{"type":5}'


@pytest.mark.parametrize(("headers", "status", "body"), [
    pytest.param(discord_headers(PING), 200, b'{"type":1}', id="signed"),
    pytest.param({**discord_headers(PING), "X-Signature-Timestamp": "1"}, 401, b"unauthorized", id="bad-signature"),
    pytest.param({}, 401, b"unauthorized", id="unsigned"),
])
async def test_ping_answered_only_when_signed(tmp_path, headers, status, body):
    with upstream_set("general") as ups:
        async with Proxy(write_channels(tmp_path, ups, {"discord": DISCORD})) as proxy:
            response = await proxy.post(PATH, PING, headers)
        assert (response.status_code, response.content) == (status, body)
        assert ups["general"].requests == []


async def test_a_conversation_routed_switched_by_the_agent_command_and_redelivered(tmp_path):
    with upstream_set("general", "billing") as ups:
        for up in ups.values():
            up.respond(status=200, headers=[(b"content-type", b"application/json")], body=DEFERRED)
        async with Proxy(write_channels(tmp_path, ups, {"discord": DISCORD})) as proxy:
            async def post(body: bytes):
                return await proxy.post(PATH, body, discord_headers(body))

            first = discord_command("101", "ask", question="why is my build failing on main?")
            answered = await post(first)
            switch = await post(discord_command("102", "agent", name="billing"))
            choices = await post(json.dumps({
                "id": "103", "application_id": "11", "type": 4, "token": "t", "version": 1, "channel_id": "C0TEST",
                "member": {"user": {"id": "U0TEST"}},
                "data": {"id": "9", "name": "agent", "type": 1,
                         "options": [{"name": "name", "type": 3, "value": "gen", "focused": True}]}}).encode())
            second = discord_command("104", "ask", question="and the refund for last month?")
            routed = await post(second)
            redelivered = await post(second)
        assert (answered.status_code, answered.content) == (200, DEFERRED)
        assert [sha(r.body) for r in ups["general"].requests] == [sha(first)]
        assert [sha(r.body) for r in ups["billing"].requests] == [sha(second)]
        assert ups["billing"].requests[0].header_values(b"x-signature-ed25519") == [
            discord_headers(second)["X-Signature-Ed25519"].encode()]
        listing = switch.json()
        assert listing["type"] == 4 and listing["data"]["flags"] == 64
        assert listing["data"]["content"].startswith("Now talking to billing.")
        assert choices.json() == {"type": 8, "data": {"choices": [{"name": "general", "value": "general"}]}}
        assert (routed.content, redelivered.content) == (DEFERRED, DEFERRED)
        assert redelivered.headers["x-stickyroute-reason"] == "redelivery"


async def test_an_agent_too_slow_for_discord_gets_504(tmp_path):
    body = discord_command("201", "ask", question="a slow one")
    with upstream_set("general") as ups:
        ups["general"].respond(hang=True)
        config = write_channels(tmp_path, ups, {"discord": DISCORD + "[channels.discord.upstream]\ntimeout_s = 0.3\n"
                                                "late_answer_s = 0\n"})
        try:
            async with Proxy(config) as proxy:
                response = await proxy.post(PATH, body, discord_headers(body))
        finally:
            ups["general"].release()
        assert (response.status_code, response.text) == (504, "upstream general timed out")
