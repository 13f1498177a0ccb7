"""One bounded pool of keep-alive connections per agent (`exchange.Connection`).

    pools = Pools(default_limit, connect_s)
    conn = await pools.acquire(agent, target, wait_s)   # UpstreamPoolExhausted after `wait_s`
    conn.send(...)                                      # the slot comes back when the exchange ends

The gate (an `asyncio.Semaphore` of the agent's `max_connections`) is what a request waits on when
every connection of the agent is busy, so that wait is told apart from a connect failure: past
`connect_timeout_s` it is `UpstreamPoolExhausted` (503, kind `pool_exhausted`), never
"unreachable". One agent's pool never holds another's requests (field report: one hanging agent
exhausted a shared pool). Idle connections are reused last-in first-out; one idle for
`IDLE_KEEP_S` is closed (a timer per pool, armed while any is idle), one the agent closed dropped.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Callable

from stickyroute.config.model import Agent
from stickyroute.errors import UpstreamPoolExhausted
from stickyroute.forwarding.exchange import Connection, translate
from stickyroute.forwarding.target import Target

__all__ = ["IDLE_KEEP_S", "Pools"]

IDLE_KEEP_S = 15.0
"""An idle pooled connection older than this (seconds) is closed instead of reused."""


class _Pool:
    """One agent's connections: `limit` at once (a semaphore), the idle ones kept for reuse."""

    def __init__(self, limit: int, loop: asyncio.AbstractEventLoop) -> None:
        self.limit = limit
        self.loop = loop
        self.gate = asyncio.Semaphore(limit)
        self.idle: list[Connection] = []
        self.open: set[Connection] = set()
        self.closed = False
        self.on_release: Callable[[], None] = lambda: None
        self._sweep: asyncio.TimerHandle | None = None
        """Armed while connections are idle: closes those idle longer than IDLE_KEEP_S."""

    def give_back(self, conn: Connection, reusable: bool) -> None:
        if reusable and not self.closed:
            conn.idle_since = self.loop.time()
            self.idle.append(conn)
            if self._sweep is None:
                self._sweep = self.loop.call_later(IDLE_KEEP_S, self._close_stale)
        self.gate.release()
        self.on_release()

    def _close_stale(self) -> None:
        """Close the connections idle for IDLE_KEEP_S or longer (oldest first in the list); re-arm
        while any stay idle."""
        self._sweep = None
        now = self.loop.time()
        while self.idle and now - self.idle[0].idle_since >= IDLE_KEEP_S:
            self.idle.pop(0).close()
        if self.idle and not self.closed:
            wait = IDLE_KEEP_S - (now - self.idle[0].idle_since)
            self._sweep = self.loop.call_later(wait, self._close_stale)

    def lost(self, conn: Connection) -> None:
        self.open.discard(conn)
        if conn in self.idle:
            self.idle.remove(conn)

    def close(self) -> None:
        self.closed = True
        if self._sweep is not None:
            self._sweep.cancel()
            self._sweep = None
        for conn in list(self.open):
            conn.close()
        self.idle.clear()


class Pools:
    """The agents' pools, made on first use inside the running loop.

    `default_limit` is `upstream.max_connections` (an agent's own `max_connections` wins);
    `connect_s` bounds connecting a socket (seconds); `tls` is the context of https agents.
    """

    def __init__(self, default_limit: int, connect_s: float, tls: ssl.SSLContext | None = None) -> None:
        self.default_limit = default_limit
        self.connect_s = connect_s
        self._tls = tls
        self._pools: dict[str, _Pool] = {}
        self.limits: dict[str, int] = {}
        """Pool size per agent (those used so far)."""
        self.in_use: dict[str, int] = {}
        """Connection slots held per agent right now."""

    def _make(self, agent: Agent) -> _Pool:
        limit = agent.max_connections or self.default_limit
        self.limits[agent.name] = limit
        self.in_use[agent.name] = 0
        pool = self._pools[agent.name] = _Pool(limit, asyncio.get_running_loop())
        name = agent.name

        def released() -> None:
            self.in_use[name] -= 1

        pool.on_release = released
        return pool

    async def acquire(self, agent: Agent, target: Target, wait_s: float) -> Connection:
        """A connection to `target` holding one of `agent`'s slots until its exchange ends.
        Raises UpstreamPoolExhausted after `wait_s` without a free slot, UpstreamConnectError."""
        pool = self._pools.get(agent.name)
        if pool is None:
            pool = self._make(agent)
        gate = pool.gate
        if gate.locked():
            try:
                async with asyncio.timeout(wait_s):
                    await gate.acquire()
            except TimeoutError:
                raise UpstreamPoolExhausted(f"upstream pool exhausted: {pool.limit} connection(s) of "
                                            f"{agent.name} busy for {wait_s} s") from None
        else:
            await gate.acquire()
        self.in_use[agent.name] += 1
        idle = pool.idle
        now = pool.loop.time()
        while idle:
            conn = idle.pop()
            if not conn.closed and now - conn.idle_since < IDLE_KEEP_S and conn.usable():
                return conn
            conn.close()
        try:
            return await self._connect(pool, target)
        except BaseException:
            pool.gate.release()
            self.in_use[agent.name] -= 1
            raise

    async def _connect(self, pool: _Pool, target: Target) -> Connection:
        tls = None
        if target.tls:
            if self._tls is None:
                self._tls = ssl.create_default_context()
            tls = self._tls
        try:
            async with asyncio.timeout(self.connect_s):
                _transport, conn = await pool.loop.create_connection(
                    lambda: Connection(pool), target.host, target.port, ssl=tls,
                    server_hostname=target.host if tls is not None else None)
        except (OSError, TimeoutError) as exc:  # ssl.SSLError is an OSError
            raise translate(exc, connecting=True) from exc
        pool.open.add(conn)
        return conn

    async def aclose(self) -> None:
        """Close every connection of every pool."""
        pools, self._pools = list(self._pools.values()), {}
        for pool in pools:
            pool.close()
