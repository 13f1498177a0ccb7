"""ConversationState contract for operators (issue #11), every backend: routes listed with the
decision log's hashed key, counted per agent, pruned after a reload, limits reconfigured, the
reason that chose the route kept with it; SwitchBudget per sender."""

from __future__ import annotations

import random

import pytest

from stickyroute.core.route import ConversationKey, Route
from stickyroute.state.base import ConversationLimits
from stickyroute.state.budget import SwitchBudget, TokenBucket
from tests.state.backends import CHANNELS, MAX_CONVERSATIONS, T0, TTL_S
from tests.state.routes import RoutesUnderTest

A = ConversationKey("telegram", "111", None, "111")
B = ConversationKey("telegram", "-1001", "7", "222")
C = ConversationKey("telegram", "333", None, "333")
W = ConversationKey("whatsapp", "15550001", None, "15550001")


def route(agent: str, at: float = T0, **kw: object) -> Route:
    return Route(agent, chosen_at=at, last_active=at, **kw)  # type: ignore[arg-type]


async def seed(conversations: RoutesUnderTest) -> None:
    await conversations.put(A, route("coder", T0, reason="classified"), T0)
    await conversations.put(B, route("ops", T0 + 5, explicit=True, reason="explicit"), T0 + 5)
    await conversations.put(C, route("coder", T0 + 9, candidate="ops", counter=1, reason="divergence_pending"), T0 + 9)
    await conversations.put(W, route("coder", T0 + 1), T0 + 1)


async def test_the_reason_that_chose_the_route_is_kept_with_it(conversations: RoutesUnderTest) -> None:
    await conversations.put(A, route("coder", reason="llm_confirmed"), T0)
    lease = await conversations.acquire(A, T0 + 1)
    await conversations.commit(lease, T0 + 1, store=route("ops", T0 + 1, reason="explicit"))
    assert (lease.route, await conversations.get(A, T0 + 2)) == (
        route("coder", reason="llm_confirmed"), route("ops", T0 + 1, reason="explicit"))


async def test_scan_lists_live_routes_most_recent_first_with_the_logged_hash(conversations: RoutesUnderTest) -> None:
    await seed(conversations)
    assert await conversations.scan("telegram", T0 + 10) == [
        (C.hashed(), route("coder", T0 + 9, candidate="ops", counter=1, reason="divergence_pending")),
        (B.hashed(), route("ops", T0 + 5, explicit=True, reason="explicit")),
        (A.hashed(), route("coder", T0, reason="classified")),
    ]


async def test_scan_filters_by_agent_limits_and_skips_expired_routes(conversations: RoutesUnderTest) -> None:
    await seed(conversations)
    coder = await conversations.scan("telegram", T0 + 10, agent="coder")
    first = await conversations.scan("telegram", T0 + 10, limit=1)
    later = await conversations.scan("telegram", T0 + TTL_S + 1)  # A expired, B and C live
    assert ([h for h, _ in coder], [h for h, _ in first], [h for h, _ in later]) == (
        [C.hashed(), A.hashed()], [C.hashed()], [C.hashed(), B.hashed()])
    assert await conversations.scan("whatsapp", T0 + 10, agent="ops") == []


async def test_census_counts_live_routes_per_agent(conversations: RoutesUnderTest) -> None:
    await seed(conversations)
    assert (await conversations.census("telegram", T0 + 10), await conversations.census("whatsapp", T0 + 10),
            await conversations.census("telegram", T0 + TTL_S + 6)) == ({"coder": 2, "ops": 1}, {"coder": 1},
                                                                        {"coder": 1})


async def test_prune_drops_only_routes_to_agents_not_kept(conversations: RoutesUnderTest) -> None:
    await seed(conversations)
    dropped = await conversations.prune("telegram", {"ops", "support"}, T0 + 10)
    assert (dropped, await conversations.get(A, T0 + 10), await conversations.get(B, T0 + 10),
            await conversations.get(W, T0 + 10)) == (
        2, None, route("ops", T0 + 5, explicit=True, reason="explicit"), route("coder", T0 + 1))
    assert await conversations.prune("telegram", {"ops"}, T0 + 10) == 0


