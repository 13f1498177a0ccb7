"""The Redis connection of one process: one pool, the registered scripts, every operation bounded
by `op_timeout_s` of the event loop's free time (`stickyroute.state.lag`: the loop's own lag is
not Redis being slow), every redis-py error translated to `StateUnavailable` (raised from it).

    store = RedisStore(url, prefix="stickyroute:", op_timeout_s=0.25)
    await store.run("acquire", ACQUIRE, [hash, lock], [token, lock_ms])   one EVALSHA, one round trip
    await store.run_many("claim", [(CLAIM, keys, args), ...])            one pipeline, one round trip

redis-py asyncio with hiredis parses replies (bytes, `decode_responses=False`). Script calls are
batched per event-loop iteration: the calls that the concurrent requests of one process make in
the same iteration go out as one redis-py pipeline (one write, one read, one pooled connection),
a single call as a plain EVALSHA. Measured on this machine with 16 concurrent callers: about a
third of the CPU per call of one EVALSHA each (`README`, "Running several replicas"). Each call is
still its own script, atomic on its own keys; the batch adds no atomicity and no ordering between
callers. A connection whose command was cut by a timeout is dropped by redis-py (never reused
half-read). One retry without back-off covers a pooled connection that a Redis restart closed;
the deadline bounds it.

On a Redis Cluster (`mode = "cluster"`, topology.py) a batch is split per node, each part sent
to its node with its own deadline, so a failed node delays and fails only the calls of its
slots (raised as `SlotUnavailable`); the views SCAN every primary. Every error redis-py raises, including the
AttributeError or KeyError its cluster client may raise while its slot map changes under a
failover, is translated (`is_redis_failure`): Redis never causes a 500.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Sequence
from typing import Any

import hiredis
from redis.asyncio import Redis, RedisCluster
from redis.asyncio.connection import AbstractConnection, Connection, SSLConnection, UnixDomainSocketConnection
from redis.exceptions import (
    NoScriptError,
    RedisError,
)

from stickyroute.state.base import SlotUnavailable, StateUnavailable
from stickyroute.state.lag import loop_deadline
from stickyroute.state.redis.failures import FOREIGN_ERRORS, is_redis_failure
from stickyroute.state.redis.keys import KeyLayout
from stickyroute.state.redis.topology import (
    by_node,
    close,
    connect,
    evalsha_on_node,
    evalsha_or_eval,
    masked,
    ping_any_primary,
    scan_bounded,
    script_sha,
    silent_primaries,
    where,
)
from stickyroute.state.redis.wire import Wire

__all__ = ["FOREIGN_ERRORS", "SCAN_BATCH", "Call", "RedisStore", "describe", "is_redis_failure", "masked", "translate",
           "where"]

Call = tuple[str, Sequence[str], Sequence[Any]]
"""(script source, keys, args) of one EVALSHA."""
_Queued = tuple[str, Sequence[str], Sequence[Any], "asyncio.Future[Any]"]

SCAN_BATCH = 1000
"""Keys asked per SCAN call (and read per pipeline) by the O(n) counts."""


class _HiredisPacking(AbstractConnection):
    """redis-py's asyncio connections pack commands in Python (about 28 µs for a commit's 17
    arguments here); hiredis packs the same bytes in C (5 µs), as redis-py's sync client does
    when hiredis is installed. A multi-word command name ("SCRIPT LOAD") is split the same way."""

    def pack_command(self, *args: Any) -> list[bytes]:
        if isinstance(args[0], str):
            args = tuple(args[0].encode().split()) + args[1:]
        elif b" " in args[0]:
            args = tuple(args[0].split()) + args[1:]
        return [hiredis.pack_command(args)]


class _TcpConnection(_HiredisPacking, Connection):
    pass


class _TlsConnection(_HiredisPacking, SSLConnection):
    pass


class _UnixConnection(_HiredisPacking, UnixDomainSocketConnection):
    pass


_PACKED: dict[type[AbstractConnection], type[AbstractConnection]] = {
    Connection: _TcpConnection, SSLConnection: _TlsConnection, UnixDomainSocketConnection: _UnixConnection}


def describe(exc: BaseException, op_timeout_s: float) -> str:
    """The exact error, as logged: redis-py's message, or the deadline that passed."""
    if isinstance(exc, TimeoutError) and not str(exc):
        return f"no answer within op_timeout_ms = {op_timeout_s * 1000:g}"
    return f"{type(exc).__name__}: {exc}"


