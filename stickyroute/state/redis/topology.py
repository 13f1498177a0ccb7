"""How one process reaches Redis, per `[state] mode`: one server, a Redis Cluster, or the master
behind Sentinel. Everything that differs between them lives here; `RedisStore` asks.

    client = connect(url, mode, sentinels, master, op_timeout_s)   Redis | RedisCluster (not contacted)
    await evalsha_or_eval(cluster, sha, source, keys, args)        one script call on its slot's node
    await evalsha_on_node(cluster, [(sha, source, keys, args), ...])   the calls of one node, one pipeline
    by_node(cluster, calls, keys_of)                                 a batch split per node (else each alone)
    async for name, row in scan_primaries(cluster, pattern, fields, batch): ...   SCAN per primary
    await ping_any_primary(cluster)                                 up while one primary answers
    await silent_primaries(cluster, timeout_s)                      the primaries that do not answer (check)
    where(url, mode, sentinels, master), masked(url)                what logs name (no password)
    await close(client)                                             every connection, sentinels' too

single    redis-py's `Redis` on `url` (its scheme chooses TCP, TLS or a unix socket).
cluster   redis-py's asyncio `RedisCluster` seeded by `url`: it discovers the other nodes, follows
          MOVED and ASK and, after a failover, refreshes its slot map on the next command. Its
          pipeline refuses `.evalsha`, so each script is one `execute_command("EVALSHA", ...)`
          routed by its keys (every script's keys share one hash tag: one slot). A script the node
          does not know (a promoted replica, a restarted node) runs once as EVAL, which caches it
          there: NOSCRIPT is handled per node, with no SCRIPT LOAD to every primary. The calls
          of one event-loop iteration whose slots one node serves go to it as one pipeline on
          one connection (each with its own result); a redirection (MOVED, ASK, TRYAGAIN) or
          NOSCRIPT sends the calls concerned again alone through the client's own routing, a
          pipeline that could not be sent all of them (a call sent whose answer was lost is not
          sent again: it may have run). redis-py's ClusterPipeline is not used: on a connection error it
          closes the connections to every node, failing the other slots' calls in flight.
sentinel  redis-py's asyncio `Sentinel`: every new connection asks the sentinels where the master
          named `master` is; a connection to a demoted or dead master fails and the next one goes
          to the promoted replica. `url` gives the master's scheme, password and database.

A cluster node that fails degrades only the keys of its slots: their operations raise
`SlotUnavailable` (the backend stays up while one primary answers PING), the others go on.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

from redis.asyncio import Redis, RedisCluster
from redis.asyncio.cluster import PipelineCommand
from redis.asyncio.connection import SSLConnection, parse_url
from redis.asyncio.retry import Retry
from redis.asyncio.sentinel import Sentinel
from redis.backoff import NoBackoff
from redis.exceptions import (
    AskError,
    MovedError,
    NoScriptError,
    TryAgainError,
)

from stickyroute.state.redis.failures import is_redis_failure

T = TypeVar("T")
MODES = ("single", "cluster", "sentinel")
CLUSTER_RETRIES = 3
"""Attempts redis-py's cluster client makes after a connection error, CLUSTERDOWN or an uncovered
slot (refreshing its slot map in between), all within one operation's deadline."""


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


def where(url: str, mode: str = "single", sentinels: Sequence[str] = (), master: str = "") -> str:
    """The Redis of `[state]` as logs and messages name it, without a password: the URL (single),
    "cluster <seed URL>", or "sentinel master 'NAME' via host:port, ..."."""
    if mode == "sentinel":
        return f"sentinel master {master!r} via {', '.join(sentinels)}"
    return f"cluster {masked(url)}" if mode == "cluster" else masked(url)


def script_sha(source: str) -> str:
    """The SHA1 Redis names `source` by (EVALSHA's argument), computed here."""
    return hashlib.sha1(source.encode()).hexdigest()


def address(text: str) -> tuple[str, int]:
    """A sentinel's "host:port" ("[::1]:26379" for IPv6) as (host, port)."""
    parts = urlsplit(f"redis://{text}")
    return parts.hostname or "", parts.port or 26379


