"""Demo agents for `make run`: one tiny webhook server per loopback agent URL of the config,
logging every request it receives (agent, method, path, routing headers, body SHA-256, text)
and answering `200 {"ok": true}` like a real agent's webhook endpoint."""

from __future__ import annotations

import hashlib
import json
import logging
from typing import Any
from urllib.parse import urlsplit

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from proxy.config.model import Config

log = logging.getLogger("stickyroute.demo")

_LOOPBACK = {"127.0.0.1", "localhost", "::1"}


def _text_of(body: bytes) -> str:
    """A short readable hint of what the update says (for the demo log only).

    Never raises: a body that is not JSON, or nested deeper than the JSON parser allows
    (`RecursionError`), has no hint; the walk is iterative, so any depth the parser accepts is fine.
    """
    try:
        doc = json.loads(body)
    except (ValueError, RecursionError):
        return ""
    found: list[str] = []
    stack: list[Any] = [doc]
    while stack and len(found) < 8:
        node = stack.pop()
        if isinstance(node, dict):
            for key, value in node.items():
                if key in ("text", "caption", "body") and isinstance(value, str):
                    found.append(value)
            stack.extend(reversed([v for k, v in node.items() if isinstance(v, (dict, list))]))
        elif isinstance(node, list):
            stack.extend(reversed(node))
    return " | ".join(found)[:80]


def demo_agent_app(name: str) -> Starlette:
    """An agent webhook stub that logs each request and answers 200 {"ok": true}."""

    async def receive(request: Request) -> JSONResponse:
        body = await request.body()
        log.warning(
            "[demo agent %s] %s %s reason=%s sha256=%s text=%r",
            name, request.method, request.url.path + (f"?{request.url.query}" if request.url.query else ""),
            request.headers.get("x-stickyroute-reason"), hashlib.sha256(body).hexdigest()[:16], _text_of(body),
        )
        return JSONResponse({"ok": True, "agent": name})

    return Starlette(routes=[Route("/{path:path}", receive, methods=["GET", "POST"])])


def demo_servers(config: Config) -> list[uvicorn.Server]:
    """One uvicorn server per agent whose URL is on this machine's loopback."""
    servers = []
    for agent in config.agents.values():
        parts = urlsplit(agent.url)
        if parts.hostname not in _LOOPBACK or parts.port is None:
            continue
        server_config = uvicorn.Config(demo_agent_app(agent.name), host=parts.hostname, port=parts.port,
                                       log_level="warning", access_log=False, lifespan="off")
        servers.append(uvicorn.Server(server_config))
    return servers
