"""Two Redis round trips per routed update, counted by Redis itself (INFO commandstats), and one
slot per script call at every call site (the keys of each call share a hash slot).

The proxy runs in-process (`tests.proxy.harness.Proxy`) against real upstreams and a redis-server
of the test's own on a free port, so no other test's traffic is counted."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from redis import Redis
from redis.crc import key_slot

from stickyroute.state.redis import scripts, step_scripts
from stickyroute.state.redis.client import RedisStore
from tests.proxy.harness import Proxy, telegram_text, upstream_set, whatsapp_text, write_config
from tests.redis_server import OwnRedis

IN_SCRIPTS = {"get", "set", "del", "exists", "hget", "hset", "hmget", "hdel", "hincrby", "pexpire", "pttl"}
"""What the scripts call inside Redis (commandstats counts those too; none is a round trip)."""
CONNECTION_SETUP = {"hello", "client|setinfo", "select", "auth"}
"""A new pooled connection's handshake (not per update)."""
SCRIPT_NAMES = {getattr(m, n): n for m in (scripts, step_scripts) for n in dir(m) if n.isupper() and not n.startswith("_")}
CONVERSATIONS = 10
UPDATES = 1000


def commandstats(url: str) -> Counter[str]:
    """Calls per command so far (INFO commandstats), `info` itself left out."""
    with Redis.from_url(url) as client:
        stats = client.info("commandstats")
    return Counter({name.removeprefix("cmdstat_"): int(v["calls"]) for name, v in stats.items()
                    if name != "cmdstat_info"})


def reason(request: Any) -> bytes:
    return dict(request.headers)[b"x-stickyroute-reason"]


async def test_a_routed_update_costs_two_redis_round_trips(tmp_path: Path) -> None:
    with OwnRedis() as redis, upstream_set("general", "billing") as ups:
        top = f'[state]\nbackend = "redis"\nurl = "{redis.url}"\nop_timeout_ms = 1000\n'
        async with Proxy(write_config(tmp_path, ups, top=top)) as proxy:
            for user in range(CONVERSATIONS):  # each conversation's first message: its route (an explicit switch)
                await proxy.post("/webhooks/telegram", telegram_text(user + 1, "/agent billing", user=user))
                await proxy.post("/webhooks/telegram", telegram_text(user + 51, "thanks", user=user))  # scripts loaded
            before = commandstats(redis.url)
            statuses: Counter[int] = Counter()
            for i in range(UPDATES):
                body = telegram_text(100 + i, f"and one more thing, {i}", user=i % CONVERSATIONS)
                statuses[(await proxy.post("/webhooks/telegram", body)).status_code] += 1
            after = commandstats(redis.url)
        delta = after - before
        reasons = Counter(reason(r) for r in ups["billing"].requests[2 * CONVERSATIONS:])
    assert statuses == {200: UPDATES}
    assert reasons == {b"explicit_pin": UPDATES}  # every one decided by Layer 2 on its conversation's route
    sent = {name: calls for name, calls in delta.items() if name not in IN_SCRIPTS | CONNECTION_SETUP}
    assert sent == {"evalsha": 2 * UPDATES}, delta


async def test_every_script_call_names_keys_of_one_slot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[str, tuple[str, ...]]] = []
    submit = RedisStore._submit

    def observed(self: RedisStore, source: str, keys: Sequence[str], args: Sequence[Any]) -> Any:
        seen.append((SCRIPT_NAMES.get(source, "?"), tuple(keys)))
        return submit(self, source, keys, args)

    monkeypatch.setattr(RedisStore, "_submit", observed)
    with OwnRedis() as redis, upstream_set("general", "billing") as ups:
        top = f'[state]\nbackend = "redis"\nurl = "{redis.url}"\nop_timeout_ms = 1000\nclaim_lease_s = 0.3\n'
        async with Proxy(write_config(tmp_path, ups, top=top)) as proxy:
            for i in range(6):  # begin, finish, note; a failure; a slow one renewed; redeliveries
                for up in ups.values():
                    up.respond(status=500 if i == 2 else 200, delay_s=0.35 if i == 3 else 0.0)
                text = "/agent billing" if i == 1 else f"message {i}"  # a switch: noted before its forward
                await proxy.post("/webhooks/telegram", telegram_text(i % 4 + 1, text, user=i % 2))
            await proxy.post("/webhooks/whatsapp", whatsapp_text([("15551230001", "wamid.A", "hi"),
                                                                  ("15551230002", "wamid.B", "hello")]))
            await proxy.post("/webhooks/telegram", b'{"update_id": 99}')
    names = Counter(name for name, _keys in seen)
    crossing = [(name, keys) for name, keys in seen if len({key_slot(k.encode()) for k in keys}) != 1]
    assert crossing == []
    assert {"BEGIN", "NOTE", "FINISH", "RENEW", "CLAIM", "COMPLETE"} <= names.keys(), names
