"""Routing engine (issue #3 "Semantics"): short messages, acknowledgements, non-text messages, edits, buttons and statuses.

Played through the pure engine with `tests.routing.engine_cases.run`; every row states the exact
(agent, reason) of each decision, the classifier call count and the route left behind.
"""

from __future__ import annotations

import pytest

from stickyroute.config.model import Strategy
from stickyroute.routing.envelope import Envelope
from stickyroute.routing.rules import build_rules
from stickyroute.routing.text import is_acknowledgement, is_short
from tests.routing.engine_cases import ALL_STRATEGIES, AUTO_STRATEGIES, OFF, run, seeded
from tests.scenario import MIN, T0, button, edit, make_config, photo, status

# --- messages: short --------------------------------------------------------------------------


@pytest.mark.parametrize("strategy", AUTO_STRATEGIES)
@pytest.mark.parametrize(
    ("message", "short"),
    [
        pytest.param("a" * 14, True, id="14-chars-short"),
        pytest.param("a" * 15, False, id="15-chars-not-short"),
        pytest.param("  " + "a" * 14 + " \n\t", True, id="14-chars-after-trimming"),
        pytest.param("ab cd ef gh ij", True, id="14-with-inner-spaces"),
        pytest.param("ab cd ef gh ijk", False, id="15-with-inner-spaces"),
        pytest.param("é" * 14, True, id="14-accented-28-bytes-short"),
        pytest.param("é" * 15, False, id="15-accented-not-short"),
        pytest.param("😀" * 14, True, id="14-emoji-56-bytes-short"),
        pytest.param("😀" * 15, False, id="15-emoji-not-short"),
        pytest.param("e\u0301" * 14, True, id="14-decomposed-accents-are-14-characters"),
    ],
)
async def test_short_first_message_goes_to_default_and_caches_nothing(
    strategy: Strategy, message: str, short: bool
) -> None:
    sc, got = await run([message], strategy=strategy, answers="coder")
    if short:
        assert (got, sc.calls, sc.score_calls, sc.state()) == ([("general", "short")], 0, 0, None)
    else:
        assert (got, sc.calls, sc.state()) == ([("coder", "classified")], 1, ("coder", False, None, 0))


@pytest.mark.parametrize(("message", "short"), [("abcd", True), ("abcde", False)])
async def test_short_message_chars_is_configurable(message: str, short: bool) -> None:
    sc, got = await run([message], short_message_chars=5, answers="coder")
    assert got == ([("general", "short")] if short else [("coder", "classified")])


@pytest.mark.parametrize("strategy", AUTO_STRATEGIES)
@pytest.mark.parametrize("message", ["yes do it now", "fix my invoice", "@dana ok?"])
async def test_short_message_reuses_route_refreshes_ttl_never_scores(strategy: Strategy, message: str) -> None:
    sc, got = await run([(5 * MIN, message)], strategy=strategy, seed=seeded("coder", age_s=10 * MIN))
    route = sc.route()
    assert (got, sc.calls, sc.score_calls, sc.state(), route.last_active, route.chosen_at) == (
        [("coder", "short")], 0, 0, ("coder", False, None, 0), T0 + 5 * MIN, T0 - 10 * MIN)


# --- messages: acknowledgements ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("message", "ack"),
    [
        ("thanks!", True), ("OK.", True), ("ok", True), ("👍", True), ("sounds good", True),
        ("Sounds good!!", True), ("Thank You", True), ("got it.", True), ("k", True), ("K?", True),
        ("okay", True), ("thx", True), ("ty", True), ("cool", True), ("Great!", True), ("nice :)", True),
        ("  thanks  ", True), ("ok ...", True),
        ("thanks a lot", False), ("ok ok", False), ("not ok", False), ("okey", False), ("👍👍", False),
        ("!ok", False), ("", False),
    ],
)
def test_is_acknowledgement(message: str, ack: bool) -> None:
    rules = build_rules(make_config(), make_config().channels["telegram"], lists_agents=True)
    assert is_acknowledgement(message, rules.acknowledgements) is ack


@pytest.mark.parametrize(("message", "short"), [("a" * 14, True), ("a" * 15, False), ("", True), (" " * 20, True)])
def test_is_short(message: str, short: bool) -> None:
    assert is_short(message, 15) is short


