"""The wire-test helper itself (tests/upstreams.py): any ASGI app on a real uvicorn, lifespan run."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from tests.upstreams import serve_app


async def test_serve_app_runs_lifespan_and_serves_real_http() -> None:
    events: list[str] = []

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        events.append("startup")
        yield
        events.append("shutdown")

    async def echo(request: Request) -> Response:
        body = await request.body()
        seen = request.scope["raw_path"] + b"?" + request.scope["query_string"]
        return Response(seen + b" " + body + b" " + request.client.host.encode(), media_type="text/plain")

    app = Starlette(routes=[Route("/{path:path}", echo, methods=["POST"])], lifespan=lifespan)
    with serve_app(app) as base_url:
        assert events == ["startup"]
        async with httpx.AsyncClient() as client:
            reply = await client.post(
                f"{base_url}/webhooks/telegram?b=2&a=%2F", content=b"hi", headers={"X-Forwarded-For": "10.6.6.6"}
            )
    assert events == ["startup", "shutdown"]
    assert (reply.status_code, reply.content) == (200, b"/webhooks/telegram?b=2&a=%2F hi 127.0.0.1")


