"""The admin listener (127.0.0.1 by default): probes, metrics, stats and the /v1 API, one
Starlette app built from the route table (`ENDPOINTS`), behind `BodyCap` (no body over `[admin]
max_body_bytes` is read) and `BearerAuth` (tokens, sessions, the failed-authentication throttle).

Routes and what they answer: docs/operating.md "The admin listener and its API", and
`GET /v1/openapi.json` (generated from the same table). JSON in and out; errors are
`{"error", "detail"}` (stickyroute.admin.errors).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from stickyroute.admin.auth import BearerAuth
from stickyroute.admin.body import BodyCap
from stickyroute.admin.conversations import ENDPOINTS as CONVERSATIONS
from stickyroute.admin.dashboard import ENDPOINTS as DASHBOARD
from stickyroute.admin.decisions import ENDPOINTS as DECISIONS
from stickyroute.admin.endpoint import Endpoint, Handler
from stickyroute.admin.errors import ApiError, error_response
from stickyroute.admin.hints import ENDPOINTS as HINTS
from stickyroute.admin.openapi import openapi_document
from stickyroute.admin.operations import ENDPOINTS as OPERATIONS
from stickyroute.admin.ports import AdminOps

__all__ = ["ENDPOINTS", "create_admin_app"]


async def _openapi(_ops: AdminOps, _request: Request) -> Response:
    return JSONResponse(openapi_document(ENDPOINTS))


ENDPOINTS: tuple[Endpoint, ...] = (
    *OPERATIONS,
    *CONVERSATIONS,
    *DECISIONS,
    *DASHBOARD,
    *HINTS,
    Endpoint("GET", "/v1/openapi.json", _openapi, "This document", tag="admin"),
)
"""Every route of the admin listener (served and documented from here)."""


def _bound(handler: Handler, ops: AdminOps) -> Callable[[Request], Awaitable[Response]]:
    async def call(request: Request) -> Response:
        try:
            return await handler(ops, request)
        except ApiError as exc:
            return exc.response()

    return call


async def _not_found(_request: Request, _exc: Exception) -> Response:
    return error_response(404, "not found", "no such route (see GET /v1/openapi.json)")


async def _not_allowed(_request: Request, _exc: Exception) -> Response:
    return error_response(405, "method not allowed", "see GET /v1/openapi.json for the methods of each route")


def create_admin_app(ops: AdminOps) -> Starlette:
    """The admin ASGI app over `ops` (the running service's operations)."""
    routes = [Route(e.path, _bound(e.handler, ops), methods=[e.method]) for e in ENDPOINTS]
    app = Starlette(routes=routes, exception_handlers={404: _not_found, 405: _not_allowed})
    app.add_middleware(BearerAuth, ops=ops)
    app.add_middleware(BodyCap, limit=lambda: ops.admin().max_body_bytes)  # added last: outermost
    return app
