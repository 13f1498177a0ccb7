"""Live reload (issue #11) under load, on both state backends: a config with errors is refused
whole while requests flow; a valid one swaps between requests; no request fails; every route to
an agent that is kept survives; routes to the removed agent are dropped; a request in flight at
the swap finishes on the config it started with."""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path

import pytest

from tests.admin.operated import BACKENDS, Operated
from tests.proxy.harness import telegram_text, upstream_set

TG = "/webhooks/telegram"
SENDERS = 60
AGENTS = ("coder", "billing", "ops")
GUARD_S = 30.0


def agent_of(sender: int) -> str:
    return AGENTS[sender % 3]


def without_ops(text: str) -> str:
    """The config without agent ops, and a changed description (a different hash)."""
    start = text.index('[agents."ops"]')
    end = text.index("[agents.", start + 1) if "[agents." in text[start + 1:] else text.index("[channels", start)
    return (text[:start] + text[end:]).replace('description = "the coder agent"', 'description = "writes code"')


@pytest.mark.parametrize("backend", BACKENDS)
async def test_reload_under_load_keeps_routes_of_kept_agents_and_fails_no_request(tmp_path: Path, backend: str) -> None:
    with upstream_set("general", "coder", "billing", "ops") as ups:
        for upstream in ups.values():
            upstream.respond(delay_s=0.01)  # requests are in flight when the config swaps
        async with Operated(tmp_path, ups, agents={}, backend=backend) as op:
            path = tmp_path / "proxy.toml"
            good = path.read_text()
            for sender in range(SENDERS):  # every sender chooses an agent explicitly
                reply = await op.webhook(TG, telegram_text(sender + 1, f"/agent {agent_of(sender)}", user=1000 + sender))
                assert reply.status_code == 200
            statuses: list[int] = []
            update_ids = iter(range(10_000, 100_000))
            stop = asyncio.Event()

            async def load(worker: int) -> None:
                rng = random.Random(worker)
                while not stop.is_set():
                    sender = rng.randrange(SENDERS)
                    body = telegram_text(next(update_ids), "and one more message for you", user=1000 + sender)
                    statuses.append((await op.webhook(TG, body)).status_code)

            workers = [asyncio.create_task(load(w)) for w in range(8)]
            try:
                await _until(lambda: len(statuses) >= 40)
                path.write_text(good.replace('default_agent = "general"', 'default_agent = "nobody"', 1))
                refused = await op.api("POST", "/v1/reload")
                await _until(lambda: len(statuses) >= 80)
                path.write_text(without_ops(good))
                done = await op.api("POST", "/v1/reload")
                await _until(lambda: len(statuses) >= 160)
                path.write_text("[agents")  # a syntax error: refused whole again
                broken = await op.api("POST", "/v1/reload")
                await _until(lambda: len(statuses) >= 200)
            finally:
                stop.set()
                await asyncio.wait_for(asyncio.gather(*workers), GUARD_S)
            await asyncio.wait_for(asyncio.gather(*op.service.retiring), GUARD_S)  # the old config's last drop
            routes = {c["agent"] for c in (await op.api("GET", "/v1/conversations?limit=1000")).json()["conversations"]}
            kept = [(await op.api("GET", f"/v1/conversations/telegram/{1000 + s}/{1000 + s}")).json()
                    for s in range(SENDERS) if agent_of(s) != "ops"]
            after = len(ups["ops"].requests)
            for sender in range(SENDERS):  # one more message each, on the new config
                await op.webhook(TG, telegram_text(200_000 + sender, "and the last message now", user=1000 + sender))
            last = {json.loads(r.body)["update_id"] for name in ("general", "coder", "billing") for r in ups[name].requests}
    assert (refused.status_code, refused.json()["ok"], broken.status_code, done.status_code) == (422, False, 422, 200)
    assert done.json()["dropped_routes"] == SENDERS // 3
    assert set(statuses) == {200} and len(statuses) >= 200
    assert routes == {"coder", "billing"}
    assert [(c["agent"], c["explicit"]) for c in kept] == [(agent_of(s), True) for s in range(SENDERS)
                                                           if agent_of(s) != "ops"]
    assert len(ups["ops"].requests) == after
    assert {200_000 + s for s in range(SENDERS)} <= last


