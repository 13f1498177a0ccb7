"""The admin listener (127.0.0.1 by default): health, readiness, stats JSON, Prometheus metrics.

    /healthz   200 "ok" while the process runs
    /readyz    200 "ready" once the service started; 503 "not ready" before, 503 "degraded" while
               the shared state backend (Redis) does not answer (the proxy still serves webhooks
               on its per-process memory fallback)
    /stats     JSON (`Service.stats_snapshot`)
    /metrics   Prometheus text exposition
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

__all__ = ["create_admin_app"]

Stats = Callable[[], Awaitable[Mapping[str, object]]]


def create_admin_app(stats: Stats, readiness: Callable[[], str],
                     metrics: Callable[[], tuple[bytes, str]]) -> Starlette:
    """The admin app: `stats()` gives the /stats JSON, `readiness()` the /readyz word ("ready"
    answers 200, anything else 503), `metrics()` the Prometheus body and its content type."""

    async def healthz(_request: Request) -> Response:
        return PlainTextResponse("ok")

    async def readyz(_request: Request) -> Response:
        word = readiness()
        return PlainTextResponse(word, status_code=200 if word == "ready" else 503)

    async def stats_view(_request: Request) -> Response:
        return JSONResponse(json.loads(json.dumps(await stats(), default=str)))

    async def metrics_view(_request: Request) -> Response:
        body, content_type = metrics()
        return Response(body, media_type=content_type)

    return Starlette(routes=[
        Route("/healthz", healthz), Route("/readyz", readyz),
        Route("/stats", stats_view), Route("/metrics", metrics_view),
    ])
