"""`[state] mode = "cluster"` and `"sentinel"`: the Redis backend on a real Redis Cluster (3
primaries + 3 replicas) and on a real Sentinel set-up (1 primary, 1 replica, 1 sentinel), each
started by the test from the `redis-server` binary (tests/redis_server.py) and stopped by PID.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
import redis.exceptions
from redis import Redis
from redis.crc import key_slot

from stickyroute.core.route import ConversationKey, Route
from stickyroute.state.base import ConversationLimits, SlotUnavailable, StateUnavailable
from stickyroute.state.health import BackendHealth
from stickyroute.state.redis import RedisConversationState, RedisStore
from stickyroute.state.redis.client import is_redis_failure
from stickyroute.state.redis.keys import KeyLayout
from tests.redis_server import OwnCluster, OwnSentinel, manual_failover
from tests.state.routes import RoutesUnderTest

T0 = 1_700_000_000.0
N = 120
OP_TIMEOUT_S = 2.0
GUARD_S = 60.0
LIMITS = {"telegram": ConversationLimits(3600.0, 100_000)}


def key(i: int) -> ConversationKey:
    return ConversationKey("telegram", str(-1000 - i), None, str(7000 + i))


def route(i: int) -> Route:
    return Route(f"agent-{i % 5}", T0, T0, reason="keyword")


def slot_of(state: RoutesUnderTest, i: int) -> int:
    return key_slot(KeyLayout("sr-test:").conversation(key(i)).encode())


def owner(primaries: dict[int, list[tuple[int, int]]], slot: int) -> int:
    return next(port for port, ranges in primaries.items() if any(a <= slot <= b for a, b in ranges))


@pytest.fixture
def cluster() -> Iterator[OwnCluster]:
    with OwnCluster() as own:
        yield own


def cluster_state(cluster: OwnCluster) -> RoutesUnderTest:
    store = RedisStore(cluster.url, "sr-test:", OP_TIMEOUT_S, mode="cluster")
    return RoutesUnderTest(RedisConversationState(store, LIMITS))


async def test_a_cluster_holds_routes_on_every_primary_and_the_views_scan_and_prune_them_all(cluster: OwnCluster) -> None:
    state = cluster_state(cluster)
    for i in range(N):
        await state.put(key(i), route(i), T0)
    per_primary = {}
    for port in cluster.primaries():
        with Redis(port=port) as node:
            per_primary[port] = sum(1 for _ in node.scan_iter(match="sr-test:*"))
    census = await state.census("telegram", T0 + 1)
    scanned = await state.scan("telegram", T0 + 1)
    got = [await state.get(key(i), T0 + 1) for i in range(N)]
    pruned = await state.prune("telegram", {"agent-0", "agent-1", "agent-2", "agent-3"}, T0 + 1)
    left = await state.count("telegram", T0 + 1)
    await state.aclose()
    assert (pruned, left) == (N // 5, N - N // 5)
    assert (len(per_primary), sum(per_primary.values()), min(per_primary.values()) > 0) == (3, N, True)
    assert (await_count := sum(census.values()), census) == (N, {f"agent-{a}": N // 5 for a in range(5)})
    assert len(scanned) == N and await_count == N
    assert [r.agent if r else None for r in got] == [route(i).agent for i in range(N)]


async def test_a_killed_primary_fails_only_its_slots_and_its_keys_come_back_after_promotion(
        cluster: OwnCluster) -> None:
    state = cluster_state(cluster)
    for i in range(N):
        await state.put(key(i), route(i), T0)
    primaries = cluster.primaries()
    victim = owner(primaries, slot_of(state, 0))
    lost = {i for i in range(N) if owner(primaries, slot_of(state, i)) == victim}
    health = BackendHealth("redis", state.backend._store.url, state.backend._store.ping)
    cluster.wait_replicated(victim)
    cluster.kill(victim)
    served, failed = {}, set()
    answers = await asyncio.wait_for(asyncio.gather(*(state.get(key(i), T0 + 1) for i in range(N)),
                                                    return_exceptions=True), GUARD_S)  # one batch: a pipeline per node
    for i, answer in enumerate(answers):
        if isinstance(answer, SlotUnavailable):
            failed.add(i)
            health.failed(answer)
        else:
            assert not isinstance(answer, BaseException), answer
            served[i] = answer.agent if answer else None
    await asyncio.sleep(0)  # let the probe ping that a slot's failure starts run
    if health._probe is not None:
        await asyncio.wait_for(health._probe, GUARD_S)
    up_during_outage = health.up
    await asyncio.to_thread(cluster.wait_promoted, victim, primaries[victim])
    after = {}
    for i in range(N):  # the client follows MOVED to the promoted replica (bounded retries while it settles)
        for _ in range(50):
            try:
                found = await state.get(key(i), T0 + 2)
                break
            except SlotUnavailable:
                await asyncio.sleep(0.1)
        after[i] = found.agent if found else None
    await health.aclose()
    await state.aclose()
    # until the replica is promoted (node timeout 1 s + election) the victim's keys fail, only they
    assert (0 < len(lost) < N, bool(failed), failed <= lost, up_during_outage) == (True, True, True, True)
    assert served == {i: route(i).agent for i in range(N) if i not in failed}
    assert after == {i: route(i).agent for i in range(N)}


async def test_moved_after_a_manual_failover_is_followed_without_an_error(cluster: OwnCluster) -> None:
    state = cluster_state(cluster)
    for i in range(N):
        await state.put(key(i), route(i), T0)
    primaries = cluster.primaries()
    old = owner(primaries, slot_of(state, 0))
    new = await asyncio.to_thread(manual_failover, cluster, old)
    moved = [i for i in range(N) if owner(primaries, slot_of(state, i)) == old]
    for i in moved:  # the client still maps these slots to `old`, which now answers MOVED
        await state.put(key(i), Route("after-failover", T0, T0), T0 + 1)
    got = [await state.get(key(i), T0 + 2) for i in range(N)]
    with Redis(port=new) as node:
        on_new = sum(1 for _ in node.scan_iter(match="sr-test:*"))
    await state.aclose()
    assert [r.agent if r else None for r in got] == [
        "after-failover" if i in moved else route(i).agent for i in range(N)]
    assert (len(moved) > 0, on_new) == (True, len(moved))


async def test_a_script_the_node_lost_runs_again_there(cluster: OwnCluster) -> None:
    state = cluster_state(cluster)
    await state.put(key(1), route(1), T0)
    for port in cluster.primaries():
        with Redis(port=port) as node:
            node.script_flush()
    await asyncio.gather(*(state.put(key(i), route(i), T0) for i in range(2, N)))  # pipelines per node
    assert [(await state.get(key(i), T0)) is not None for i in range(1, N)] == [True] * (N - 1)
    await state.aclose()


async def test_a_redis_py_slip_during_a_slot_map_change_is_a_slot_unavailable(cluster: OwnCluster) -> None:
    state = cluster_state(cluster)
    await state.put(key(1), route(1), T0)
    slot = slot_of(state, 1)
    state.backend._store.client.nodes_manager.slots_cache[slot] = [None]  # a node the failover just removed
    with pytest.raises(SlotUnavailable, match="AttributeError") as raised:
        await state.get(key(1), T0)
    assert type(raised.value.__cause__) is AttributeError
    state.backend._store.client.nodes_manager.slots_cache.pop(slot)
    await state.aclose()


def test_only_redis_py_s_own_slips_count_as_redis_failures() -> None:
    try:
        key_slot(None)  # type: ignore[arg-type]
    except AttributeError as exc:
        theirs: BaseException = exc
    try:
        None.find(b"{")  # type: ignore[attr-defined]
    except AttributeError as exc:
        ours: BaseException = exc
    assert (is_redis_failure(theirs), is_redis_failure(ours),
            is_redis_failure(redis.exceptions.ClusterDownError("CLUSTERDOWN")),
            is_redis_failure(redis.exceptions.SlotNotCoveredError("slot")),
            is_redis_failure(ConnectionResetError())) == (True, False, True, True, True)


def test_a_closed_transport_under_a_redis_py_call_is_a_redis_failure_and_ours_is_not() -> None:
    def closed_transport() -> None:
        raise RuntimeError("unable to perform operation on <TCPTransport closed=True>; the handler is closed")

    frame_of_redis_py: dict[str, object] = {"__name__": "redis.asyncio.connection", "write": closed_transport}
    exec("def send():\n    write()\n", frame_of_redis_py)  # a frame whose module is redis-py's, as in a failover
    caught: list[BaseException] = []
    for call in (frame_of_redis_py["send"], closed_transport):
        try:
            call()  # type: ignore[operator]
        except RuntimeError as exc:
            caught.append(exc)
    assert [is_redis_failure(exc) for exc in caught] == [True, False]


async def test_the_cluster_is_up_while_one_primary_answers_and_down_when_none_does(cluster: OwnCluster) -> None:
    store = RedisStore(cluster.url, "sr-test:", OP_TIMEOUT_S, mode="cluster")
    await store.ping()
    ports = list(cluster.primaries())
    for port in ports[:2]:
        cluster.kill(port)
    await store.ping()
    cluster.kill(ports[2])
    with pytest.raises(StateUnavailable, match="redis ping: RedisClusterException: Redis Cluster cannot be connected"):
        await asyncio.wait_for(store.ping(), GUARD_S)
    await store.aclose()


async def test_sentinel_the_store_follows_the_promoted_replica_and_keeps_replicated_routes() -> None:
    with OwnSentinel() as setup:
        store = RedisStore("redis://ignored/0", "sr-test:", OP_TIMEOUT_S, mode="sentinel",
                           sentinels=setup.sentinels, master=setup.master)
        state = RoutesUnderTest(RedisConversationState(store, LIMITS))
        for i in range(N):
            await state.put(key(i), route(i), T0)
        setup.wait_replicated()
        setup.kill_primary()
        await asyncio.to_thread(setup.wait_failover)
        for _ in range(100):  # the first call on a pooled connection to the dead master fails
            try:
                await state.put(key(N), route(N), T0)
                break
            except StateUnavailable:
                await asyncio.sleep(0.1)
        kept = [await state.get(key(i), T0 + 1) for i in range(N + 1)]
        await state.aclose()
    assert store.url == f"sentinel master 'stickyroute-test' via {setup.sentinels[0]}"
    assert [r.agent if r else None for r in kept] == [route(i).agent for i in range(N + 1)]


def _every_redis_py_exception() -> list[type[BaseException]]:
    """Every exception class defined anywhere in redis-py (its cluster and sentinel modules
    imported), and every subclass of RedisError wherever it is defined."""
    import importlib
    import inspect
    import pkgutil
    import sys

    import redis

    for info in pkgutil.walk_packages(redis.__path__, "redis."):
        try:
            importlib.import_module(info.name)
        except ImportError:  # optional extras (e.g. OCSP without cryptography)
            continue
    found: set[type[BaseException]] = set()
    for name, module in list(sys.modules.items()):
        if name == "redis" or name.startswith("redis."):
            found |= {c for _, c in inspect.getmembers(module, inspect.isclass)
                      if issubclass(c, BaseException) and c.__module__.startswith("redis")}
    pending = [redis.exceptions.RedisError]
    while pending:
        cls = pending.pop()
        found.add(cls)
        pending += cls.__subclasses__()
    return sorted(found, key=lambda c: f"{c.__module__}.{c.__qualname__}")


@pytest.mark.parametrize("error", _every_redis_py_exception(), ids=lambda c: f"{c.__module__}.{c.__qualname__}")
def test_every_exception_redis_py_defines_is_translated(error: type[BaseException]) -> None:
    try:
        instance = error("3999 127.0.0.1:7001")  # MovedError and AskError parse "slot host:port"
    except TypeError:
        instance = error.__new__(error)
    assert is_redis_failure(instance)


def test_the_cluster_nodes_pack_commands_in_c_too() -> None:
    kinds = []
    for url in ("redis://127.0.0.1:1/0", "rediss://127.0.0.1:1/0"):
        client = RedisStore(url, "x:", mode="cluster").client
        node = next(iter(client.nodes_manager.startup_nodes.values()))
        kinds.append((node.connection_class.__name__, client.nodes_manager.connection_kwargs["connection_class"].__name__))
    assert kinds == [("_TcpConnection", "_TcpConnection"), ("_TlsConnection", "_TlsConnection")]
