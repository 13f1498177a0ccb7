"""Every forwarded delivery names itself to the agent: `X-Stickyroute-Delivery: <channel>:<id>`
and `X-Stickyroute-Attempt: N` (1 on the first attempt, counted on both backends), so an agent can
deduplicate the redelivery a crashed replica may cause."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.proxy.harness import Proxy, telegram_text, upstream_set, whatsapp_text, write_config
from tests.redis_server import OwnRedis
from tests.upstreams import Behaviour, RecordedRequest


@pytest.fixture(params=["memory", "redis"])
def state(request: pytest.FixtureRequest) -> Iterator[str]:
    if request.param == "memory":
        yield ""
        return
    with OwnRedis() as redis:
        yield f'[state]\nbackend = "redis"\nurl = "{redis.url}"\nkey_prefix = "dh:"\n'


def _marks(request: RecordedRequest) -> tuple[str, str]:
    headers = {name.decode().lower(): value.decode() for name, value in request.headers}
    return headers["x-stickyroute-delivery"], headers["x-stickyroute-attempt"]


async def test_each_attempt_of_a_telegram_update_is_numbered(tmp_path: Path, state: str) -> None:
    with upstream_set("general") as ups:
        async with Proxy(write_config(tmp_path, ups, top=state)) as proxy:
            ups["general"].behaviour = Behaviour(status=500)
            failed = await proxy.post("/webhooks/telegram", telegram_text(77, "hello"))
            ups["general"].behaviour = Behaviour()
            answered = await proxy.post("/webhooks/telegram", telegram_text(77, "hello"))
            redelivered = await proxy.post("/webhooks/telegram", telegram_text(77, "hello"))
    assert (failed.status_code, answered.status_code, redelivered.headers["x-stickyroute-reason"]) == (
        500, 200, "redelivery")
    assert [_marks(r) for r in ups["general"].requests] == [("telegram:77", "1"), ("telegram:77", "2")]


async def test_a_whatsapp_batch_names_every_message(tmp_path: Path, state: str) -> None:
    body = whatsapp_text([("15550000001", "wamid.A", "hi"), ("15550000002", "wamid.B", "hello")])
    with upstream_set("general") as ups:
        async with Proxy(write_config(tmp_path, ups, top=state)) as proxy:
            response = await proxy.post("/webhooks/whatsapp", body)
    assert response.status_code == 200
    assert [_marks(r) for r in ups["general"].requests] == [("whatsapp:wamid.A,whatsapp:wamid.B", "1,1")]