def connect(url: str, mode: str = "single", sentinels: Sequence[str] = (), master: str = "",
            op_timeout_s: float = 0.05) -> Redis | RedisCluster:
    """The redis-py client of `mode` (nothing is contacted yet). One retry without back-off covers
    a pooled connection that a restart closed; connecting waits at most max(op timeout, 1 s).
    Single and sentinel: no socket timeout of redis-py's own (its default since 8.0 is 5 s: a
    task per write, a timeout per read); every call is bounded by the caller's op deadline."""
    connect_s = max(op_timeout_s, 1.0)
    if mode == "cluster":
        return RedisCluster.from_url(url, require_full_coverage=False, socket_connect_timeout=connect_s,
                                     retry=Retry(NoBackoff(), CLUSTER_RETRIES), health_check_interval=0)
    if mode == "sentinel":
        options: dict[str, Any] = {k: v for k, v in parse_url(url).items() if k not in ("host", "port")}
        if options.pop("connection_class", None) is SSLConnection:
            options["ssl"] = True
        options.setdefault("socket_timeout", None)
        manager = Sentinel([address(a) for a in sentinels], socket_connect_timeout=connect_s)  # type: ignore[no-untyped-call]
        client: Redis = manager.master_for(master, retry=Retry(NoBackoff(), 1), socket_connect_timeout=connect_s,
                                           health_check_interval=0, **options)
        return client
    return Redis.from_url(url, retry=Retry(NoBackoff(), 1), socket_connect_timeout=connect_s,
                          socket_timeout=None, health_check_interval=0)


async def evalsha_or_eval(cluster: RedisCluster, sha: str, source: str, keys: Sequence[str],
                          args: Sequence[Any]) -> Any:
    """One script call on the node of its keys' slot; NOSCRIPT there: EVAL (caches it there)."""
    try:
        return await cluster.execute_command("EVALSHA", sha, len(keys), *keys, *args)
    except NoScriptError:
        return await cluster.execute_command("EVAL", source, len(keys), *keys, *args)


def by_node(cluster: RedisCluster, calls: Sequence[T], keys_of: Callable[[T], Sequence[str]]) -> list[list[T]]:
    """`calls` grouped by the node that serves their first key's slot, as the client's slot map
    says now; each call alone when the map is being refreshed or a call has no key."""
    if cluster._initialize:
        return [[call] for call in calls]
    groups: dict[str, list[T]] = {}
    alone: list[list[T]] = []
    for call in calls:
        keys = keys_of(call)
        try:
            node = cluster.nodes_manager.get_node_from_slot(cluster.keyslot(keys[0])) if keys else None
        except Exception:  # a slot no node serves yet, a slot map mid-refresh: the client decides
            node = None
        if node is None:
            alone.append([call])
        else:
            groups.setdefault(node.name, []).append(call)
    return [*groups.values(), *alone]


REDIRECTED = (MovedError, AskError, TryAgainError, NoScriptError)


async def evalsha_on_node(cluster: RedisCluster, calls: Sequence[tuple[str, str, Sequence[str], Sequence[Any]]]
                          ) -> list[Any]:
    """Script calls whose slots one node serves, as one pipeline to it: a result (or an error)
    per call, in order. Calls the node redirected (MOVED, ASK, TRYAGAIN) or did not know
    (NOSCRIPT), and all of them when the pipeline could not be sent, run again alone through
    `evalsha_or_eval` (which follows redirections and refreshes the slot map). A call whose
    answer was lost after it was sent is not run again (it may have run): its error is its
    result."""
    commands = [PipelineCommand(i, "EVALSHA", sha, len(keys), *keys, *args)
                for i, (sha, _source, keys, args) in enumerate(calls)]
    try:
        node = cluster.nodes_manager.get_node_from_slot(cluster.keyslot(calls[0][2][0]))
        await node.execute_pipeline(commands)  # answers (and errors) are read per command
    except Exception:  # a slot map changed since the split, a send that failed: again alone, as redis-py retries
        again = list(range(len(calls)))
    else:
        again = [i for i, c in enumerate(commands) if isinstance(c.result, REDIRECTED)]
    retried = await asyncio.gather(*(evalsha_or_eval(cluster, *calls[i]) for i in again), return_exceptions=True)
    results = [c.result for c in commands]
    for i, result in zip(again, retried, strict=True):
        results[i] = result
    return results


