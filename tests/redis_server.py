"""Real Redis for tests: the shared test server, private key prefixes, and a server of our own.

    url = require_redis()                  STICKYROUTE_TEST_REDIS_URL or redis://127.0.0.1:6379/0;
                                           unreachable: a loud skip, or a failure when CI is set
    prefix = private_prefix()              "stickyroute-test:<random>:" (one per test)
    await flush_prefix(url, prefix)        delete only that prefix's keys
    with OwnRedis() as server: ...         redis-server on a free port (outage tests): stop(), start()
    with OwnCluster() as cluster: ...      3 primaries + 3 replicas (free client and bus ports, own temp dir)
    with OwnSentinel() as setup: ...       1 primary, 1 replica, 1 sentinel

Tests never mock Redis: every test here talks to a real server.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from redis import Redis
from redis.asyncio import Redis as AsyncRedis
from redis.exceptions import RedisError

DEFAULT_URL = "redis://127.0.0.1:6379/0"
HANG_GUARD_S = 10.0
_reachable: dict[str, str | None] = {}


def redis_url() -> str:
    return os.environ.get("STICKYROUTE_TEST_REDIS_URL") or DEFAULT_URL


def _problem(url: str) -> str | None:
    if url not in _reachable:
        try:
            with Redis.from_url(url, socket_connect_timeout=1.0, socket_timeout=2.0) as client:
                client.ping()
            _reachable[url] = None
        except (RedisError, OSError) as exc:
            _reachable[url] = f"{type(exc).__name__}: {exc}"
    return _reachable[url]


def require_redis() -> str:
    """The test Redis URL; skip loudly when it does not answer (fail when `CI` is set)."""
    url = redis_url()
    problem = _problem(url)
    if problem is not None:
        message = (f"NO REDIS AT {url} ({problem}): the Redis tests did NOT run. Start redis-server "
                   "(`redis-server --daemonize yes`) or set STICKYROUTE_TEST_REDIS_URL.")
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return url


def private_prefix() -> str:
    """A key prefix no other test uses."""
    return f"stickyroute-test:{uuid.uuid4().hex[:12]}:"


async def flush_prefix(url: str, prefix: str) -> int:
    """Delete every key under `prefix` (and nothing else); returns how many."""
    client = AsyncRedis.from_url(url)
    try:
        names = [name async for name in client.scan_iter(match=prefix + "*", count=1000)]
        if names:
            await client.delete(*names)
        return len(names)
    finally:
        await client.aclose()


_HANDED_OUT: set[int] = set()


def free_port() -> int:
    """A loopback port nobody listens on now and that this test process has not handed out
    before: two calls in a row (a proxy's webhook and admin ports, an agent's) never return the
    same port, although the kernel's port 0 may pick a just-closed probe's port again."""
    while True:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = int(probe.getsockname()[1])
        if port not in _HANDED_OUT:
            _HANDED_OUT.add(port)
            return port


class OwnRedis:
    """A redis-server of the test's own on a free loopback port, no persistence (context manager).

    `stop()` kills it (SIGKILL: like a crash), `start()` starts it again, empty, on the same port.
    Skips (fails under CI) when redis-server is not installed.
    """

    def __init__(self) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            message = "redis-server is not installed: the Redis outage tests did NOT run"
            if os.environ.get("CI"):
                pytest.fail(message)
            pytest.skip(message)
        self.binary = binary
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(
            [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + HANG_GUARD_S
        while time.monotonic() < deadline:
            with contextlib.suppress(RedisError, OSError), Redis(port=self.port, socket_connect_timeout=0.2) as client:
                if client.ping():
                    return
            time.sleep(0.02)
        raise RuntimeError(f"redis-server did not answer on port {self.port}")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(HANG_GUARD_S)
        self.process = None

    def __enter__(self) -> OwnRedis:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()



def _redis_binary(what: str) -> str:
    binary = shutil.which("redis-server")
    if binary is None:
        message = f"redis-server is not installed: the {what} tests did NOT run"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return binary


def _poll(condition: Callable[[], bool], what: str, limit_s: float = HANG_GUARD_S) -> None:
    """Return once `condition()` holds (checked every 50 ms); RuntimeError naming `what` after `limit_s`."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        with contextlib.suppress(RedisError, OSError):
            if condition():
                return
        time.sleep(0.05)
    raise RuntimeError(f"{what}: not within {limit_s:g} s")


