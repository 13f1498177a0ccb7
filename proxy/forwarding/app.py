"""The ASGI shell: a thin Starlette app per listener (webhooks; admin), nothing else.

Public app: every path; a configured channel path is handed to the dispatcher with the body
read once (capped at `server.max_body_bytes`: 413 above it); any other path is 404.
Admin app (127.0.0.1 by default): `/healthz` (process up), `/readyz` (config loaded, upstream
client ready), `/stats` (JSON), `/metrics` (Prometheus text format).
"""

from __future__ import annotations

import json
import logging
from typing import Any, Awaitable, Callable

from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from proxy.config.model import Channel, Config
from proxy.forwarding.dispatch import Inbound
from proxy.forwarding.replies import Outbound

log = logging.getLogger("stickyroute.app")

_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]


class _BodyTooLarge(Exception):
    """The request body exceeds `server.max_body_bytes`."""


async def _read_body(request: Request, limit: int) -> bytes:
    """The whole request body (de-chunked by the server), at most `limit` bytes."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise _BodyTooLarge
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise _BodyTooLarge
        chunks.append(chunk)
    return b"".join(chunks)


def create_app(config: Config, handle: Callable[[Channel, Inbound], Awaitable[Outbound]], lifespan: Any = None) -> Starlette:
    """The public webhook app: `handle(channel, inbound)` (the dispatcher) answers channel paths."""
    limit = config.server.max_body_bytes

    async def webhook(request: Request) -> Response:
        path = request.scope["path"]  # decoded path; cheaper than building request.url
        channel = config.channel_for_path(path)
        if channel is None:
            return PlainTextResponse("not found", status_code=404)
        try:
            body = await _read_body(request, limit)
        except _BodyTooLarge:
            return PlainTextResponse(f"body larger than {limit} bytes", status_code=413)
        except ClientDisconnect:
            return Response(status_code=400)
        scope = request.scope
        client = request.client
        inbound = Inbound(
            method=request.method,
            path=path,
            raw_path=scope.get("raw_path") or path.encode(),
            query=scope.get("query_string", b""),
            headers=list(scope["headers"]),
            body=body,
            client_ip=client.host if client else "",
            scheme=scope.get("scheme", "http"),
            host=request.headers.get("host", ""),
        )
        out = await handle(channel, inbound)
        response = Response(content=out.body, status_code=out.status)
        response.raw_headers = [h for h in response.raw_headers if h[0] == b"content-length"] + [
            h for h in out.headers if h[0].lower() != b"content-length"
        ]
        return response

    return Starlette(routes=[Route("/{path:path}", webhook, methods=_METHODS)], lifespan=lifespan)


def create_admin_app(stats: Callable[[], dict], ready: Callable[[], bool], metrics: Callable[[], tuple[bytes, str]]) -> Starlette:
    """The admin listener: health, readiness, stats JSON and Prometheus metrics."""

    async def healthz(_request: Request) -> Response:
        return PlainTextResponse("ok")

    async def readyz(_request: Request) -> Response:
        if ready():
            return PlainTextResponse("ready")
        return PlainTextResponse("not ready", status_code=503)

    async def stats_view(_request: Request) -> Response:
        return JSONResponse(json.loads(json.dumps(stats(), default=str)))

    async def metrics_view(_request: Request) -> Response:
        body, content_type = metrics()
        return Response(body, media_type=content_type)

    return Starlette(routes=[
        Route("/healthz", healthz), Route("/readyz", readyz),
        Route("/stats", stats_view), Route("/metrics", metrics_view),
    ])
