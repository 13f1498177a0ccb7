"""An agent in its own process for the replica tests: records every forwarded Telegram update and
answers 200 with `AGENT_ANSWER` (env) after `AGENT_DELAY_S` (env) seconds (a WhatsApp notification
is recorded under its first message's wamid).

    python -m uvicorn tests.proxy.recording_agent:app --port P
    GET /__records -> [[update_id, agent, reason], ...] in arrival order

A process of its own (not a thread of the test process): sharing the test's interpreter would make
every request wait for the GIL, and these tests send thousands.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Awaitable, Callable
from typing import Any

ANSWER = os.environ.get("AGENT_ANSWER", '{"ok":true}').encode()
DELAY_S = float(os.environ.get("AGENT_DELAY_S", "0"))
RECORDS: list[list[Any]] = []


def _update_id(doc: dict[str, Any]) -> int | str:
    """A Telegram update's `update_id`, or the wamid of a WhatsApp notification's first message."""
    if "update_id" in doc:
        return int(doc["update_id"])
    return str(doc["entry"][0]["changes"][0]["value"]["messages"][0]["id"])


async def app(scope: dict[str, Any], receive: Callable[[], Awaitable[dict[str, Any]]],
              send: Callable[[dict[str, Any]], Awaitable[None]]) -> None:
    if scope["type"] != "http":
        return
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    if scope["path"] == "/__records":
        payload = json.dumps(RECORDS).encode()
    else:
        headers = dict(scope["headers"])
        RECORDS.append([_update_id(json.loads(body)), headers[b"x-stickyroute-agent"].decode(),
                        headers[b"x-stickyroute-reason"].decode()])
        if DELAY_S:
            await asyncio.sleep(DELAY_S)
        payload = ANSWER
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
    await send({"type": "http.response.body", "body": payload})
