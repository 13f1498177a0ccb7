"""Who may be chosen, end to end (issue #11): `/agent` lists only the agents a sender may choose
on the channel; a hidden agent is reached through its binding only; the per-sender limit on
explicit switches holds across two replicas sharing Redis."""

from __future__ import annotations

import json

from tests.admin.operated import Operated
from tests.proxy.harness import telegram_text, upstream_set
from tests.redis_server import flush_prefix, private_prefix, require_redis

TG = "/webhooks/telegram"
ROSTER = {"coder": 'aliases = ["dev"]', "internal": "hidden = true"}
CHANNEL = 'agents = ["general", "coder", "internal"]\n[[channels.telegram.bindings]]\nuser = "7"\nagent = "internal"'


async def test_agent_alone_lists_only_the_choosable_agents(tmp_path) -> None:
    with upstream_set("general", "coder", "billing", "internal") as ups:
        async with Operated(tmp_path, ups, agents=ROSTER, telegram=CHANNEL) as op:
            listing = await op.webhook(TG, telegram_text(1, "/agent", user=111))
    text = json.loads(listing.content)["text"]
    assert text.splitlines() == ["Agents (switch with /agent <name>, back to automatic with /agent auto):",
                                 "\u2022 general (current) - the general agent", "\u2022 coder - the coder agent"]


async def test_a_hidden_agent_is_reached_by_its_binding_and_never_by_name(tmp_path) -> None:
    with upstream_set("general", "coder", "billing", "internal") as ups:
        async with Operated(tmp_path, ups, agents=ROSTER, telegram=CHANNEL) as op:
            bound = await op.webhook(TG, telegram_text(1, "hello from the bound user", user=7))
            named = await op.webhook(TG, telegram_text(2, "/agent internal", user=111))
            billing = await op.webhook(TG, telegram_text(3, "/agent billing", user=111))
            decisions = (await op.api("GET", "/v1/decisions")).json()["decisions"]
    assert [r.status_code for r in (bound, named, billing)] == [200, 200, 200]
    assert [(d["agent"], d["reason"]) for d in reversed(decisions)] == [
        ("internal", "binding"), ("general", "explicit_denied"), ("general", "explicit_denied")]
    assert [len(ups[name].requests) for name in ("internal", "general", "billing")] == [1, 2, 0]


async def test_the_switch_limit_of_one_sender_is_shared_by_two_replicas(tmp_path) -> None:
    shared = private_prefix()
    limit = "[channels.telegram.overrides]\nexplicit_switches_per_minute = 2"
    with upstream_set("general", "coder", "billing") as ups:
        (tmp_path / "one").mkdir()
        (tmp_path / "two").mkdir()
        one = Operated(tmp_path / "one", ups, agents={}, telegram=limit, backend="redis", prefix=shared)
        two = Operated(tmp_path / "two", ups, agents={}, telegram=limit, backend="redis", prefix=shared)
        try:
            async with one, two:
                reasons = []
                for update_id, (replica, agent) in enumerate([(one, "coder"), (two, "billing"), (one, "coder"),
                                                              (two, "billing")], start=1):
                    await replica.webhook(TG, telegram_text(update_id, f"/agent {agent}", user=111))
                    latest = (await replica.api("GET", "/v1/decisions?limit=1")).json()["decisions"][0]
                    reasons.append((latest["agent"], latest["reason"]))
        finally:
            await flush_prefix(require_redis(), shared)
    assert reasons == [("coder", "explicit"), ("billing", "explicit"), ("billing", "explicit_limited"),
                       ("billing", "explicit_limited")]
