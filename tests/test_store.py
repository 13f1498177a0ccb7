"""RouteStore (issue #3, "Cache"): inactivity TTL on passed time, LRU eviction at
`max_conversations`, delete."""

from __future__ import annotations

from dataclasses import replace

import pytest

from proxy.routing.route import ConversationKey, Route
from proxy.state.route_cache import RouteStore

T0 = 1_700_000_000.0
TTL = 1800.0
A = ConversationKey("telegram", "111", None, "111")
B = ConversationKey("telegram", "222", None, "222")
C = ConversationKey("telegram", "333", None, "333")


def route(agent: str = "coder", at: float = T0) -> Route:
    return Route(agent, chosen_at=at, last_active=at)


def test_missing_key_is_none() -> None:
    assert RouteStore(TTL, 10).get(A, T0) is None


def test_put_then_get_returns_the_route() -> None:
    store = RouteStore(TTL, 10)
    store.put(A, route(), T0)
    assert (store.get(A, T0 + 1), len(store)) == (route(), 1)


@pytest.mark.parametrize(
    ("idle_s", "alive"),
    [
        pytest.param(0.0, True, id="same-instant"),
        pytest.param(TTL - 0.001, True, id="just-before-ttl"),
        pytest.param(TTL, False, id="exactly-ttl-expired"),
        pytest.param(TTL + 3600, False, id="long-after"),
    ],
)
def test_route_lives_until_idle_for_ttl(idle_s: float, alive: bool) -> None:
    store = RouteStore(TTL, 10)
    store.put(A, route(), T0)
    assert (store.get(A, T0 + idle_s) is not None) is alive


def test_ttl_counts_from_last_active_not_from_put_time() -> None:
    store = RouteStore(TTL, 10)
    store.put(A, Route("coder", chosen_at=T0 - 900, last_active=T0 - 900), T0)
    assert (store.get(A, T0 + TTL - 900 - 1) is not None, store.get(A, T0 + TTL - 900)) == (True, None)


def test_writing_a_newer_last_active_extends_the_route() -> None:
    store = RouteStore(TTL, 10)
    store.put(A, route(), T0)
    store.put(A, replace(route(), last_active=T0 + 1000), T0 + 1000)
    assert (store.get(A, T0 + TTL + 999) is not None, store.get(A, T0 + TTL + 1000)) == (True, None)


def test_reading_does_not_extend_the_route() -> None:
    store = RouteStore(TTL, 10)
    store.put(A, route(), T0)
    assert store.get(A, T0 + TTL - 1) is not None
    assert store.get(A, T0 + TTL) is None


def test_writing_an_already_expired_route_drops_the_old_one() -> None:
    store = RouteStore(TTL, 10)
    store.put(A, route(), T0)
    store.put(A, route("billing", at=T0 - TTL), T0)
    assert (store.get(A, T0), len(store)) == (None, 0)


def test_expiry_is_per_key() -> None:
    store = RouteStore(TTL, 10)
    store.put(A, route("coder", T0), T0)
    store.put(B, route("billing", T0 + 600), T0 + 600)
    assert (store.get(A, T0 + TTL), store.get(B, T0 + TTL)) == (None, route("billing", T0 + 600))


def test_least_recently_used_is_evicted_at_max_conversations() -> None:
    store = RouteStore(TTL, 2)
    store.put(A, route("coder"), T0)
    store.put(B, route("billing", T0 + 1), T0 + 1)
    store.put(C, route("support", T0 + 2), T0 + 2)
    assert (store.get(A, T0 + 3), store.get(B, T0 + 3), store.get(C, T0 + 3), len(store)) == (
        None, route("billing", T0 + 1), route("support", T0 + 2), 2)


def test_a_read_makes_a_route_recently_used() -> None:
    store = RouteStore(TTL, 2)
    store.put(A, route("coder"), T0)
    store.put(B, route("billing"), T0 + 1)
    assert store.get(A, T0 + 2) is not None
    store.put(C, route("support"), T0 + 3)
    assert (store.get(A, T0 + 4) is not None, store.get(B, T0 + 4), store.get(C, T0 + 4) is not None) == (
        True, None, True)


def test_expired_routes_are_dropped_before_a_live_one_is_evicted() -> None:
    store = RouteStore(TTL, 2)
    store.put(A, route("coder", T0), T0)
    store.put(B, route("billing", T0 + 1000), T0 + 1000)
    store.put(C, route("support", T0 + TTL), T0 + TTL)
    assert (store.get(B, T0 + TTL), store.get(C, T0 + TTL), len(store)) == (
        route("billing", T0 + 1000), route("support", T0 + TTL), 2)


def test_delete_forgets_the_route() -> None:
    store = RouteStore(TTL, 10)
    store.put(A, route(), T0)
    store.put(B, route("billing"), T0)
    store.delete(A, T0 + 1)
    assert (store.get(A, T0 + 1), store.get(B, T0 + 1), len(store)) == (None, route("billing"), 1)


def test_delete_of_a_missing_key_is_no_error() -> None:
    store = RouteStore(TTL, 10)
    store.delete(A, T0)
    assert len(store) == 0


def test_keys_differ_by_every_part() -> None:
    store = RouteStore(TTL, 10)
    keys = [
        ConversationKey("telegram", "-100", None, "111"),
        ConversationKey("telegram", "-100", None, "222"),
        ConversationKey("telegram", "-200", None, "111"),
        ConversationKey("telegram", "-100", "7", "111"),
        ConversationKey("whatsapp", "-100", None, "111"),
    ]
    for i, k in enumerate(keys):
        store.put(k, route(f"agent{i}"), T0)
    assert [store.get(k, T0).agent for k in keys] == ["agent0", "agent1", "agent2", "agent3", "agent4"]


def test_hashed_key_is_stable_short_and_hides_ids() -> None:
    digest = A.hashed()
    assert (len(digest), digest == ConversationKey("telegram", "111", None, "111").hashed(),
            "111" in digest, digest == B.hashed()) == (12, True, False, False)
