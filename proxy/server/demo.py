"""Demo agents for `make run`: one tiny webhook server per loopback agent URL of the config,
logging every request it receives at INFO (agent, method, path, routing reason, body SHA-256,
text) and answering `200 {"ok": true}` like a real agent's webhook endpoint.

A demo agent can be paused (`DemoAgents.pause`, the admin API's `POST /v1/demo/agents/{name}/pause`):
while paused it answers 503, so the proxy answers the platform 502 and the platform retries
(a newcomer can watch it without stopping a process); `resume` brings it back.
"""

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

__all__ = ["DemoAgents", "demo_agent_app", "demo_servers"]

log = logging.getLogger("stickyroute.demo")

_LOOPBACK = {"127.0.0.1", "localhost", "::1"}


class DemoAgents:
    """The demo agents of this process by name, and which are paused."""

    def __init__(self, names: list[str]) -> None:
        self.names = list(names)
        self.paused: set[str] = set()

    def pause(self, name: str) -> None:
        """Answer 503 from `name` until resumed. KeyError for a name that is not a demo agent."""
        self._known(name)
        self.paused.add(name)
        log.warning("[demo agent %s] paused: answering 503 (the proxy answers 502, the platform retries)", name)

    def resume(self, name: str) -> None:
        """Answer normally again. KeyError for a name that is not a demo agent."""
        self._known(name)
        self.paused.discard(name)
        log.warning("[demo agent %s] resumed", name)

    def _known(self, name: str) -> None:
        if name not in self.names:
            raise KeyError(name)

    def as_list(self) -> list[dict[str, Any]]:
        return [{"name": name, "paused": name in self.paused} for name in self.names]


def _text_of(body: bytes) -> str:
    """A short readable hint of what the update says (for the demo log only)."""
    try:
        doc = json.loads(body)
    except ValueError:
        return ""
    found: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key in ("text", "caption", "body") and isinstance(value, str):
                    found.append(value)
                else:
                    walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(doc)
    return " | ".join(found)[:80]


def demo_agent_app(name: str, agents: DemoAgents | None = None) -> Starlette:
    """An agent webhook stub that logs each request and answers 200 {"ok": true} (503 while
    `agents` says it is paused)."""

    async def receive(request: Request) -> JSONResponse:
        body = await request.body()
        where = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        if agents is not None and name in agents.paused:
            log.info("[demo agent %s] paused: 503 to %s %s", name, request.method, where)
            return JSONResponse({"ok": False, "agent": name, "paused": True}, status_code=503)
        log.info(
            "[demo agent %s] %s %s reason=%s sha256=%s text=%r",
            name, request.method, where, request.headers.get("x-stickyroute-reason"),
            hashlib.sha256(body).hexdigest()[:16], _text_of(body),
        )
        return JSONResponse({"ok": True, "agent": name})

    return Starlette(routes=[Route("/{path:path}", receive, methods=["GET", "POST"])])


def demo_servers(config: Config, agents: DemoAgents | None = None) -> list[uvicorn.Server]:
    """One uvicorn server per agent whose URL is on this machine's loopback (their names are
    added to `agents`)."""
    servers = []
    for agent in config.agents.values():
        parts = urlsplit(agent.url)
        if parts.hostname not in _LOOPBACK or parts.port is None:
            continue
        if agents is not None:
            agents.names.append(agent.name)
        server_config = uvicorn.Config(demo_agent_app(agent.name, agents), host=parts.hostname, port=parts.port,
                                       log_level="warning", access_log=False, lifespan="off")
        servers.append(uvicorn.Server(server_config))
    return servers
