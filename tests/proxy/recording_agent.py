"""An agent in its own process for the replica tests: records every forwarded Telegram update and
answers 200 with `AGENT_ANSWER` (env) after `AGENT_DELAY_S` (env) seconds.

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
        RECORDS.append([json.loads(body)["update_id"], headers[b"x-stickyroute-agent"].decode(),
                        headers[b"x-stickyroute-reason"].decode()])
        if DELAY_S:
            await asyncio.sleep(DELAY_S)
        payload = ANSWER
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
    await send({"type": "http.response.body", "body": payload})