class _Servers:
    """redis-server processes of one test in one temp folder, each stopped by its PID."""

    def __init__(self, what: str) -> None:
        self.binary = _redis_binary(what)
        self.folder = Path(tempfile.mkdtemp(prefix="stickyroute-redis-"))
        self.processes: dict[int, subprocess.Popen[bytes]] = {}

    def spawn(self, port: int, *args: str) -> None:
        log = open(self.folder / f"{port}.log", "ab")  # noqa: SIM115 (the server process owns it)
        self.processes[port] = subprocess.Popen([self.binary, *args], stdout=log, stderr=subprocess.STDOUT,
                                                cwd=self.folder)
        log.close()

    def kill(self, port: int) -> None:
        """SIGKILL the server on `port` (a crash) and reap it."""
        process = self.processes.pop(port)
        if process.poll() is None:
            process.kill()
        process.wait(HANG_GUARD_S)

    def close(self) -> None:
        for port in list(self.processes):
            self.kill(port)
        shutil.rmtree(self.folder, ignore_errors=True)


def _info(port: int, section: str) -> dict[str, str]:
    with Redis(port=port, socket_connect_timeout=0.5, socket_timeout=2.0, decode_responses=True) as client:
        return {key: str(value) for key, value in client.info(section).items()}


class OwnCluster:
    """A Redis Cluster of the test's own: `primaries` primaries with one replica each, on free
    loopback ports (client and bus), node timeout 1 s, `cluster-require-full-coverage no` (a
    failed primary stops only its slots). Context manager; `kill(port)` is a crash.

        with OwnCluster() as cluster:
            cluster.url                      a seed node (redis://127.0.0.1:<port>/0)
            cluster.primaries()              {port: [(first slot, last slot), ...]} as the cluster sees it
            cluster.kill(port); cluster.wait_promoted(port)
    """

    def __init__(self, primaries: int = 3, node_timeout_ms: int = 1000) -> None:
        self.servers = _Servers("Redis Cluster")
        self.ports = [free_port() for _ in range(primaries * 2)]
        self.node_timeout_ms = node_timeout_ms
        self.url = f"redis://127.0.0.1:{self.ports[0]}/0"

    def start(self) -> None:
        for port in self.ports:
            self.servers.spawn(port, "--port", str(port), "--bind", "127.0.0.1", "--cluster-enabled", "yes",
                               "--cluster-port", str(free_port()), "--cluster-config-file", f"nodes-{port}.conf",
                               "--cluster-node-timeout", str(self.node_timeout_ms),
                               "--cluster-require-full-coverage", "no", "--repl-diskless-sync-delay", "0", "--save", "",
                               "--appendonly", "no")
        for port in self.ports:
            _poll(lambda port=port: _ping(port), f"cluster node {port} answers")
        subprocess.run(["redis-cli", "--cluster", "create", *(f"127.0.0.1:{p}" for p in self.ports),
                        "--cluster-replicas", "1", "--cluster-yes"], check=True, capture_output=True,
                       timeout=HANG_GUARD_S * 3)
        _poll(self._settled, "the cluster is ok on every node with its replicas linked", HANG_GUARD_S * 3)

    def _settled(self) -> bool:
        alive = list(self.servers.processes)
        if not all(_info(p, "cluster").get("cluster_enabled") == "1" for p in alive):
            return False
        for port in alive:
            with Redis(port=port, socket_connect_timeout=0.5, decode_responses=True) as client:
                state = client.execute_command("CLUSTER INFO")  # parsed by redis-py: a dict
                if state.get("cluster_state") != "ok":
                    return False
        return all(_info(p, "replication").get("master_link_status", "up") == "up" for p in alive)

    def _nodes(self) -> dict[int, dict[str, Any]]:
        """CLUSTER NODES as one live node sees it, by port (parsed by redis-py)."""
        port = next(iter(self.servers.processes))
        with Redis(port=port, socket_connect_timeout=0.5, decode_responses=True) as client:
            nodes = client.execute_command("CLUSTER NODES")
        return {int(address.split("@")[0].rsplit(":", 1)[1]): node for address, node in nodes.items()}

    def primaries(self) -> dict[int, list[tuple[int, int]]]:
        """Every primary that serves slots and is not failed, by port, with its slot ranges."""
        return {port: [(int(first), int(last)) for first, last in node["slots"]]
                for port, node in self._nodes().items()
                if "master" in node["flags"].split(",") and "fail" not in node["flags"].split(",") and node["slots"]}

    def replica_of(self, port: int) -> int:
        """The port of `port`'s replica."""
        nodes = self._nodes()
        return next(p for p, node in nodes.items() if node["master_id"] == nodes[port]["node_id"])

    def wait_replicated(self, port: int) -> None:
        """Return once `port`'s replica has every write `port` accepted (replication offsets equal)."""
        replica = self.replica_of(port)
        _poll(lambda: _info(port, "replication")["master_repl_offset"] ==
              _info(replica, "replication").get("slave_repl_offset"), f"replica {replica} caught up with {port}")

    def kill(self, port: int) -> None:
        self.servers.kill(port)

    def wait_promoted(self, dead: int, slots: list[tuple[int, int]]) -> int:
        """Return the port of the node that serves `slots` after `dead` failed (cluster ok again)."""
        found: list[int] = []

        def promoted() -> bool:
            found[:] = [p for p, r in self.primaries().items() if p != dead and r == slots]
            return bool(found) and self._settled()

        _poll(promoted, f"a replica of {dead} promoted", HANG_GUARD_S * 3)
        return found[0]

    def __enter__(self) -> OwnCluster:
        try:
            self.start()
        except BaseException:
            self.servers.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.servers.close()