async def test_prune_drops_a_route_a_decision_holds_and_that_decision_writes_after(
        conversations: RoutesUnderTest) -> None:
    await seed(conversations)
    lease = await conversations.acquire(A, T0 + 10)  # A's decision runs during the reload
    signal = await conversations.swap("telegram", A.digest(), route("coder", T0, reason="classified"), None, T0 + 10)
    dropped = await conversations.prune("telegram", {"ops"}, T0 + 10)
    during = (await conversations.get(A, T0 + 10), await conversations.get(C, T0 + 10))
    await conversations.commit(lease, T0 + 10, store=route("ops", T0 + 10, reason="keyword"))
    assert (signal, dropped, during, await conversations.get(A, T0 + 11)) == (
        False, 2, (None, None), route("ops", T0 + 10, reason="keyword"))


async def test_a_route_listed_by_the_catalogue_names_its_conversation_by_digest(conversations: RoutesUnderTest
                                                                                 ) -> None:
    await seed(conversations)
    listed = dict(await conversations.routes("telegram", T0 + 10))
    assert listed == {A.digest(): route("coder", T0, reason="classified"),
                      B.digest(): route("ops", T0 + 5, explicit=True, reason="explicit"),
                      C.digest(): route("coder", T0 + 9, candidate="ops", counter=1, reason="divergence_pending")}
    assert [await conversations.read("telegram", d, T0 + 10) for d in (A.digest(), "0" * 32)] == [
        route("coder", T0, reason="classified"), None]
    assert [await conversations.size("telegram", at) for at in (T0 + 10, T0 + TTL_S + 1, T0 + TTL_S + 10)] == [3, 2, 0]


async def test_configure_keeps_routes_and_adds_new_channels(conversations: RoutesUnderTest) -> None:
    await seed(conversations)
    limits = {name: ConversationLimits(2 * TTL_S, MAX_CONVERSATIONS) for name in (*CHANNELS, "slack")}
    conversations.configure(limits, 2)
    new = ConversationKey("slack", "1", None, "1")
    await conversations.put(new, route("coder", T0 + 10), T0 + 10)
    assert (await conversations.get(A, T0 + TTL_S + 1),  # the longer TTL applies to the kept route
            await conversations.get(new, T0 + 11), await conversations.count("telegram", T0 + 11)) == (
        route("coder", T0, reason="classified"), route("coder", T0 + 10), 3)


async def test_one_sender_may_switch_at_the_configured_rate(switches: SwitchBudget) -> None:
    spent = [await switches.take("telegram", "111", 2.0, T0), await switches.take("telegram", "111", 2.0, T0 + 1),
             await switches.take("telegram", "111", 2.0, T0 + 2), await switches.take("telegram", "222", 2.0, T0 + 2),
             await switches.take("whatsapp", "111", 2.0, T0 + 2), await switches.take("telegram", "111", 2.0, T0 + 32)]
    assert spent == [True, True, False, True, True, True]


async def test_a_rate_of_zero_never_allows_a_switch(switches: SwitchBudget) -> None:
    assert [await switches.take("telegram", "111", 0.0, T0 + i * 600) for i in range(3)] == [False, False, False]


@pytest.mark.parametrize("rate", [10.0, 0.5])
async def test_the_switch_budget_decides_like_one_token_bucket(switches: SwitchBudget, rate: float) -> None:
    rng = random.Random(11)
    local = TokenBucket(rate, max(1.0, rate), T0)
    now, answers = T0, []
    for _ in range(150):
        now += rng.choice([0.0, 0.5, 3.0, 7.0, 130.0])
        answers.append((await switches.take("telegram", "111", rate, now), local.take(now)))
    assert [b for b, _ in answers] == [m for _, m in answers] and 0 < sum(b for b, _ in answers) < 150
