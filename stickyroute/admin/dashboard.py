"""The dashboard: one self-contained page on the admin listener, its data from the /v1 API.

    GET /                       the page (HTML); 401 with the hint when no `[admin] token` is set
    GET /dashboard/{asset}      its script and style sheet (dashboard.js, dashboard.css)

Both answer 401 with the API's hint while no `[admin] token` is configured (the API is closed,
so is the page).

The page, script and style ship in the package (stickyroute/admin/static/, package data): no CDN, no
external font, a hand-written SVG chart. Everything is served with a Content-Security-Policy
that lets the page load and fetch only from this listener. The page signs in with the token
(`POST /v1/session`: an HttpOnly cookie), or takes it from the URL fragment (`#token=...`,
never sent to the server in the URL; the script signs in with it and drops the fragment), then
reads /v1/status, /v1/series, /v1/agents, /v1/stats, /v1/decisions and its event stream, and
calls the conversation and demo-agent routes with `X-Stickyroute-Request` (proxy.admin.auth).
"""

from __future__ import annotations

from functools import cache
from importlib.resources import files

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from stickyroute.admin.auth import NO_TOKEN_HINT
from stickyroute.admin.endpoint import Endpoint, Param
from stickyroute.admin.errors import ApiError
from stickyroute.admin.ports import AdminOps

__all__ = ["ASSETS", "ENDPOINTS", "SECURITY_HEADERS"]

ASSETS = {"dashboard.js": "text/javascript; charset=utf-8", "dashboard.css": "text/css; charset=utf-8"}
"""The files under /dashboard/ and their media types."""
SECURITY_HEADERS = {
    "content-security-policy": "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
                               "img-src 'self' data:; form-action 'none'; frame-ancestors 'none'; base-uri 'none'",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cache-control": "no-store",
}
_NO_TOKEN_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>stickyroute: admin API off</title></head>
<body><h1>stickyroute</h1><p id="hint">{hint}</p></body></html>
"""


@cache
def _static(name: str) -> bytes:
    """The shipped file `name` of stickyroute/admin/static/ (read once)."""
    return (files("stickyroute.admin") / "static" / name).read_bytes()


async def page(ops: AdminOps, _request: Request) -> Response:
    if not ops.token():
        escaped = NO_TOKEN_HINT.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        return HTMLResponse(_NO_TOKEN_PAGE.format(hint=escaped), status_code=401, headers=SECURITY_HEADERS)
    return HTMLResponse(_static("dashboard.html"), headers=SECURITY_HEADERS)


async def asset(ops: AdminOps, request: Request) -> Response:
    if not ops.token():
        raise ApiError(401, "unauthorized", "no admin token is configured", hint=NO_TOKEN_HINT)
    name = request.path_params["asset"]
    media_type = ASSETS.get(name)
    if media_type is None:
        raise ApiError(404, "not found", f"no dashboard file {name!r} (there are {', '.join(sorted(ASSETS))})")
    return Response(_static(name), media_type=media_type, headers=SECURITY_HEADERS)


ENDPOINTS = (
    Endpoint("GET", "/", page, "The dashboard page (signs in with the token; its data comes from this API)",
             auth=False, responses={200: "the page", 401: "no admin token is configured (the hint, as HTML)"},
             content="text/html", tag="dashboard"),
    Endpoint("GET", "/dashboard/{asset}", asset, "The dashboard's script and style sheet", auth=False,
             params=(Param("asset", "path", "dashboard.js or dashboard.css", {"enum": sorted(ASSETS)},
                           required=True),),
             responses={200: "the file", 401: "no admin token is configured (with the hint)", 404: "no such file"},
             content="text/plain", tag="dashboard"),
)
