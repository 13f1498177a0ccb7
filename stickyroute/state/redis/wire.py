"""Script calls on one server (or Sentinel's master; not a cluster): redis-py's own connections,
kept checked out of its pool between round trips, the commands packed in C.

    wire = Wire(client)                                   the client's pool makes the connections
    results = await wire.evalsha([(sha, keys, args), ...])   one write, one reply read per call

Why not `client.evalsha` or a redis-py pipeline: redis-py 8 checks a connection out of its pool
and back for every command (an asyncio lock each way, a probe of the socket for unread data,
four observability records, a release event) and wraps it in a retry and a command dispatch:
about 40 Python calls per command, more than the script's own packing and parsing. Here a round
trip is one `send_packed_command` and one `read_response` per call, on a connection popped from
a free list (one per batch in flight: redis-py's connections serve one caller at a time). The
pool still makes the connections (its class, TLS, credentials, database, Sentinel's master),
and closes every one of them, in use or not, on `client.aclose()`.

Errors: a `ResponseError` (NOSCRIPT, a script's error) is that call's result, as in a pipeline
with `raise_on_error=False`; the connection stays clean (every reply is read). A connection
error is retried once on a new connection by the connection's redis-py `Retry` (the client's,
as `execute_command` does); a round trip cut short (the op deadline, a cancellation) leaves the
connection disconnected by redis-py itself, which connects it again on its next use: a
connection is never reused half-read.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import hiredis
from redis.asyncio import Redis
from redis.asyncio.connection import AbstractConnection
from redis.exceptions import ResponseError

__all__ = ["Wire"]

_EVALSHA = b"EVALSHA"


class Wire:
    """Round trips of EVALSHA calls on `client`'s pooled connections (see the module docstring)."""

    def __init__(self, client: Redis) -> None:
        self._pool = client.connection_pool
        self._idle: list[AbstractConnection] = []

    async def evalsha(self, calls: Sequence[tuple[str, Sequence[str], Sequence[Any]]]) -> list[Any]:
        """(sha, keys, args) per call: its reply, or the `ResponseError` it raised; in order.
        Raises redis-py's connection errors (after one retry) and timeouts."""
        if len(calls) == 1:
            sha, keys, args = calls[0]
            packed = hiredis.pack_command((_EVALSHA, sha, len(keys), *keys, *args))
        else:
            packed = b"".join([hiredis.pack_command((_EVALSHA, sha, len(keys), *keys, *args))
                               for sha, keys, args in calls])
        conn = self._idle.pop() if self._idle else await self._pool.get_connection()  # type: ignore[no-untyped-call]
        try:
            return await conn.retry.call_with_retry(
                lambda: _round_trip(conn, packed, len(calls)), lambda error: conn.disconnect(error=error))
        finally:  # disconnected after an error (redis-py did it): it connects again when next used
            self._idle.append(conn)


async def _round_trip(conn: AbstractConnection, packed: bytes, replies: int) -> list[Any]:
    if not conn.is_connected:  # as the pool does: Sentinel's connection asks where the master is now
        await conn.connect()  # type: ignore[no-untyped-call]
    await conn.send_packed_command(packed, check_health=False)
    results: list[Any] = []
    for _ in range(replies):
        try:
            results.append(await conn.read_response())
        except ResponseError as exc:
            results.append(exc)
    return results