async def scan_primaries(cluster: RedisCluster, pattern: str, fields: Sequence[str], batch: int
                         ) -> AsyncIterator[tuple[bytes | str, list[Any]]]:
    """HMGET `fields` of every key matching `pattern` on every primary: SCAN each primary with
    its own cursor, `batch` keys at a time, and read them in one pipeline to that node (an
    error, e.g. MOVED during a resharding, fails the view: it is never partial)."""
    await cluster.initialize()
    for node in cluster.get_primaries():
        cursor: int = 0
        while True:
            reply = await cluster.execute_command("SCAN", cursor, "MATCH", pattern, "COUNT", batch,
                                                  target_nodes=node)
            cursors, names = reply  # redis-py's cluster reply: ({node name: next cursor}, names)
            cursor = int(cursors[node.name] if isinstance(cursors, dict) else cursors)
            rows: list[Any] = []
            if names:
                commands = [PipelineCommand(i, "HMGET", name, *fields) for i, name in enumerate(names)]
                await node.execute_pipeline(commands)
                rows = [c.result for c in commands]
                failed = next((r for r in rows if isinstance(r, Exception)), None)
                if failed is not None:  # a key moved away while scanning: this view is not whole
                    raise failed
            for name, row in zip(names, rows, strict=True):
                yield name, row
            if cursor == 0:
                break


async def close(client: Redis | RedisCluster) -> None:
    """Close `client`'s connections, and on Sentinel the connections to the sentinels too."""
    await client.aclose()
    if isinstance(client, RedisCluster):  # its aclose() does nothing while a failed node flags a slot-map refresh
        await client.nodes_manager.aclose()
        await client.nodes_manager.aclose("startup_nodes")
    manager = getattr(getattr(client, "connection_pool", None), "sentinel_manager", None)
    for sentinel in getattr(manager, "sentinels", ()):
        await sentinel.aclose()


async def scan_bounded(cluster: RedisCluster, pattern: str, fields: Sequence[str], batch: int, timeout_s: float,
                       fail: Callable[[Exception], Exception]) -> AsyncIterator[tuple[bytes | str, list[Any]]]:
    """`scan_primaries`, each step bounded by `timeout_s`; a redis-py error `exc` raises
    `fail(exc)` from it."""
    scan = aiter(scan_primaries(cluster, pattern, fields, batch))
    try:
        while True:
            try:
                async with asyncio.timeout(timeout_s):
                    found = await anext(scan)
            except StopAsyncIteration:
                return
            except Exception as exc:
                if not is_redis_failure(exc):
                    raise
                raise fail(exc) from exc
            yield found
    finally:
        await scan.aclose()  # type: ignore[attr-defined]


async def silent_primaries(cluster: RedisCluster, timeout_s: float) -> list[str]:
    """"primary host:port does not answer (<exact error>)" for each primary that does not answer
    PING within `timeout_s` (the cluster itself unreachable: one line saying so)."""
    try:
        async with asyncio.timeout(timeout_s):
            await cluster.initialize()
    except Exception as exc:
        if not is_redis_failure(exc):
            raise
        return [f"no node answers ({type(exc).__name__}: {exc})"]
    primaries = cluster.get_primaries()

    async def ping(node: Any) -> Any:
        async with asyncio.timeout(timeout_s):
            return await cluster.execute_command("PING", target_nodes=node)

    replies = await asyncio.gather(*(ping(node) for node in primaries), return_exceptions=True)
    return [f"primary {node.name} does not answer ({type(r).__name__}: {r})"
            for node, r in zip(primaries, replies, strict=True) if isinstance(r, BaseException)]


async def ping_any_primary(cluster: RedisCluster) -> None:
    """Return when one primary answers PING; raise the first error when none does."""
    await cluster.initialize()
    replies = await asyncio.gather(*(cluster.execute_command("PING", target_nodes=node)
                                     for node in cluster.get_primaries()), return_exceptions=True)
    errors = [r for r in replies if isinstance(r, BaseException)]
    if errors and len(errors) == len(replies):
        raise errors[0]
