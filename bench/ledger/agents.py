"""Fake agents: real webhook servers on 127.0.0.1 (aiohttp) that record every update id they get.

    agent = FakeAgent("support", ledger, clock); await agent.start(); agent.url
    agent.mode = Mode(status=500) / Mode(delay_s=2.0) / Mode(reset=True); await agent.down(); await agent.up()

Ids read from the body (`update_ids`): Telegram `tg:<update_id>`; WhatsApp `wa:<wamid>` for
messages and `wa:<id>:<status>` for statuses (the proxy's own delivery keys). A request answered
2xx is an accepted delivery; one answered otherwise (or reset) is a refused receipt. A slow agent
records its acceptance when it answers (its 2xx may come after the proxy's deadline: a late
answer), unless the connection was closed first (then it is refused: nobody got the answer).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass

from aiohttp import web

from bench.ledger.book import Ledger
from bench.ledger.listener import Listener


@dataclass(frozen=True)
class Mode:
    """How the agent answers: `status` after `delay_s` seconds; `reset` closes the connection."""

    status: int = 200
    delay_s: float = 0.0
    reset: bool = False


OK = Mode()


def update_ids(body: bytes) -> list[str]:
    """The delivery keys of a Telegram update or a WhatsApp notification body ([] when neither)."""
    try:
        doc = json.loads(body)
    except (ValueError, RecursionError):
        return []
    if not isinstance(doc, dict):
        return []
    if isinstance(doc.get("update_id"), int):
        return [f"tg:{doc['update_id']}"]
    keys = []
    for entry in doc.get("entry") or []:
        for change in entry.get("changes") or []:
            value = change.get("value") or {}
            keys += [f"wa:{m['id']}" for m in value.get("messages") or [] if isinstance(m, dict) and "id" in m]
            keys += [f"wa:{s['id']}:{s['status']}" for s in value.get("statuses") or []
                     if isinstance(s, dict) and "id" in s and "status" in s]
    return keys


class FakeAgent:
    """One agent's webhook endpoint; `clock()` gives the ledger's time (seconds)."""

    def __init__(self, name: str, ledger: Ledger, clock: Callable[[], float], port: int = 0) -> None:
        self.name = name
        self.ledger = ledger
        self.clock = clock
        self.port = port
        self.mode = OK
        self.requests = 0
        self._listener = Listener()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def start(self) -> None:
        await self.up()

    async def up(self) -> None:
        """Listen (again, on the same port)."""
        app = web.Application(client_max_size=16 * 1024 * 1024)
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self.port = await self._listener.start(app, self.port)

    async def down(self) -> None:
        """Stop: open connections are closed and new ones refused until `up()`."""
        await self.stop()

    async def stop(self) -> None:
        await self._listener.stop()

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.read()
        self.requests += 1
        mode = self.mode
        keys = update_ids(body)
        if mode.reset:
            self._record(keys, False)
            assert request.transport is not None
            request.transport.abort()
            return web.Response(status=500)
        if mode.delay_s:
            await asyncio.sleep(mode.delay_s)
        transport = request.transport
        alive = transport is not None and not transport.is_closing()
        self._record(keys, alive and 200 <= mode.status < 300)
        return web.json_response({"ok": mode.status < 300, "agent": self.name}, status=mode.status)

    def _record(self, keys: list[str], accepted: bool) -> None:
        now = self.clock()
        for key in keys:
            self.ledger.received(key, self.name, accepted, now)