class OwnSentinel:
    """One primary, one replica and one sentinel (quorum 1, down after 1 s) of the test's own on
    free loopback ports. Context manager; `kill_primary()` is a crash of the primary.

        with OwnSentinel() as setup:
            setup.sentinels                  ("127.0.0.1:<port>",)
            setup.master                     "stickyroute-test"
            setup.master_port()              where the sentinel says the master is
    """

    master = "stickyroute-test"

    def __init__(self) -> None:
        self.servers = _Servers("Redis Sentinel")
        self.primary, self.replica, self.sentinel = free_port(), free_port(), free_port()
        self.sentinels = (f"127.0.0.1:{self.sentinel}",)

    def start(self) -> None:
        common = ["--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--repl-diskless-sync-delay", "0"]
        self.servers.spawn(self.primary, "--port", str(self.primary), *common)
        self.servers.spawn(self.replica, "--port", str(self.replica), *common, "--replicaof", "127.0.0.1",
                           str(self.primary))
        _poll(lambda: _info(self.replica, "replication").get("master_link_status") == "up", "replica linked")
        config = self.servers.folder / "sentinel.conf"
        config.write_text(f"port {self.sentinel}\nbind 127.0.0.1\ndir {self.servers.folder}\n"
                          f"sentinel monitor {self.master} 127.0.0.1 {self.primary} 1\n"
                          f"sentinel down-after-milliseconds {self.master} 1000\n"
                          f"sentinel failover-timeout {self.master} 10000\n")
        self.servers.spawn(self.sentinel, str(config), "--sentinel")
        _poll(self._sees_replica, "the sentinel knows the replica")

    def _sentinel(self) -> Redis:
        return Redis(port=self.sentinel, socket_connect_timeout=0.5, socket_timeout=2.0, decode_responses=True)

    def _sees_replica(self) -> bool:
        with self._sentinel() as client:
            replicas = client.execute_command("SENTINEL", "REPLICAS", self.master)
        return any(str(self.replica) in str(r) for r in replicas or [])

    def master_port(self) -> int:
        with self._sentinel() as client:
            _host, port = client.execute_command("SENTINEL", "GET-MASTER-ADDR-BY-NAME", self.master)
        return int(port)

    def wait_replicated(self) -> None:
        """Return once the replica has every write the primary accepted."""
        _poll(lambda: _info(self.primary, "replication")["master_repl_offset"] ==
              _info(self.replica, "replication").get("slave_repl_offset"), "replica caught up")

    def kill_primary(self) -> None:
        self.servers.kill(self.primary)

    def wait_failover(self) -> None:
        """Return once the sentinel names the replica as master, it accepts writes, and redis-py's
        discovery (master flag set, neither subjectively nor objectively down) finds it there."""
        from redis.sentinel import Sentinel

        def discovered() -> bool:
            manager = Sentinel([("127.0.0.1", self.sentinel)], socket_connect_timeout=0.5)
            try:
                return manager.discover_master(self.master) == ("127.0.0.1", self.replica)
            finally:
                for client in manager.sentinels:
                    client.close()

        _poll(lambda: self.master_port() == self.replica and _info(self.replica, "replication")["role"] == "master"
              and discovered(), "the sentinel promoted the replica", HANG_GUARD_S * 3)

    def __enter__(self) -> OwnSentinel:
        try:
            self.start()
        except BaseException:
            self.servers.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.servers.close()


def _ping(port: int) -> bool:
    with Redis(port=port, socket_connect_timeout=0.2, socket_timeout=1.0) as client:
        return bool(client.ping())


def manual_failover(cluster: OwnCluster, primary: int) -> int:
    """`CLUSTER FAILOVER` on `primary`'s replica (no data lost: the primary waits for it to catch up,
    then answers MOVED for its slots); returns the new primary's port once the cluster agrees."""
    replica = cluster.replica_of(primary)
    slots = cluster.primaries()[primary]
    with Redis(port=replica, socket_connect_timeout=0.5, socket_timeout=5.0) as client:
        client.execute_command("CLUSTER FAILOVER")
    _poll(lambda: cluster.primaries().get(replica) == slots and primary not in cluster.primaries(),
          f"replica {replica} took over from {primary}", HANG_GUARD_S * 3)
    return replica
