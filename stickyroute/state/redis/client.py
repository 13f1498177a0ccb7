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
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import hiredis
from redis.asyncio import Redis
from redis.asyncio.connection import AbstractConnection, Connection, SSLConnection, UnixDomainSocketConnection
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import (
    ChildDeadlockedError,
    IncorrectPolicyType,
    NoScriptError,
    RedisClusterException,
    RedisError,
)

from stickyroute.state.base import StateUnavailable
from stickyroute.state.lag import loop_deadline
from stickyroute.state.redis.keys import KeyLayout

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


def masked(url: str) -> str:
    """`url` with its password replaced by ***, for logs and messages."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparseable url>"
    if parts.password is None:
        return url
    user = parts.username or ""
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    port = f":{parts.port}" if parts.port else ""
    return urlunsplit(parts._replace(netloc=f"{user}:***@{host}{port}"))


def describe(exc: BaseException, op_timeout_s: float) -> str:
    """The exact error, as logged: redis-py's message, or the deadline that passed."""
    if isinstance(exc, TimeoutError) and not str(exc):
        return f"no answer within op_timeout_ms = {op_timeout_s * 1000:g}"
    return f"{type(exc).__name__}: {exc}"


def translate(exc: BaseException, what: str, op_timeout_s: float) -> StateUnavailable:
    """The StateUnavailable for a foreign error of operation `what` (raise it `from exc`)."""
    return StateUnavailable(f"redis {what}: {describe(exc, op_timeout_s)}")


FOREIGN_ERRORS = (RedisError, RedisClusterException, ChildDeadlockedError, IncorrectPolicyType, OSError,
                  TimeoutError)
"""What a Redis operation may raise besides cancellation (all translated; a test walks
redis.exceptions so a new redis-py error class cannot slip through)."""


class RedisStore:
    """One Redis connection pool, the scripts and the key layout (see the module docstring).

    `client` replaces the client built from `url` (tests). `margin_s` pads Redis's own expiry
    of routes (garbage collection only; the caller's clock decides what is live).
    """

    def __init__(self, url: str, prefix: str = "stickyroute:", op_timeout_s: float = 0.25,
                 client: Redis | None = None) -> None:
        self.url = masked(url)
        self.keys = KeyLayout(prefix)
        self.op_timeout_s = op_timeout_s
        self.margin_ms = 1000
        if client is None:
            client = Redis.from_url(url, retry=Retry(NoBackoff(), 1), socket_connect_timeout=max(op_timeout_s, 1.0),
                                    health_check_interval=0)
            pool = client.connection_pool  # the scheme chose the class (tcp, tls, unix): the same, packed in C
            pool.connection_class = _PACKED.get(pool.connection_class, pool.connection_class)
        self.client = client
        self._sha: dict[str, str] = {}
        self._pending: list[_Queued] = []
        self._batches: set[asyncio.Task[None]] = set()

    def _submit(self, source: str, keys: Sequence[str], args: Sequence[Any]) -> asyncio.Future[Any]:
        """Queue one script call for this loop iteration's batch; its future gets the result."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        if not self._pending:
            loop.call_soon(self._flush)
        self._pending.append((source, keys, args, future))
        return future

    def _flush(self) -> None:
        batch, self._pending = self._pending, []
        task = asyncio.get_running_loop().create_task(self._send(batch))
        self._batches.add(task)
        task.add_done_callback(self._batches.discard)

    async def _send(self, batch: list[_Queued]) -> None:
        """Send one batch: a single EVALSHA, or one pipeline; NOSCRIPT (a restarted Redis) loads
        the scripts and sends again. Errors go to the callers' futures."""
        try:
            async with loop_deadline(self.op_timeout_s):  # one deadline for the batch's callers, in loop free time
                for source in {q[0] for q in batch} - self._sha.keys():
                    self._sha[source] = await self.client.script_load(source)
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
        for (*_, future), result in zip(batch, results, strict=True):
            if future.done():
                continue
            if isinstance(result, Exception):
                future.set_exception(result)
            else:
                future.set_result(result)

    async def _execute(self, batch: list[_Queued]) -> list[Any]:
        if len(batch) == 1:
            source, keys, args, _future = batch[0]
            try:
                return [await self.client.evalsha(self._sha[source], len(keys), *keys, *args)]
            except NoScriptError as exc:
                return [exc]
        pipe = self.client.pipeline(transaction=False)
        for source, keys, args, _future in batch:
            pipe.evalsha(self._sha[source], len(keys), *keys, *args)
        return list(await pipe.execute(raise_on_error=False))

    async def run(self, what: str, source: str, keys: Sequence[str], args: Sequence[Any]) -> Any:
        """One script call: one round trip, shared with the other calls of this loop iteration
        (the batch's deadline is `op_timeout_s` from its start)."""
        try:
            return await self._submit(source, keys, args)
        except FOREIGN_ERRORS as exc:
            raise translate(exc, what, self.op_timeout_s) from exc

    async def run_many(self, what: str, calls: Sequence[Call]) -> list[Any]:
        """Several script calls in one round trip; results in order."""
        futures = [self._submit(*call) for call in calls]
        try:
            return [await future for future in futures]
        except FOREIGN_ERRORS as exc:
            for future in futures:  # the batch failed as a whole: the others hold the same error
                if future.done() and not future.cancelled():
                    future.exception()
            raise translate(exc, what, self.op_timeout_s) from exc

    async def scan_fields(self, what: str, pattern: str, fields: Sequence[str]
                          ) -> AsyncIterator[tuple[bytes | str, list[Any]]]:
        """HMGET `fields` of every key matching `pattern`: (key name, its values) per key, a SCAN
        and a pipeline per `SCAN_BATCH` keys, each bounded by the op timeout."""
        cursor: int = 0
        while True:
            try:
                async with asyncio.timeout(self.op_timeout_s):
                    cursor, names = await self.client.scan(cursor, match=pattern, count=SCAN_BATCH)
                    pipe = self.client.pipeline(transaction=False)
                    for name in names:
                        pipe.hmget(name, list(fields))
                    rows = await pipe.execute() if names else []
            except FOREIGN_ERRORS as exc:
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
                await self.client.ping()
        except FOREIGN_ERRORS as exc:
            raise translate(exc, "ping", limit) from exc

    async def aclose(self) -> None:
        """Close the pool's connections."""
        await self.client.aclose()

