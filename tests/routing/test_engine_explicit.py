"""Routing engine (issue #3 "Semantics"): explicit switches under every strategy.

Played through the pure engine with `tests.routing.engine_cases.run`; every row states the exact
(agent, reason) of each decision, the classifier call count and the route left behind.
"""

from __future__ import annotations

import pytest

from stickyroute.config.model import ChannelType, Strategy
from tests.routing.engine_cases import ALL_STRATEGIES, HEUR, OFF, ONLY, TTL, run, seeded
from tests.scenario import MIN, T0, Playbook, make_config

# --- explicit switches under every strategy ---------------------------------------------------


@pytest.mark.parametrize("strategy", ALL_STRATEGIES)
@pytest.mark.parametrize(
    ("message", "target"),
    [
        pytest.param("/agent billing", "billing", id="command"),
        pytest.param("/agent@stickybot accounts", "billing", id="command-to-bot-alias"),
        pytest.param("@billing can you check this?", "billing", id="mention"),
        pytest.param("thanks @support!", "support", id="mention-in-ack"),
        pytest.param("@ops", "ops-agent", id="short-mention-unique-prefix"),
        pytest.param("/agent general", "general", id="the-default-itself"),
    ],
)
async def test_explicit_switch_without_route_then_pinned(strategy: Strategy, message: str, target: str) -> None:
    sc, got = await run([message, (MIN, "please check my python bug again")], strategy=strategy, answers="coder")
    route = sc.route()
    assert (got, sc.calls, sc.state(), route.chosen_at) == (
        [(target, "explicit"), (target, "explicit_pin")], 0, (target, True, None, 0), T0)


@pytest.mark.parametrize("strategy", ALL_STRATEGIES)
async def test_explicit_switch_replaces_route_and_resets_divergence(strategy: Strategy) -> None:
    sc, got = await run(
        [(MIN, "@ops restart it please")], strategy=strategy,
        seed=seeded("coder", age_s=10 * MIN, candidate="billing", counter=1, explicit=strategy is OFF),
    )
    route = sc.route()
    assert (got, sc.calls, sc.state(), route.chosen_at, route.last_active) == (
        [("ops-agent", "explicit")], 0, ("ops-agent", True, None, 0), T0 + MIN, T0 + MIN)


@pytest.mark.parametrize("strategy", ALL_STRATEGIES)
@pytest.mark.parametrize(
    ("message", "reason"),
    [
        pytest.param("/agent translator", "cache", id="command-unknown-name"),
        pytest.param("/agent data", "cache", id="command-ambiguous-prefix"),
        pytest.param("/agent billing @support", "cache", id="command-and-mention-two-agents"),
        pytest.param("@data what do you think?", "explicit_pin", id="mention-ambiguous-prefix"),
        pytest.param("@dana can you check this?", "explicit_pin", id="mention-person"),
        pytest.param("@billing or @support, who?", "explicit_pin", id="two-agents"),
        pytest.param("@billingbot hi there friend", "explicit_pin", id="longer-name"),
        pytest.param("mail ops@billing.example please", "explicit_pin", id="email"),
        pytest.param("/agent@otherbot billing", "explicit_pin", id="command-for-another-bot"),
        pytest.param("@dana ok?", "short", id="short-with-person"),
    ],
)
async def test_unknown_ambiguous_or_several_names_change_nothing(strategy: Strategy, message: str, reason: str) -> None:
    sc, got = await run([(MIN, message)], strategy=strategy, seed=seeded("coder", age_s=5 * MIN, explicit=True))
    assert (got, sc.calls, sc.state(), sc.route().chosen_at) == (
        [("coder", reason)], 0, ("coder", True, None, 0), T0 - 5 * MIN)


@pytest.mark.parametrize("strategy", ALL_STRATEGIES)
async def test_unknown_command_without_route_goes_to_default_and_is_not_classified(strategy: Strategy) -> None:
    sc, got = await run(["/agent translator"], strategy=strategy, answers="coder")
    assert (got, sc.calls, sc.state()) == ([("general", "default")], 0, None)


@pytest.mark.parametrize(
    ("strategy", "follow_up"),
    [
        pytest.param(OFF, ("general", "default"), id="off"),
        pytest.param(ONLY, ("coder", "classified"), id="explicit_only"),
        pytest.param(TTL, ("coder", "classified"), id="sticky_ttl"),
        pytest.param(HEUR, ("coder", "classified"), id="sticky_heuristic"),
    ],
)
async def test_agent_auto_clears_the_explicit_route_and_goes_to_default(
    strategy: Strategy, follow_up: tuple[str, str]
) -> None:
    sc, got = await run(
        [(MIN, "/agent auto"), (MIN, "my python script has a bug")],
        strategy=strategy, seed=seeded("billing", age_s=5 * MIN, explicit=True), answers="coder",
    )
    expected_calls = 0 if strategy is OFF else 1
    expected_state = None if strategy is OFF else ("coder", False, None, 0)
    assert (got, sc.calls, sc.state()) == ([("general", "auto_reset"), follow_up], expected_calls, expected_state)


async def test_agent_auto_without_route_goes_to_default() -> None:
    sc, got = await run(["/agent auto"])
    assert (got, sc.calls, sc.state()) == ([("general", "auto_reset")], 0, None)


@pytest.mark.parametrize("strategy", ALL_STRATEGIES)
@pytest.mark.parametrize("seed", [pytest.param(None, id="no-route"), pytest.param("billing", id="route")])
async def test_agent_alone_on_telegram_is_answered_by_the_proxy(strategy: Strategy, seed: str | None) -> None:
    sc = Playbook(make_config(strategy))
    if seed is not None:
        sc.seed(seed, age_s=5 * MIN, explicit=True)
    decision = await sc.send("/agent")
    current = seed or "general"
    assert (decision.agent, decision.reason, decision.list_agents, sc.calls) == (current, "explicit", True, 0)
    assert sc.state() == (None if seed is None else (seed, True, None, 0))


@pytest.mark.parametrize("strategy", ALL_STRATEGIES)
@pytest.mark.parametrize(
    ("seed", "expected"),
    [pytest.param(None, ("general", "default"), id="no-route"), pytest.param("billing", ("billing", "cache"), id="route")],
)
async def test_agent_alone_on_whatsapp_is_forwarded_to_the_current_agent(
    strategy: Strategy, seed: str | None, expected: tuple[str, str]
) -> None:
    sc = Playbook(make_config(strategy, platform=ChannelType.WHATSAPP, bot_username=None))
    if seed is not None:
        sc.seed(seed, age_s=5 * MIN, explicit=True)
    decision = await sc.send("/agent")
    assert ((decision.agent, decision.reason), decision.list_agents, sc.calls) == (expected, False, 0)


