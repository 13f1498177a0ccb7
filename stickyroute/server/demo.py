"""Demo agents for `make run`: one tiny webhook server per loopback agent URL of the config,
logging every request it receives at INFO (agent, method, path, routing reason, body SHA-256,
text) and answering `200 {"ok": true}` like a real agent's webhook endpoint.

A demo agent can be paused (`DemoAgents.pause`, the admin API's `POST /v1/demo/agents/{name}/pause`):
its listener stops, so the proxy cannot connect, answers the platform 502 and the platform
retries (a newcomer can watch it without stopping a process); `resume` serves it again.
"""

from __future__ import annotations

import asyncio
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

from stickyroute.config.model import Config
from stickyroute.server.listener import Listener

__all__ = ["DemoAgents", "demo_agent_app"]

log = logging.getLogger("stickyroute.demo")

_LOOPBACK = {"127.0.0.1", "localhost", "::1"}


class DemoAgents:
    """The demo agents of this process: one listener each, started, paused (stopped: its port
    refuses connections, so the proxy answers 502 and the platform retries) and resumed."""

    def __init__(self) -> None:
        self._configs: dict[str, uvicorn.Config] = {}
        self._servers: dict[str, Listener] = {}
        self._tasks: dict[str, asyncio.Task[None]] = {}

    @classmethod
    def for_config(cls, config: Config) -> DemoAgents:
        """One demo agent per agent whose URL is on this machine's loopback."""
        agents = cls()
        for agent in config.agents.values():
            parts = urlsplit(agent.url)
            if parts.hostname in _LOOPBACK and parts.port is not None:
                agents._configs[agent.name] = uvicorn.Config(
                    demo_agent_app(agent.name), host=parts.hostname, port=parts.port, access_log=False,
                    lifespan="off", log_config=None)
        return agents

    @property
    def names(self) -> list[str]:
        return list(self._configs)

    @property
    def paused(self) -> set[str]:
        return {name for name in self._configs if name not in self._tasks}

    def addresses(self) -> list[str]:
        return [f"{c.host}:{c.port}" for c in self._configs.values()]

    def start(self) -> None:
        """Serve every demo agent that is not running (in the running loop)."""
        for name in self._configs:
            if name not in self._tasks:
                self._serve(name)

    def _serve(self, name: str) -> None:
        server = self._servers[name] = Listener(self._configs[name])
        self._tasks[name] = asyncio.get_running_loop().create_task(server.serve())

    async def pause(self, name: str) -> None:
        """Stop `name`'s listener until resumed. KeyError for a name that is not a demo agent."""
        if name not in self._configs:
            raise KeyError(name)
        task = self._tasks.pop(name, None)
        if task is None:
            return
        self._servers[name].should_exit = True
        await task
        log.warning("[demo agent %s] paused: its port refuses connections (the proxy answers 502, the platform "
                    "retries) until resumed", name)

    async def resume(self, name: str) -> None:
        """Serve `name` again. KeyError for a name that is not a demo agent."""
        if name not in self._configs:
            raise KeyError(name)
        if name not in self._tasks:
            self._serve(name)
            log.warning("[demo agent %s] resumed", name)

    async def stop(self) -> None:
        """Stop every demo agent."""
        for name in list(self._tasks):
            self._servers[name].should_exit = True
        await asyncio.gather(*self._tasks.values(), return_exceptions=True)
        self._tasks.clear()

    def as_list(self) -> list[dict[str, Any]]:
        paused = self.paused
        return [{"name": name, "address": f"{c.host}:{c.port}", "paused": name in paused}
                for name, c in self._configs.items()]


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
    """An agent webhook stub that logs each request (INFO) and answers 200 {"ok": true}."""

    async def receive(request: Request) -> JSONResponse:
        body = await request.body()
        where = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        log.info(
            "[demo agent %s] %s %s reason=%s sha256=%s text=%r",
            name, request.method, where, request.headers.get("x-stickyroute-reason"),
            hashlib.sha256(body).hexdigest()[:16], _text_of(body),
        )
        return JSONResponse({"ok": True, "agent": name})

    return Starlette(routes=[Route("/{path:path}", receive, methods=["GET", "POST"])])
