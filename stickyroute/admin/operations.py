"""The operator's routes: probes, metrics, stats, status, the 15-minute series, agents, explain,
reload, demo agents, and signing in for a browser page.

    GET  /healthz /readyz /metrics                     open
    GET  /stats, /v1/stats                             the stats document
    GET  /v1/status                                    readiness, config hash and load time, channels
    GET  /v1/series?minutes=15                         requests, decisions, classifier calls per bucket
    GET  /v1/agents                                    agents with live conversations per channel
    POST /v1/explain                                   `stickyroute explain` on the running config
    POST /v1/reload                                    re-read the config file (SIGHUP does the same)
    GET  /v1/demo/agents, POST /v1/demo/agents/{name}/pause|resume
    POST /v1/session {"token"}, DELETE /v1/session     open / revoke a browser session (its cookie)
"""

from __future__ import annotations

import json

from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response

from stickyroute.admin.auth import COOKIE, throttle_check, throttle_record, token_matches
from stickyroute.admin.endpoint import Endpoint, Param
from stickyroute.admin.errors import ApiError
from stickyroute.admin.params import json_object, optional_int, optional_string, query_number, required_string
from stickyroute.admin.ports import AdminOps

__all__ = ["ENDPOINTS"]


async def healthz(_ops: AdminOps, _request: Request) -> Response:
    return PlainTextResponse("ok")


async def readyz(ops: AdminOps, _request: Request) -> Response:
    word = ops.readiness()
    return PlainTextResponse(word, status_code=200 if word == "ready" else 503)


async def metrics(ops: AdminOps, _request: Request) -> Response:
    body, content_type = await ops.metrics()
    return Response(body, media_type=content_type)


async def stats(ops: AdminOps, _request: Request) -> Response:
    return JSONResponse(json.loads(json.dumps(await ops.stats(), default=str)))


async def status(ops: AdminOps, _request: Request) -> Response:
    return JSONResponse(ops.status())


async def series(ops: AdminOps, request: Request) -> Response:
    return JSONResponse(ops.series(query_number(request, "minutes", 15.0, 1.0, 15.0)))


async def agents(ops: AdminOps, _request: Request) -> Response:
    found = await ops.agents()
    return JSONResponse({"agents": found, "count": len(found)})


async def explain(ops: AdminOps, request: Request) -> Response:
    body = await json_object(request, ("channel", "text", "current", "candidate", "counter"))
    return JSONResponse(ops.explain(required_string(body, "channel"), required_string(body, "text"),
                                    optional_string(body, "current"), optional_string(body, "candidate"),
                                    optional_int(body, "counter", 0)))


async def reload(ops: AdminOps, _request: Request) -> Response:
    outcome = await ops.reload()
    return JSONResponse(outcome, status_code=200 if outcome["ok"] else 422)


async def demo_agents(ops: AdminOps, _request: Request) -> Response:
    return JSONResponse({"agents": ops.demo_agents()})


async def pause(ops: AdminOps, request: Request) -> Response:
    return JSONResponse(await ops.pause(request.path_params["name"], True))


async def resume(ops: AdminOps, request: Request) -> Response:
    return JSONResponse(await ops.pause(request.path_params["name"], False))


async def sign_in(ops: AdminOps, request: Request) -> Response:
    address, refusal = throttle_check(ops, request.scope)
    if refusal is not None:
        return refusal
    token = required_string(await json_object(request, ("token",)), "token")
    settings = ops.admin()
    if not token_matches(token, settings.token):
        if settings.token:
            throttle_record(ops, address, False)
        raise ApiError(401, "unauthorized", "wrong token" if settings.token else "no admin token is configured")
    throttle_record(ops, address, True)
    assert settings.token is not None
    session = ops.sessions.open(settings.token, ops.now(), settings.session_max_age_s)
    response = Response(status_code=204)
    response.set_cookie(COOKIE, session, max_age=max(1, int(settings.session_max_age_s)), httponly=True,
                        samesite="strict", path="/", secure=settings.behind_tls)
    return response