async def test_a_request_in_flight_at_the_swap_finishes_on_its_config(tmp_path: Path) -> None:
    with upstream_set("general", "coder", "ops") as ups:
        async with Operated(tmp_path, ups, agents={}) as op:
            path = tmp_path / "proxy.toml"
            await op.webhook(TG, telegram_text(1, "/agent ops", user=7))
            ups["ops"].respond(hang=True)
            in_flight = asyncio.create_task(op.webhook(TG, telegram_text(2, "to ops, slowly, a long message", user=7)))
            await ups["ops"].until_requests(2)
            path.write_text(without_ops(path.read_text()))
            done = await op.api("POST", "/v1/reload")
            ups["ops"].release()
            reply = await asyncio.wait_for(in_flight, GUARD_S)
            after = await op.webhook(TG, telegram_text(3, "where do I go now", user=7))
            decisions = (await op.api("GET", "/v1/decisions?limit=2")).json()["decisions"]
    assert (done.json()["ok"], reply.status_code, after.status_code) == (True, 200, 200)
    assert [(d["agent"], d["reason"]) for d in decisions] == [("general", "default"), ("ops", "explicit_pin")]


async def _until(ready: object) -> None:
    async with asyncio.timeout(GUARD_S):
        while not ready():  # type: ignore[operator]  # noqa: ASYNC110 (load tasks run meanwhile)
            await asyncio.sleep(0.01)


async def test_a_retry_of_an_update_first_sent_to_a_removed_agent_is_decided_again(tmp_path: Path) -> None:
    with upstream_set("general", "coder", "ops") as ups:
        async with Operated(tmp_path, ups, agents={}) as op:
            path = tmp_path / "proxy.toml"
            await op.webhook(TG, telegram_text(1, "/agent ops", user=7))
            ups["ops"].respond(status=500)
            failed = await op.webhook(TG, telegram_text(2, "this one fails at ops, a long message", user=7))
            path.write_text(without_ops(path.read_text()))
            await op.api("POST", "/v1/reload")
            retried = await op.webhook(TG, telegram_text(2, "this one fails at ops, a long message", user=7))
            decisions = (await op.api("GET", "/v1/decisions?limit=1")).json()["decisions"]
    assert (failed.status_code, retried.status_code) == (500, 200)
    assert [(d["agent"], d["reason"]) for d in decisions] == [("general", "default")]


async def test_a_pool_is_closed_only_when_no_config_still_serving_uses_it(tmp_path: Path) -> None:
    with upstream_set("general", "coder") as ups:
        async with Operated(tmp_path, ups, agents={}) as op:
            path = tmp_path / "proxy.toml"
            first = op.service.runtime
            ups["general"].respond(hang=True)
            slow = asyncio.create_task(op.webhook(TG, telegram_text(1, "a long request on the first config", user=7)))
            await ups["general"].until_requests(1)
            path.write_text(path.read_text().replace('description = "the coder agent"', 'description = "code"'))
            await op.api("POST", "/v1/reload")  # same [upstream]: the second config shares the first's leg
            second = op.service.runtime
            path.write_text(path.read_text().replace("timeout_s = 5.0", "timeout_s = 6.0"))
            await op.api("POST", "/v1/reload")  # a new leg; the second config is idle at once
            await _until(lambda: second not in op.service._retired)
            shared_open = not first.leg.pools._pools["general"].closed  # type: ignore[attr-defined]
            ups["general"].release()
            reply = await asyncio.wait_for(slow, GUARD_S)
            await asyncio.wait_for(asyncio.gather(*op.service.retiring), GUARD_S)
            closed = first.leg.pools._pools == {}  # type: ignore[attr-defined]
    assert (second.leg is first.leg, op.service.runtime.leg is not first.leg) == (True, True)
    assert (shared_open, reply.status_code, closed) == (True, 200, True)
