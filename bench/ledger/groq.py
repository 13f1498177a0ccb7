"""A fake Groq server on 127.0.0.1: the OpenAI-compatible chat completions endpoint the proxy's
classifier calls through `classifier.base_url` (POST /openai/v1/chat/completions).

    groq = FakeGroq(answer); await groq.start(); groq.url
    groq.mode = "ok" | "down" (503) | "slow" (sleeps `slow_s`) | "garbage" (not a completion) | "refused"

`answer(text, names)` picks the agent to answer (names: the candidates listed in the prompt).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable

from aiohttp import web

from bench.ledger.listener import Listener

Answer = Callable[[str, list[str]], str]
_CANDIDATE = re.compile(r"^- ([a-z0-9_-]+):", re.MULTILINE)


class FakeGroq:
    """The fake provider; `calls` counts requests, by mode."""

    def __init__(self, answer: Answer, slow_s: float = 5.0) -> None:
        self.answer = answer
        self.slow_s = slow_s
        self.mode = "ok"
        self.calls: dict[str, int] = {}
        self.port = 0
        self._listener = Listener()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def start(self) -> None:
        app = web.Application()
        app.router.add_post("/openai/v1/chat/completions", self._complete)
        self.port = await self._listener.start(app)

    async def stop(self) -> None:
        await self._listener.stop()

    async def _complete(self, request: web.Request) -> web.StreamResponse:
        mode = self.mode
        self.calls[mode] = self.calls.get(mode, 0) + 1
        body = await request.json()
        if mode == "down":
            return web.json_response({"error": {"message": "over capacity"}}, status=503)
        if mode == "refused":
            assert request.transport is not None
            request.transport.abort()
            return web.Response(status=500)
        if mode == "slow":
            await asyncio.sleep(self.slow_s)
        if mode == "garbage":
            return web.Response(text="<html>not json{", content_type="application/json")
        messages = body.get("messages") or []
        system = next((m.get("content", "") for m in messages if m.get("role") == "system"), "")
        text = next((m.get("content", "") for m in messages if m.get("role") == "user"), "")
        content = self.answer(text, _CANDIDATE.findall(system))
        return web.json_response({
            "id": "chatcmpl-fake", "object": "chat.completion", "created": 0, "model": body.get("model", "fake"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 90, "completion_tokens": 2, "total_tokens": 92},
        })