@pytest.mark.parametrize("strategy", AUTO_STRATEGIES)
@pytest.mark.parametrize("message", ["thanks!", "OK.", "👍", "sounds good"])
async def test_acknowledgement_reuses_route_and_does_not_refresh_ttl(strategy: Strategy, message: str) -> None:
    sc, got = await run([(5 * MIN, message)], strategy=strategy, seed=seeded("coder", age_s=10 * MIN))
    assert (got, sc.calls, sc.score_calls, sc.state(), sc.route().last_active) == (
        [("coder", "ack")], 0, 0, ("coder", False, None, 0), T0 - 10 * MIN)


@pytest.mark.parametrize("strategy", AUTO_STRATEGIES)
async def test_acknowledgement_without_route_goes_to_default_and_caches_nothing(strategy: Strategy) -> None:
    sc, got = await run(["thanks!"], strategy=strategy, answers="coder")
    assert (got, sc.calls, sc.state()) == ([("general", "ack")], 0, None)


@pytest.mark.parametrize(
    ("follow_up", "expected"),
    [
        pytest.param("thanks!", [("coder", "ack"), ("general", "short")], id="ack-lets-route-expire"),
        pytest.param("yes please", [("coder", "short"), ("coder", "short")], id="short-keeps-route-alive"),
    ],
)
async def test_only_non_acknowledgements_keep_a_session_alive(follow_up: str, expected: list) -> None:
    # Route idle 20 min; 5 min later the follow-up; 6 min later (31 min after the last refresh
    # unless the follow-up refreshed it) a short message.
    sc, got = await run([(5 * MIN, follow_up), (6 * MIN, "ok then")], seed=seeded("coder", age_s=20 * MIN))
    assert got == expected


async def test_acknowledgement_list_is_configurable_and_may_hold_long_phrases() -> None:
    sc, got = await run(
        ["Roger that!", "sounds good to me", "thanks"],
        acknowledgements=("roger that", "Sounds good to me"),
        answers="coder",
    )
    assert (got, sc.calls, sc.score_calls) == ([("general", "ack"), ("general", "ack"), ("general", "short")], 0, 0)


# --- messages: non-text, edits, buttons, statuses ---------------------------------------------


NON_TEXT_ITEMS = [
    pytest.param(photo(), id="photo"),
    pytest.param(edit("/agent billing"), id="edit-with-command"),
    pytest.param(edit("@billing refund the invoice payment, I was charged"), id="edit-with-mention-and-keywords"),
    pytest.param(button("refund invoice payment charged"), id="button-with-keyword-data"),
    pytest.param(button("/agent billing"), id="button-with-command-data"),
]


@pytest.mark.parametrize("strategy", ALL_STRATEGIES)
@pytest.mark.parametrize("item", NON_TEXT_ITEMS)
async def test_non_text_edit_button_go_to_cached_route_refresh_ttl_without_scoring(
    strategy: Strategy, item: Envelope
) -> None:
    explicit = strategy is OFF  # under off only an explicit route can exist
    sc, got = await run([(5 * MIN, item)], strategy=strategy, seed=seeded("coder", age_s=10 * MIN, explicit=explicit))
    assert (got, sc.calls, sc.score_calls, sc.state(), sc.route().last_active) == (
        [("coder", "non_text")], 0, 0, ("coder", explicit, None, 0), T0 + 5 * MIN)


@pytest.mark.parametrize("strategy", ALL_STRATEGIES)
@pytest.mark.parametrize("item", NON_TEXT_ITEMS)
async def test_non_text_edit_button_without_route_go_to_default(strategy: Strategy, item: Envelope) -> None:
    sc, got = await run([item], strategy=strategy, answers="billing")
    assert (got, sc.calls, sc.score_calls, sc.state()) == ([("general", "non_text")], 0, 0, None)


@pytest.mark.parametrize("strategy", ALL_STRATEGIES)
async def test_status_goes_to_recipients_route_and_does_not_refresh_ttl(strategy: Strategy) -> None:
    explicit = strategy is OFF
    sc, got = await run(
        [(5 * MIN, status()), status(recipient="222")],
        strategy=strategy, seed=seeded("coder", age_s=10 * MIN, explicit=explicit),
    )
    assert (got, sc.calls, sc.score_calls, sc.route().last_active, sc.state(sender="222")) == (
        [("coder", "status"), ("general", "status")], 0, 0, T0 - 10 * MIN, None)


