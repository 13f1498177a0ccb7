"""The recent decisions through the admin API: the ring (newest first, by channel, no text unless
log_text) and the live server-sent events stream on a real uvicorn (reconnection with
Last-Event-ID replays what was missed; the stream ends when the proxy stops)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
from collections.abc import AsyncIterator

import httpx
import pytest
import uvicorn

from stickyroute.server.listener import Listener
from tests.admin.operated import TOKEN, Operated
from tests.proxy.harness import telegram_text, whatsapp_text

TG, WA = "/webhooks/telegram", "/webhooks/whatsapp"
GUARD_S = 10.0
AUTH = {"authorization": f"Bearer {TOKEN}"}


@contextlib.asynccontextmanager
async def served(app: object) -> AsyncIterator[str]:
    """`app` on a real uvicorn in this event loop (so the stream and the webhooks share it)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = Listener(uvicorn.Config(app, lifespan="off", log_level="warning"))  # type: ignore[arg-type]
    task = asyncio.get_running_loop().create_task(server.serve(sockets=[sock]))
    async with asyncio.timeout(GUARD_S):
        while not server.started:  # noqa: ASYNC110 (uvicorn has no start event: a bounded wait on a real server)
            await asyncio.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, GUARD_S)


async def events(response: httpx.Response, count: int) -> list[tuple[str, dict[str, object]]]:
    """The next `count` decision events (id, data) of an open stream."""
    found: list[tuple[str, dict[str, object]]] = []
    event_id = ""
    async with asyncio.timeout(GUARD_S):
        async for line in response.aiter_lines():
            if line.startswith("id: "):
                event_id = line[4:]
            elif line.startswith("data: "):
                found.append((event_id, json.loads(line[6:])))
                if len(found) == count:
                    return found
    return found


async def test_the_ring_lists_the_last_decisions_newest_first(tmp_path, upstreams) -> None:
    async with Operated(tmp_path, upstreams) as op:
        await op.webhook(TG, telegram_text(1, "hello there, first", user=111))
        await op.webhook(WA, whatsapp_text([("15550001", "wamid.A", "hello from whatsapp")]))
        await op.webhook(TG, b"not json at all")
        everything = (await op.api("GET", "/v1/decisions")).json()
        telegram = (await op.api("GET", "/v1/decisions?channel=telegram&limit=1")).json()
        bad = await op.api("GET", "/v1/decisions?limit=1001")
    assert [(d["channel"], d["reason"], d["status"], d["id"]) for d in everything["decisions"]] == [
        ("telegram", "unparsed", 200, 3), ("whatsapp", "default", 200, 2), ("telegram", "default", 200, 1)]
    assert all("text" not in d for d in everything["decisions"])
    assert everything["decisions"][2]["time"] == op.clock.t
    assert [d["id"] for d in telegram["decisions"]] == [3]
    assert (bad.status_code, bad.json()["detail"]) == (422, "limit: expected an integer between 1 and 1000, got 1001")


async def test_text_is_in_the_ring_only_with_log_text(tmp_path, upstreams) -> None:
    overrides = "[channels.telegram.overrides]\nlog_text = true"
    async with Operated(tmp_path, upstreams, telegram=overrides) as op:
        await op.webhook(TG, telegram_text(1, "hello there, first", user=111))
        await op.webhook(WA, whatsapp_text([("15550001", "wamid.A", "hello from whatsapp")]))
        found = (await op.api("GET", "/v1/decisions")).json()["decisions"]
    assert [d.get("text") for d in found] == [None, "hello there, first"]


async def test_the_stream_sends_each_decision_as_it_is_made(tmp_path, upstreams) -> None:
    async with Operated(tmp_path, upstreams) as op:
        async with served(op.service.admin_app()) as base, httpx.AsyncClient(timeout=GUARD_S) as client:
            async with client.stream("GET", base + "/v1/decisions/stream?channel=telegram", headers=AUTH) as stream:
                await op.webhook(TG, telegram_text(1, "hello there, first", user=111))
                await op.webhook(WA, whatsapp_text([("15550001", "wamid.A", "not on this stream")]))
                await op.webhook(TG, telegram_text(2, "/agent coder", user=111))
                live = await events(stream, 2)
                content_type = stream.headers["content-type"]
            async with client.stream("GET", base + "/v1/decisions/stream",
                                     headers={**AUTH, "last-event-id": live[0][0]}) as again:
                missed = await events(again, 2)
    assert content_type.startswith("text/event-stream")
    assert [(i, d["agent"], d["reason"]) for i, d in live] == [("1", "general", "default"), ("3", "coder", "explicit")]
    assert [(i, d["channel"]) for i, d in missed] == [("2", "whatsapp"), ("3", "telegram")]


async def test_the_stream_ends_when_the_proxy_stops(tmp_path, upstreams) -> None:
    op = Operated(tmp_path, upstreams)
    await op.__aenter__()
    try:
        async with served(op.service.admin_app()) as base, httpx.AsyncClient(timeout=GUARD_S) as client:
            async with client.stream("GET", base + "/v1/decisions/stream", headers=AUTH) as stream:
                op.service.accounting.ring.close()  # what Service.aclose does first
                async with asyncio.timeout(GUARD_S):
                    rest = [line async for line in stream.aiter_lines()]
    finally:
        await op.__aexit__(None, None, None)
    assert rest == ["retry: 2000", ""]


@pytest.mark.parametrize("after", ["x", "1.5"])
async def test_a_bad_resume_id_is_422(tmp_path, upstreams, after) -> None:
    async with Operated(tmp_path, upstreams) as op:
        answer = await op.api("GET", f"/v1/decisions/stream?after={after}")
    assert (answer.status_code, answer.json()["detail"]) == (
        422, f'after: expected a decision id (an integer), got "{after}"')