async def sign_out(ops: AdminOps, request: Request) -> Response:
    ops.sessions.close(request.cookies.get(COOKIE))
    response = Response(status_code=204)
    response.delete_cookie(COOKIE, path="/", httponly=True, samesite="strict", secure=ops.admin().behind_tls)
    return response


_NAME = (Param("name", "path", "a demo agent's name", required=True),)
_DEMO = {200: "the demo agent", 404: "no demo agents in this process, or no such demo agent"}
ENDPOINTS = (
    Endpoint("GET", "/healthz", healthz, "200 ok while the process runs", auth=False, content="text/plain",
             tag="probes"),
    Endpoint("GET", "/readyz", readyz, "200 ready; 503 not ready, draining or degraded", auth=False,
             responses={200: "ready", 503: "not ready, draining (shutting down) or degraded (state on fallback)"},
             content="text/plain", tag="probes"),
    Endpoint("GET", "/metrics", metrics, "Prometheus metrics", auth=False, content="text/plain", tag="probes"),
    Endpoint("GET", "/stats", stats, "The stats document (as /v1/stats)", tag="stats"),
    Endpoint("GET", "/v1/stats", stats, "Requests, decisions, switches, upstream, classifier, routes, config",
             tag="stats"),
    Endpoint("GET", "/v1/status", status, "Readiness, the running config's hash and load time, channels",
             tag="stats"),
    Endpoint("GET", "/v1/series", series, "Requests, decisions per reason, classifier calls and tokens in time "
             "buckets", params=(Param("minutes", "query", "how far back (1-15, default 15)",
                                      {"type": "number", "minimum": 1, "maximum": 15}),),
             responses={200: "the buckets, oldest first", 422: "bad minutes"}, tag="stats"),
    Endpoint("GET", "/v1/agents", agents, "Agents, the channels reaching them, live conversations per channel",
             tag="stats"),
    Endpoint("POST", "/v1/explain", explain, "Explain one routing decision against the running config",
             body={"type": "object", "required": ["channel", "text"], "additionalProperties": False,
                   "properties": {"channel": {"type": "string"}, "text": {"type": "string"},
                                  "current": {"type": "string"}, "candidate": {"type": "string"},
                                  "counter": {"type": "integer", "minimum": 0}}},
             responses={200: "the explanation", 404: "unknown channel", 422: "a bad body or unknown agent"},
             tag="operations"),
    Endpoint("POST", "/v1/reload", reload, "Re-read the config file; a config with errors is refused whole",
             responses={200: "reloaded (or a rolling restart of the workers started)",
                        422: "refused: the errors, as stickyroute check prints them"}, tag="operations"),
    Endpoint("GET", "/v1/demo/agents", demo_agents, "The demo agents of serve --demo-agents",
             responses={200: "the demo agents", 404: "no demo agents in this process"}, tag="demo"),
    Endpoint("POST", "/v1/demo/agents/{name}/pause", pause,
             "Pause a demo agent: its port refuses connections (the proxy answers 502) until resumed",
             params=_NAME, responses=_DEMO, tag="demo"),
    Endpoint("POST", "/v1/demo/agents/{name}/resume", resume, "Resume a paused demo agent", params=_NAME,
             responses=_DEMO, tag="demo"),
    Endpoint("POST", "/v1/session", sign_in, "Sign a browser in: a new session id in the HttpOnly session "
             "cookie (never the token)", auth=False,
             body={"type": "object", "required": ["token"], "properties": {"token": {"type": "string"}}},
             responses={204: "signed in", 401: "wrong token, or none configured", 413: "a body over [admin] "
                        "max_body_bytes", 422: "a bad body", 429: "too many failed authentications from this "
                        "address (Retry-After)"}, tag="session"),
    Endpoint("DELETE", "/v1/session", sign_out, "Sign a browser out: revokes its session and clears the cookie",
             auth=False, responses={204: "signed out"}, tag="session"),
)