def translate(exc: BaseException, what: str, op_timeout_s: float, *, slot: bool = False) -> StateUnavailable:
    """The StateUnavailable for a foreign error of operation `what` (raise it `from exc`);
    `slot`: the operation touched one cluster slot (a SlotUnavailable, see topology.py)."""
    kind = SlotUnavailable if slot else StateUnavailable
    return kind(f"redis {what}: {describe(exc, op_timeout_s)}")


class RedisStore:
    """One Redis connection pool, the scripts and the key layout (see the module docstring).

    `client` replaces the client built from `url` (tests). `margin_s` pads Redis's own expiry
    of routes (garbage collection only; the caller's clock decides what is live).
    """

    def __init__(self, url: str, prefix: str = "stickyroute:", op_timeout_s: float = 0.25,
                 client: Redis | RedisCluster | None = None, *, mode: str = "single", sentinels: Sequence[str] = (),
                 master: str = "") -> None:
        self.url = where(url, mode, sentinels, master)
        self.keys = KeyLayout(prefix)
        self.op_timeout_s = op_timeout_s
        self.margin_ms = 1000
        if client is None:
            client = connect(url, mode, sentinels, master, op_timeout_s)
            if isinstance(client, Redis) and mode == "single":
                pool = client.connection_pool  # the scheme chose the class (tcp, tls, unix): the same, packed in C
                pool.connection_class = _PACKED.get(pool.connection_class, pool.connection_class)
            elif isinstance(client, RedisCluster):  # the nodes it discovers are built from these kwargs
                manager = client.nodes_manager
                packed = _PACKED.get(manager.connection_kwargs["connection_class"], Connection)
                manager.connection_kwargs["connection_class"] = packed
                for node in manager.startup_nodes.values():
                    node.connection_class = packed  # type: ignore[assignment]
        self.client: Any = client
        self.cluster = isinstance(client, RedisCluster)
        self._wire = Wire(client) if isinstance(client, Redis) else None
        self._sha: dict[str, str] = {}
        self._pending: list[_Queued] = []
        self._batches: set[asyncio.Task[None]] = set()

    def _submit(self, source: str, keys: Sequence[str], args: Sequence[Any]) -> asyncio.Future[Any]:
        """Queue one script call for this loop iteration's batch; its future gets the result."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        if not self._pending:  # the first call of this iteration: its batch is sent at the next
            if self.cluster:   # (a task's first step runs then, after this iteration's calls)
                loop.call_soon(self._flush)
            else:
                task = loop.create_task(self._send(self._pending))
                self._batches.add(task)
                task.add_done_callback(self._batches.discard)
        self._pending.append((source, keys, args, future))
        return future

    def _flush(self) -> None:
        batch, self._pending = self._pending, []
        loop = asyncio.get_running_loop()
        for part in by_node(self.client, batch, lambda q: q[1]):  # one send per node, each with its own deadline
            self._track(loop.create_task(self._send(part)))

    def _track(self, task: asyncio.Task[None]) -> None:
        self._batches.add(task)
        task.add_done_callback(self._batches.discard)

    async def _send(self, batch: list[_Queued]) -> None:
        """Send one batch: a single EVALSHA, or one pipeline; NOSCRIPT (a restarted Redis) loads
        the scripts and sends again. Errors go to the callers' futures. `batch` may be the list
        still collecting this iteration's calls (`_pending`): it is closed here, at the start."""
        if batch is self._pending:
            self._pending = []
        try:
            with loop_deadline(self.op_timeout_s):  # one deadline for the batch's callers, in loop free time
                for source, *_ in batch:
                    if source not in self._sha:
                        self._sha[source] = (script_sha(source) if self.cluster
                                             else await self.client.script_load(source))
                results = await self._execute(batch)
                if any(isinstance(r, NoScriptError) for r in results):
                    for source in {q[0] for q in batch}:
                        self._sha[source] = await self.client.script_load(source)
                    results = await self._execute(batch)
        except BaseException as exc:
            for *_, future in batch:
                if not future.done():
                    future.set_exception(exc if isinstance(exc, Exception) else RedisError(repr(exc)))
            if not isinstance(exc, Exception):
                raise
            return
        for queued, result in zip(batch, results, strict=True):
            future = queued[3]
            if future.done():
                continue
            if isinstance(result, Exception):
                future.set_exception(result)
            else:
                future.set_result(result)

    def _execute(self, batch: list[_Queued]) -> Awaitable[list[Any]]:
        """The batch's round trip (one coroutine fewer in the way on one server or Sentinel)."""
        if self.cluster:
            return self._execute_on_cluster(batch)
        sha, wire = self._sha, self._wire
        assert wire is not None  # not a cluster: a Redis client
        return wire.evalsha([(sha[source], keys, args) for source, keys, args, _future in batch])

    async def _execute_on_cluster(self, batch: list[_Queued]) -> list[Any]:
        if len(batch) > 1:
            return await evalsha_on_node(self.client, [(self._sha[q[0]], *q[:3]) for q in batch])
        source, keys, args, _future = batch[0]
        return [await evalsha_or_eval(self.client, self._sha[source], source, keys, args)]

    async def run(self, what: str, source: str, keys: Sequence[str], args: Sequence[Any]) -> Any:
        """One script call: one round trip, shared with the other calls of this loop iteration
        (the batch's deadline is `op_timeout_s` from its start)."""
        try:
            return await self._submit(source, keys, args)
        except Exception as exc:
            if not is_redis_failure(exc):
                raise
            raise translate(exc, what, self.op_timeout_s, slot=self.cluster) from exc

    async def run_many(self, what: str, calls: Sequence[Call]) -> list[Any]:
        """Several script calls in one round trip; results in order."""
        futures = [self._submit(*call) for call in calls]
        try:
            return [await future for future in futures]
        except Exception as exc:
            for future in futures:  # the batch failed as a whole (or, on a cluster, a node): retrieve them all
                if future.done() and not future.cancelled():
                    future.exception()
            if not is_redis_failure(exc):
                raise
            raise translate(exc, what, self.op_timeout_s, slot=self.cluster) from exc

    async def scan_fields(self, what: str, pattern: str, fields: Sequence[str]
                          ) -> AsyncIterator[tuple[bytes | str, list[Any]]]:
        """HMGET `fields` of every key matching `pattern`: (key name, its values) per key, a SCAN
        and a pipeline per `SCAN_BATCH` keys, each bounded by the op timeout."""
        if self.cluster:
            def fail(exc: Exception) -> Exception:
                return translate(exc, what, self.op_timeout_s, slot=True)

            async for found in scan_bounded(self.client, pattern, fields, SCAN_BATCH, self.op_timeout_s, fail):
                yield found
            return
        cursor: int = 0
        while True:
            try:
                async with asyncio.timeout(self.op_timeout_s):
                    cursor, names = await self.client.scan(cursor, match=pattern, count=SCAN_BATCH)
                    pipe = self.client.pipeline(transaction=False)
                    for name in names:
                        pipe.hmget(name, list(fields))
                    rows = await pipe.execute() if names else []
            except Exception as exc:
                if not is_redis_failure(exc):
                    raise
                raise translate(exc, what, self.op_timeout_s) from exc
            for name, row in zip(names, rows, strict=True):
                yield name, row
            if cursor == 0:
                return

    async def ping(self, timeout_s: float | None = None) -> None:
        """Raise StateUnavailable unless Redis answers PING within `timeout_s` (default: the op
        timeout)."""
        limit = self.op_timeout_s if timeout_s is None else timeout_s
        try:
            async with loop_deadline(limit):
                if self.cluster:
                    await ping_any_primary(self.client)
                else:
                    await self.client.ping()
        except Exception as exc:
            if not is_redis_failure(exc):
                raise
            raise translate(exc, "ping", limit) from exc

    async def silent_primaries(self) -> list[str]:
        """On a cluster, "primary host:port does not answer (<exact error>)" per primary that does
        not answer PING within the op timeout (empty: all do, or not a cluster). For `check`."""
        return await silent_primaries(self.client, self.op_timeout_s) if self.cluster else []

    async def aclose(self) -> None:
        """Close the pool's connections (and a Sentinel set-up's connections to the sentinels)."""
        await close(self.client)

