"""The admin API in-process: a Service on a written config (real upstream agents on 127.0.0.1),
its webhook app and its admin app each behind an `httpx.ASGITransport` client.

    async with Operated(tmp_path, ups, backend="redis") as op:
        await op.webhook("/webhooks/telegram", body)         # POST to the public app
        await op.api("GET", "/v1/conversations")             # with the token
        await op.api("GET", "/v1/stats", token=None)         # without

`backend` "redis" uses the test Redis under a private prefix (flushed after); the fixture
`backend` (tests/admin/conftest.py) runs a test on both.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import httpx

from stickyroute.clock import FakeClock
from stickyroute.config.model import Config
from stickyroute.server.demo import DemoAgents
from stickyroute.server.service import Service
from tests.proxy.harness import CLIENT_IP, write_config
from tests.redis_server import flush_prefix, private_prefix, require_redis
from tests.upstreams import RecordingUpstream

TOKEN = "test-admin-token-0123456789"
T0 = 1_700_000_000.0
BACKENDS = ["memory", "redis"]
ROSTER = {"coder": 'keywords = ["python", "refactor", "stack trace"]',
          "billing": 'keywords = ["invoice", "refund"]', "internal": "hidden = true"}
"""Extra TOML per agent: general (the default) has no keywords; internal is hidden."""


def state_table(backend: str, prefix: str | None = None) -> tuple[str, str | None]:
    """The [state] table of `backend` and its key prefix (None for memory; a private one unless
    given)."""
    if backend == "memory":
        return "", None
    prefix = prefix or private_prefix()
    return f'[state]\nbackend = "redis"\nurl = "{require_redis()}"\nkey_prefix = "{prefix}"\nop_timeout_ms = 2000\n', prefix


class Operated:
    """A running service with both apps behind in-process clients (async context manager)."""

    def __init__(self, tmp_path: Path, upstreams: Mapping[str, RecordingUpstream], *, backend: str = "memory",
                 token: str | None = TOKEN, telegram: str = "", whatsapp: str = "", agents: Mapping[str, str] | None = None,
                 default: str = "general", demo: DemoAgents | None = None, prefix: str | None = None,
                 top: str = "") -> None:
        """`prefix`: share this Redis key prefix with another instance (a second replica); the
        caller flushes it. `top`: more top-level TOML tables (e.g. `[hints]`)."""
        agents = ROSTER if agents is None else agents
        state, self.prefix = state_table(backend, prefix)
        self._owns_prefix = prefix is None
        admin = f'[admin]\ntoken = "{token}"\n' if token else ""
        self.config: Config = write_config(tmp_path, upstreams, default=default, telegram=telegram, whatsapp=whatsapp,
                                           agents=agents, top=admin + state + top)
        self.clock = FakeClock(T0)
        self.service = Service(self.config, env={}, clock=self.clock, guard_clock=self.clock, demo=demo)
        self.public: httpx.AsyncClient | None = None
        self.admin: httpx.AsyncClient | None = None

    async def __aenter__(self) -> Operated:
        await self.service.start()
        public = httpx.ASGITransport(app=self.service.public_app(), client=(CLIENT_IP, 40000))
        self.public = httpx.AsyncClient(transport=public, base_url="http://hooks.example.test")
        admin = httpx.ASGITransport(app=self.service.admin_app(), client=("127.0.0.1", 40001))
        self.admin = httpx.AsyncClient(transport=admin, base_url="http://admin.example.test")
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self.public is not None and self.admin is not None
        await self.public.aclose()
        await self.admin.aclose()
        await self.service.aclose()
        if self.prefix is not None and self._owns_prefix:
            await flush_prefix(require_redis(), self.prefix)

    async def webhook(self, path: str, body: bytes, headers: Mapping[str, str] | None = None) -> httpx.Response:
        assert self.public is not None
        return await self.public.post(path, content=body, headers={"content-type": "application/json", **(headers or {})})

    async def api(self, method: str, path: str, *, token: str | None = TOKEN, json: Any = None,
                  content: bytes | None = None) -> httpx.Response:
        assert self.admin is not None
        headers = {"authorization": f"Bearer {token}"} if token is not None else {}
        return await self.admin.request(method, path, headers=headers, json=json, content=content)
