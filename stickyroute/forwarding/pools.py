"""One bounded connection pool per agent: an aiohttp session and a gate of `max_connections`.

    pools = Pools(upstream, timeout)
    async with pools.slot(agent) as session: ...   # UpstreamPoolExhausted after `wait_s`

The gate (an `asyncio.Semaphore` of the agent's `max_connections`, the same limit as its aiohttp
connector) is what a request waits on when every connection of the agent is busy, so that wait
is told apart from a connect failure: past `connect_timeout_s` it is `UpstreamPoolExhausted`
(503, kind `pool_exhausted`), never "unreachable". One agent's pool never holds another's
requests (issue #10: one hanging agent exhausted a shared pool).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import aiohttp

from stickyroute.config.model import Agent
from stickyroute.errors import UpstreamPoolExhausted

__all__ = ["Pools"]

_NO_AUTO_HEADERS = ("User-Agent", "Accept", "Accept-Encoding", "Content-Type")


class Pools:
    """The agents' pools, made on first use inside the running loop.

    `default_limit` is `upstream.max_connections` (an agent's own `max_connections` wins);
    `wait_s` bounds the wait for a free connection (seconds).
    """

    def __init__(self, default_limit: int, wait_s: float) -> None:
        self.default_limit = default_limit
        self.wait_s = wait_s
        self._sessions: dict[str, aiohttp.ClientSession] = {}
        self._gates: dict[str, asyncio.Semaphore] = {}
        self.limits: dict[str, int] = {}
        """Pool size per agent (those used so far)."""
        self.in_use: dict[str, int] = {}
        """Connection slots held per agent right now."""

    def _make(self, agent: Agent) -> tuple[aiohttp.ClientSession, asyncio.Semaphore]:
        limit = agent.max_connections or self.default_limit
        self.limits[agent.name] = limit
        session = self._sessions[agent.name] = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=limit),
            skip_auto_headers=_NO_AUTO_HEADERS,
            auto_decompress=False,
            cookie_jar=aiohttp.DummyCookieJar(),
            trust_env=False,
        )
        gate = self._gates[agent.name] = asyncio.Semaphore(limit)
        return session, gate

    @contextlib.asynccontextmanager
    async def slot(self, agent: Agent, wait_s: float | None = None) -> AsyncIterator[aiohttp.ClientSession]:
        """Hold one connection slot of `agent`'s pool; UpstreamPoolExhausted after `wait_s`
        (default: the pools' own)."""
        wait_s = self.wait_s if wait_s is None else wait_s
        session = self._sessions.get(agent.name)
        gate = self._gates.get(agent.name)
        if session is None or gate is None:
            session, gate = self._make(agent)
        if gate.locked():
            try:
                async with asyncio.timeout(wait_s):
                    await gate.acquire()
            except TimeoutError:
                raise UpstreamPoolExhausted(
                    f"upstream pool exhausted: {self.limits[agent.name]} connection(s) of {agent.name} "
                    f"busy for {wait_s} s") from None
        else:
            await gate.acquire()
        self.in_use[agent.name] = self.in_use.get(agent.name, 0) + 1
        try:
            yield session
        finally:
            self.in_use[agent.name] -= 1
            gate.release()

    async def aclose(self) -> None:
        """Close every session."""
        sessions, self._sessions, self._gates = list(self._sessions.values()), {}, {}
        for session in sessions:
            await session.close()
