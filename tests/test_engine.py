"""Routing engine (issue #3 "Semantics"), played through the pure `decide` / `conclude` on a fake
clock with a scripted classifier (`tests.scenario.Playbook`): messages (short, acknowledgement, non-text, edit, button, status), explicit switches
under every strategy, the four strategies, the sticky_heuristic steps 1-5 with the seed's own
examples, classifier answers, field reports T21, T26, T27, T28 and the opt-in knobs.

Every row states the exact (agent, reason) of each decision, the classifier call count and the
route left in the store as (agent, explicit, candidate, counter) or None.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from proxy.classifier.base import Classification, Outcome
from proxy.config.model import ChannelType, Strategy
from proxy.routing.engine import NeedsClassification, Purpose, busy, decide, is_acknowledgement, is_short
from proxy.routing.envelope import Envelope, MessageKind
from proxy.routing.rules import build_rules
from proxy.state.route import Route
from tests.scenario import (
    AGENTS,
    MIN,
    T0,
    TTL_S,
    Answer,
    Playbook,
    ScriptedClassifier,
    Step,
    agent,
    agents,
    button,
    edit,
    make_config,
    photo,
    status,
)

OFF, ONLY, TTL, HEUR = Strategy.OFF, Strategy.EXPLICIT_ONLY, Strategy.STICKY_TTL, Strategy.STICKY_HEURISTIC
AUTO_STRATEGIES = [pytest.param(s, id=s.value) for s in (ONLY, TTL, HEUR)]
ALL_STRATEGIES = [pytest.param(s, id=s.value) for s in (OFF, ONLY, TTL, HEUR)]
ERROR, BUDGET, OPEN = Outcome.ERROR, Outcome.BUDGET, Outcome.OPEN
INVALID = Classification(outcome=Outcome.AGENT, agent="translator")
"""A classifier claiming an agent that does not exist."""

LONG = "tell me something interesting"
"""A non-short message without any keyword."""


async def run(
    steps: Sequence[Step],
    *,
    strategy: Strategy = HEUR,
    seed: Mapping[str, Any] | None = None,
    answers: Mapping[str, Answer] | Answer = None,
    roster: Mapping[str, Any] = AGENTS,
    **settings: Any,
) -> tuple[Playbook, list[tuple[str, str]]]:
    """Build a scenario, seed a route (`Playbook.seed` kwargs with `agent`), play `steps`."""
    scenario = Playbook(make_config(strategy, roster=roster, **settings), ScriptedClassifier(answers))
    if seed is not None:
        scenario.seed(**seed)
    return scenario, await scenario.play(steps)


def seeded(agent_: str, **kw: Any) -> dict[str, Any]:
    return {"agent_": agent_, **kw}


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


# --- strategy off -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "message",
    ["my python script has a bug", "please refund the invoice", "check the k8s pods", LONG, "thanks!", "yes"],
)
async def test_off_routes_everything_to_default_without_scoring_or_classifier(message: str) -> None:
    sc, got = await run([message, (MIN, message)], strategy=OFF, answers="coder", first_message_margin=0)
    assert (got, sc.calls, sc.score_calls, sc.state()) == ([("general", "default")] * 2, 0, 0, None)


@pytest.mark.parametrize("explicit_pin", [True, False])
async def test_off_explicit_route_lives_for_ttl_of_inactivity(explicit_pin: bool) -> None:
    sc, got = await run(
        [
            "/agent billing",
            (29 * MIN, "please check my python bug again"),
            (29 * MIN, LONG),
            (TTL_S, LONG),
        ],
        strategy=OFF, explicit_pin=explicit_pin,
    )
    assert (got, sc.calls, sc.state()) == (
        [("billing", "explicit"), ("billing", "explicit_pin"), ("billing", "explicit_pin"), ("general", "default")],
        0, None)


# --- first message of a session ---------------------------------------------------------------


@pytest.mark.parametrize("strategy", AUTO_STRATEGIES)
@pytest.mark.parametrize(
    ("answer", "expected", "state"),
    [
        pytest.param("coder", ("coder", "classified"), ("coder", False, None, 0), id="agent-cached"),
        pytest.param("general", ("general", "classified"), ("general", False, None, 0), id="default-agent-named"),
        pytest.param(None, ("general", "classified_default"), ("general", False, None, 0), id="none-cached-as-default"),
        pytest.param("coder.", ("coder", "classified"), ("coder", False, None, 0), id="answer-with-full-stop"),
        pytest.param(" CODER\n", ("coder", "classified"), ("coder", False, None, 0), id="answer-upper-padded"),
        pytest.param("accounts", ("billing", "classified"), ("billing", False, None, 0), id="answer-alias"),
        pytest.param("translator", ("general", "classified_default"), ("general", False, None, 0),
                     id="answer-no-such-agent"),
        pytest.param("I think coder", ("general", "classified_default"), ("general", False, None, 0),
                     id="answer-with-prose"),
        pytest.param(INVALID, ("general", "classified_default"), ("general", False, None, 0),
                     id="invalid-agent-outcome"),
        pytest.param(ERROR, ("general", "classifier_error"), None, id="error-not-cached"),
        pytest.param(BUDGET, ("general", "classifier_budget"), None, id="budget-not-cached"),
        pytest.param(OPEN, ("general", "classifier_open"), None, id="open-breaker-not-cached"),
    ],
)
async def test_first_message_is_classified(
    strategy: Strategy, answer: Answer, expected: tuple[str, str], state: tuple | None
) -> None:
    sc, got = await run(["my python script has a bug"], strategy=strategy, answers=answer)
    request = sc.classifier.calls[0]
    assert (got, sc.calls, sc.state(), request.text, request.current, request.channel) == (
        [expected], 1, state, "my python script has a bug", None, "telegram")
    assert [c.name for c in request.candidates] == list(AGENTS)
    if state is not None:
        assert (sc.route().chosen_at, sc.route().last_active) == (T0, T0)


@pytest.mark.parametrize("strategy", AUTO_STRATEGIES)
async def test_first_message_after_a_classifier_failure_is_classified_again(strategy: Strategy) -> None:
    first, second = "my python script has a bug", "my python script still has a bug"
    sc, got = await run([first, (MIN, second)], strategy=strategy, answers={first: ERROR, second: "coder"})
    assert (got, sc.calls, sc.state()) == (
        [("general", "classifier_error"), ("coder", "classified")], 2, ("coder", False, None, 0))


# --- explicit_only ----------------------------------------------------------------------------


async def test_explicit_only_never_classifies_after_the_first_message() -> None:
    steps = ["my python script has a bug"] + [(10 * MIN, "please refund the invoice payment")] * 12
    sc, got = await run(steps, strategy=ONLY, answers={"my python script has a bug": "coder"})
    assert (got, sc.calls, sc.state()) == (
        [("coder", "classified")] + [("coder", "cache")] * 12, 1, ("coder", False, None, 0))
    assert sc.route().last_active == T0 + 120 * MIN


@pytest.mark.parametrize(
    ("idle_s", "expected", "calls"),
    [
        pytest.param(TTL_S - 1, ("coder", "cache"), 1, id="29m59s-idle-same-session"),
        pytest.param(TTL_S, ("billing", "classified"), 2, id="30m-idle-new-session"),
    ],
)
async def test_explicit_only_session_ends_after_ttl_of_inactivity(idle_s: float, expected: tuple, calls: int) -> None:
    sc, got = await run(
        ["my python script has a bug", (idle_s, "please refund the invoice payment")],
        strategy=ONLY, answers={"my python script has a bug": "coder", "please refund the invoice payment": "billing"},
    )
    assert (got, sc.calls) == ([("coder", "classified"), expected], calls)


async def test_explicit_only_short_messages_keep_the_session_alive() -> None:
    sc, got = await run(
        ["my python script has a bug", (20 * MIN, "yes please"), (20 * MIN, "please refund the invoice")],
        strategy=ONLY, answers="coder",
    )
    assert (got, sc.calls) == ([("coder", "classified"), ("coder", "short"), ("coder", "cache")], 1)


# --- sticky_ttl -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("answer", "last", "state", "chosen_at"),
    [
        pytest.param("billing", ("billing", "reclassified"), ("billing", False, None, 0), T0 + 30 * MIN,
                     id="other-agent"),
        pytest.param("coder", ("coder", "reclassified"), ("coder", False, None, 0), T0 + 30 * MIN, id="same-agent"),
        pytest.param(None, ("general", "classified_default"), ("general", False, None, 0), T0 + 30 * MIN, id="none"),
        pytest.param("translator", ("general", "classified_default"), ("general", False, None, 0), T0 + 30 * MIN,
                     id="no-such-agent"),
        pytest.param(ERROR, ("coder", "classifier_error"), ("coder", False, None, 0), T0, id="error-keeps-route"),
        pytest.param(BUDGET, ("coder", "classifier_budget"), ("coder", False, None, 0), T0, id="budget-keeps-route"),
        pytest.param(OPEN, ("coder", "classifier_open"), ("coder", False, None, 0), T0, id="open-keeps-route"),
    ],
)
async def test_sticky_ttl_reclassifies_ttl_after_classification_in_an_active_conversation(
    answer: Answer, last: tuple, state: tuple, chosen_at: float
) -> None:
    first = "my python script has a bug"
    sc, got = await run(
        [first, (10 * MIN, LONG), (10 * MIN, "please refund the invoice"), (10 * MIN - 1, "yet another long message"),
         (1, "and refund the payment please")],
        strategy=TTL, answers={first: "coder", "and refund the payment please": answer},
    )
    assert (got, sc.calls, sc.state(), sc.route().chosen_at) == (
        [("coder", "classified"), ("coder", "cache"), ("coder", "cache"), ("coder", "cache"), last], 2, state, chosen_at)
    assert sc.classifier.calls[1].current == "coder"


async def test_sticky_ttl_short_messages_keep_the_expired_route_until_idle_for_ttl() -> None:
    first, later = "my python script has a bug", "now a real long question"
    sc, got = await run(
        [first, (20 * MIN, LONG), (11 * MIN, "yes do that"), (MIN, "ok"), (25 * MIN, "sure, go on"),
         (5 * MIN, later), (25 * MIN, "another long message here")],
        strategy=TTL, answers={first: "coder", later: "coder"},
    )
    assert (got, sc.calls, sc.route().chosen_at) == (
        [("coder", "classified"), ("coder", "cache"), ("coder", "short"), ("coder", "ack"), ("coder", "short"),
         ("coder", "reclassified"), ("coder", "cache")], 2, T0 + 62 * MIN)


async def test_sticky_ttl_expired_route_is_gone_after_ttl_of_inactivity() -> None:
    sc, got = await run(["my python script has a bug", (TTL_S, "yes do that")], strategy=TTL, answers="coder")
    assert (got, sc.calls, sc.state()) == ([("coder", "classified"), ("general", "short")], 1, None)


async def test_sticky_ttl_failed_reclassification_is_retried_on_the_next_message() -> None:
    first = "my python script has a bug"
    answers = {first: "coder", "please refund the invoice": ERROR, "please refund the payment": "billing"}
    sc, got = await run(
        [first, (TTL_S - MIN, LONG), (MIN, "please refund the invoice"), (MIN, "please refund the payment")],
        strategy=TTL, answers=answers,
    )
    assert (got, sc.calls) == (
        [("coder", "classified"), ("coder", "cache"), ("coder", "classifier_error"), ("billing", "reclassified")], 3)


@pytest.mark.parametrize(("explicit_pin", "reason"), [(True, "explicit_pin"), (False, "cache")])
async def test_sticky_ttl_explicit_route_lives_for_ttl_of_inactivity_not_since_chosen(
    explicit_pin: bool, reason: str
) -> None:
    sc, got = await run(
        ["/agent billing"] + [(20 * MIN, "my python script has a bug")] * 6 + [(TTL_S, "my python script has a bug")],
        strategy=TTL, explicit_pin=explicit_pin, answers="coder",
    )
    assert (got, sc.calls) == (
        [("billing", "explicit")] + [("billing", reason)] * 6 + [("coder", "classified")], 1)


# --- sticky_heuristic steps 1-4 ---------------------------------------------------------------

BLOG = "write a blog article with a catchy headline about our python refactor"
"""content-writer 18 (blog, article, headline), coder 12 (python, refactor)."""


@pytest.mark.parametrize(
    ("seed", "message", "settings", "expected", "state", "scores"),
    [
        pytest.param(seeded("coder"), "the deploy ended in a segfault", {}, ("coder", "neutral"),
                     ("coder", False, None, 0), {"ops-agent": 6, "debugger": 6}, id="seed-tie-ops-debugger-no-switch"),
        pytest.param(seeded("coder", candidate="billing", counter=1), "the deploy ended in a segfault", {},
                     ("coder", "neutral"), ("coder", False, "billing", 1), {"ops-agent": 6, "debugger": 6},
                     id="tie-keeps-pending-counter"),
        pytest.param(seeded("ops-agent", candidate="coder", counter=1), "check the k8s pods", {},
                     ("ops-agent", "agreement"), ("ops-agent", False, None, 0), {"ops-agent": 12},
                     id="seed-k8s-pods-resets-counter"),
        pytest.param(seeded("coder"), BLOG, {}, ("coder", "divergence_pending"), ("coder", False, "content-writer", 1),
                     {"content-writer": 18, "coder": 12}, id="seed-content-writer-18-vs-coder-12+4-diverges"),
        pytest.param(seeded("ops-agent"), "there is a bug somewhere here", {}, ("ops-agent", "divergence_pending"),
                     ("ops-agent", False, "coder", 1), {"coder": 6}, id="seed-coder-6-vs-ops-0+4-counts-once"),
        pytest.param(seeded("coder"), "write a blog article with a headline about python refactor code function", {},
                     ("coder", "agreement"), ("coder", False, None, 0), {"content-writer": 18, "coder": 14},
                     id="tie-with-current-effective-is-agreement"),
        pytest.param(seeded("coder"), "refund the invoice payment for my python work", {},
                     ("coder", "divergence_pending"), ("coder", False, "billing", 1), {"billing": 18, "coder": 6},
                     id="divergence-beats-own-keywords"),
        pytest.param(seeded("ops-agent"), "some code in a function", {}, ("ops-agent", "neutral"),
                     ("ops-agent", False, None, 0), {"coder": 2}, id="weak-only-neutral"),
        pytest.param(seeded("ops-agent"), "some code in a function", {"sticky_bonus": 0}, ("ops-agent", "neutral"),
                     ("ops-agent", False, None, 0), {"coder": 2}, id="unique-max-below-threshold-neutral"),
        pytest.param(seeded("ops-agent"), "there is a bug somewhere here", {"confidence_threshold": 7},
                     ("ops-agent", "neutral"), ("ops-agent", False, None, 0), {"coder": 6},
                     id="threshold-is-configurable"),
        pytest.param(seeded("ops-agent"), "there is a bug somewhere here", {"sticky_bonus": 6},
                     ("ops-agent", "neutral"), ("ops-agent", False, None, 0), {"coder": 6},
                     id="bonus-6-tie-with-6-not-divergent"),
        pytest.param(seeded("coder", candidate="billing", counter=1), LONG, {}, ("coder", "neutral"),
                     ("coder", False, "billing", 1), {}, id="no-keywords-neutral-keeps-counter"),
        pytest.param(seeded("coder", candidate="billing", counter=1), "please check my python bug again", {},
                     ("coder", "agreement"), ("coder", False, None, 0), {"coder": 12}, id="agreement-resets-counter"),
        pytest.param(seeded("general"), "please refund the invoice", {}, ("general", "divergence_pending"),
                     ("general", False, "billing", 1), {"billing": 12}, id="from-cached-default"),
    ],
)
async def test_sticky_heuristic_single_message(
    seed: dict, message: str, settings: dict, expected: tuple, state: tuple, scores: dict
) -> None:
    sc = Playbook(make_config(HEUR, **settings), ScriptedClassifier("billing"))
    sc.seed(**{**seed, "age_s": 5 * MIN})
    decision = await sc.send(message, MIN)
    assert ((decision.agent, decision.reason), sc.calls, sc.state(), dict(decision.scores or {})) == (
        expected, 0, state, scores)
    assert sc.route().last_active == T0 + MIN


@pytest.mark.parametrize(
    ("steps", "expected", "state"),
    [
        pytest.param(
            ["please refund the invoice", "the k8s pods are down"],
            [("coder", "divergence_pending"), ("coder", "divergence_pending")], ("coder", False, "ops-agent", 1),
            id="two-divergences-different-agents-do-not-add-up"),
        pytest.param(
            ["please refund the invoice", "the k8s pods are down", "my payment was charged twice"],
            [("coder", "divergence_pending")] * 3, ("coder", False, "billing", 1),
            id="switching-candidate-restarts-count"),
        pytest.param(
            ["please refund the invoice", "please check my python bug again", "my payment was charged twice"],
            [("coder", "divergence_pending"), ("coder", "agreement"), ("coder", "divergence_pending")],
            ("coder", False, "billing", 1), id="agreement-in-between-resets"),
        pytest.param(
            ["please refund the invoice", "the deploy ended in a segfault", "yes", "thanks!", photo(), status(),
             edit("my python bug"), LONG],
            [("coder", "divergence_pending"), ("coder", "neutral"), ("coder", "short"), ("coder", "ack"),
             ("coder", "non_text"), ("coder", "status"), ("coder", "non_text"), ("coder", "neutral")],
            ("coder", False, "billing", 1), id="neutral-short-ack-non-text-do-not-reset"),
    ],
)
async def test_sticky_heuristic_divergence_counter(steps: list, expected: list, state: tuple) -> None:
    sc, got = await run([(MIN, s) for s in steps], seed=seeded("coder"), answers="billing")
    assert (got, sc.calls, sc.state()) == (expected, 0, state)


CONFIRM_STEPS = ["please refund the invoice", LONG, "my payment was charged twice"]


@pytest.mark.parametrize(
    ("answer", "last", "state"),
    [
        pytest.param("billing", ("billing", "llm_confirmed"), ("billing", False, None, 0), id="candidate-confirmed"),
        pytest.param("BILLING\n", ("billing", "llm_confirmed"), ("billing", False, None, 0), id="candidate-padded"),
        pytest.param("support", ("support", "llm_confirmed"), ("support", False, None, 0), id="another-valid-agent"),
        pytest.param("coder", ("coder", "llm_rejected"), ("coder", False, None, 0), id="current-agent"),
        pytest.param("coder.", ("coder", "llm_rejected"), ("coder", False, None, 0), id="current-with-full-stop"),
        pytest.param(None, ("coder", "llm_rejected"), ("coder", False, None, 0), id="none"),
        pytest.param("translator", ("coder", "llm_rejected"), ("coder", False, None, 0), id="no-such-agent"),
        pytest.param(INVALID, ("coder", "llm_rejected"), ("coder", False, None, 0), id="invalid-agent-outcome"),
        pytest.param(ERROR, ("coder", "classifier_error"), ("coder", False, None, 0), id="error"),
        pytest.param(BUDGET, ("coder", "classifier_budget"), ("coder", False, None, 0), id="budget"),
        pytest.param(OPEN, ("coder", "classifier_open"), ("coder", False, None, 0), id="open"),
    ],
)
async def test_sticky_heuristic_counter_reaching_divergence_count_asks_the_classifier_once(
    answer: Answer, last: tuple, state: tuple
) -> None:
    sc, got = await run([(MIN, s) for s in CONFIRM_STEPS], seed=seeded("coder", age_s=10 * MIN), answers=answer)
    request = sc.classifier.calls[0]
    assert (got, sc.calls, sc.state(), request.text, request.current) == (
        [("coder", "divergence_pending"), ("coder", "neutral"), last], 1, state, "my payment was charged twice", "coder")
    expected_chosen = T0 + 3 * MIN if last[1] == "llm_confirmed" else T0 - 10 * MIN
    assert (sc.route().chosen_at, sc.route().last_active) == (expected_chosen, T0 + 3 * MIN)


async def test_sticky_heuristic_after_a_rejection_the_count_starts_again() -> None:
    steps = ["please refund the invoice", "my payment was charged twice", "please refund the payment",
             "I was charged for the refund"]
    sc, got = await run([(MIN, s) for s in steps], seed=seeded("coder"), answers={
        "my payment was charged twice": None, "I was charged for the refund": "billing"})
    assert (got, sc.calls, sc.classifier.texts) == (
        [("coder", "divergence_pending"), ("coder", "llm_rejected"), ("coder", "divergence_pending"),
         ("billing", "llm_confirmed")], 2, ["my payment was charged twice", "I was charged for the refund"])


@pytest.mark.parametrize(
    ("count", "expected", "calls"),
    [
        pytest.param(1, [("billing", "llm_confirmed")], 1, id="count-1-first-divergence-confirms"),
        pytest.param(3, [("coder", "divergence_pending")] * 2 + [("billing", "llm_confirmed")], 1, id="count-3"),
    ],
)
async def test_sticky_heuristic_divergence_count_is_configurable(count: int, expected: list, calls: int) -> None:
    steps = ["please refund the invoice", "my payment was charged twice", "please refund the payment"][:count]
    sc, got = await run([(MIN, s) for s in steps], seed=seeded("coder"), answers="billing", divergence_count=count)
    assert (got, sc.calls) == (expected, calls)


@pytest.mark.parametrize(
    ("idle_s", "expected", "current"),
    [
        pytest.param(TTL_S - 1, ("billing", "llm_confirmed"), "coder", id="29m59s-counter-2-confirms"),
        pytest.param(TTL_S, ("billing", "classified"), None, id="30m-route-and-counter-dropped"),
    ],
)
async def test_sticky_heuristic_ttl_expiry_drops_route_and_counter(idle_s: float, expected: tuple, current) -> None:
    sc, got = await run([(idle_s, "my payment was charged twice")],
                        seed=seeded("coder", candidate="billing", counter=1), answers="billing")
    assert (got, sc.calls, sc.classifier.calls[0].current, sc.state()) == (
        [expected], 1, current, ("billing", False, None, 0))


async def test_sticky_heuristic_first_message_then_heuristics() -> None:
    sc, got = await run(
        ["my python script has a bug", (MIN, "please refund the invoice"), (MIN, "please check my python bug again")],
        answers={"my python script has a bug": "coder"},
    )
    assert (got, sc.calls, sc.state()) == (
        [("coder", "classified"), ("coder", "divergence_pending"), ("coder", "agreement")], 1, ("coder", False, None, 0))


# --- sticky_heuristic step 5: explicit pin ----------------------------------------------------


async def test_sticky_heuristic_explicit_pin_never_scores_nor_classifies() -> None:
    steps = ["/agent billing"] + [(MIN, "my python script has a bug")] * 4
    sc, got = await run(steps, answers="coder")
    assert (got, sc.calls, sc.score_calls, sc.state()) == (
        [("billing", "explicit")] + [("billing", "explicit_pin")] * 4, 0, 0, ("billing", True, None, 0))


async def test_sticky_heuristic_explicit_pin_ends_with_the_ttl() -> None:
    sc, got = await run(["/agent billing", (TTL_S, "my python script has a bug")], answers="coder")
    assert (got, sc.calls, sc.state()) == ([("billing", "explicit"), ("coder", "classified")], 1, ("coder", False, None, 0))


async def test_sticky_heuristic_explicit_pin_ends_with_another_explicit_switch() -> None:
    sc, got = await run(["/agent billing", (MIN, "@coder please"), (MIN, "/agent auto")])
    assert (got, sc.state()) == ([("billing", "explicit"), ("coder", "explicit"), ("general", "auto_reset")], None)


async def test_sticky_heuristic_without_explicit_pin_heuristics_apply_to_explicit_routes() -> None:
    sc, got = await run(
        ["/agent billing", (MIN, "my python script has a bug"), (MIN, "please check my python bug again")],
        explicit_pin=False, answers="coder",
    )
    assert (got, sc.calls, sc.state()) == (
        [("billing", "explicit"), ("billing", "divergence_pending"), ("coder", "llm_confirmed")], 1,
        ("coder", False, None, 0))


async def test_sticky_heuristic_without_explicit_pin_a_rejection_keeps_the_explicit_route() -> None:
    sc, got = await run(
        ["/agent billing", (MIN, "my python script has a bug"), (MIN, "please check my python bug again")],
        explicit_pin=False, answers="billing",
    )
    assert (got, sc.state()) == (
        [("billing", "explicit"), ("billing", "divergence_pending"), ("billing", "llm_rejected")],
        ("billing", True, None, 0))


# --- field reports ----------------------------------------------------------------------------

QA_ROSTER = agents(agent("general"), agent("qa", keywords=("test",)), agent("billing", keywords=("invoice",)))


async def test_T21_auto_route_off_pinned_default_wins() -> None:
    sc, got = await run(["test this please"], strategy=OFF, roster=QA_ROSTER, answers="qa")
    assert (got, sc.calls, sc.score_calls, sc.state()) == ([("general", "default")], 0, 0, None)


async def test_T21_sticky_heuristic_first_message_needs_the_classifier() -> None:
    sc, got = await run(["test this please"], roster=QA_ROSTER, answers=None)
    assert (got, sc.calls, sc.state()) == ([("general", "classified_default")], 1, ("general", False, None, 0))


async def test_T21_sticky_heuristic_one_keyword_hit_alone_never_switches() -> None:
    sc, got = await run(["test this please"], roster=QA_ROSTER, seed=seeded("general", age_s=MIN), answers="qa")
    assert (got, sc.calls, sc.state()) == ([("general", "divergence_pending")], 0, ("general", False, "qa", 1))


T26_ROSTER = agents(agent("general"), agent("billing"), agent("support"))


@pytest.mark.parametrize("strategy", ALL_STRATEGIES)
@pytest.mark.parametrize(
    ("message", "switch"),
    [
        ("@dana can you check this?", None),
        ("@billing can you check this?", "billing"),
        ("@billingbot hi", None),
        ("mail ops@billing.example please", None),
        ("thanks @support!", "support"),
    ],
)
async def test_T26_mentions(strategy: Strategy, message: str, switch: str | None) -> None:
    sc, got = await run([message], strategy=strategy, roster=T26_ROSTER, answers=None)
    if switch is not None:
        assert (got, sc.calls, sc.state()) == ([(switch, "explicit")], 0, (switch, True, None, 0))
    elif strategy is OFF or len(message) < 15:
        assert (got, sc.calls, sc.state()) == ([("general", "default" if strategy is OFF else "short")], 0, None)
    else:  # not a switch: an ordinary first message, classified (answer none)
        assert (got, sc.calls, sc.state()) == ([("general", "classified_default")], 1, ("general", False, None, 0))


@pytest.mark.parametrize("message", ["@dana can you check this?", "@billingbot hi", "mail ops@billing.example please"])
async def test_T26_unknown_names_never_create_routes(message: str) -> None:
    sc, got = await run([message], strategy=OFF, roster=T26_ROSTER)
    assert (got, sc.live_routes()) == ([("general", "default")], 0)


@pytest.mark.parametrize("strategy", AUTO_STRATEGIES)
async def test_T27_short_follow_ups_stay_put(strategy: Strategy) -> None:
    sc, got = await run(
        ["okay", "yes do it"], strategy=strategy,
        seed=seeded("billing", age_s=2 * MIN, candidate="support", counter=1), answers="support",
    )
    assert (got, sc.calls, sc.score_calls, sc.state()) == (
        [("billing", "ack"), ("billing", "short")], 0, 0, ("billing", False, "support", 1))


T28_ROSTER = agents(agent("general"), agent("billing", keywords=("invoice", "refund")),
                    agent("fishing-trips", keywords=("fish", "fishing")))
T28 = "can you fish out the root cause of the invoice bug?"


async def test_T28_idiom_with_own_keyword_stays_billing_without_classifier() -> None:
    sc = Playbook(make_config(HEUR, roster=T28_ROSTER), ScriptedClassifier("fishing-trips"))
    sc.seed("billing", age_s=MIN)
    decision = await sc.send(T28)
    assert ((decision.agent, decision.reason), dict(decision.scores), sc.calls, sc.state()) == (
        ("billing", "agreement"), {"fishing-trips": 6, "billing": 6}, 0, ("billing", False, None, 0))


T28_NO_OWN = "can you fish out the root cause of the bug?"


@pytest.mark.parametrize(
    ("answer", "last"),
    [
        pytest.param("billing", ("billing", "llm_rejected"), id="classifier-says-billing"),
        pytest.param(None, ("billing", "llm_rejected"), id="classifier-says-none"),
        pytest.param(ERROR, ("billing", "classifier_error"), id="classifier-error"),
        pytest.param(Classification(outcome=Outcome.ERROR, error_kind="timeout"), ("billing", "classifier_error"),
                     id="classifier-timeout"),
    ],
)
async def test_T28_single_token_hit_never_switches_without_confirmation(answer: Answer, last: tuple) -> None:
    sc, got = await run([T28_NO_OWN, (MIN, T28_NO_OWN)], roster=T28_ROSTER, seed=seeded("billing", age_s=MIN),
                        answers=answer)
    assert (got, sc.calls, sc.state()) == (
        [("billing", "divergence_pending"), last], 1, ("billing", False, None, 0))


# --- opt-in knobs -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("margin", "message", "expected", "calls"),
    [
        pytest.param(None, "please refund the invoice", ("support", "classified"), 1, id="off-by-default-classifies"),
        pytest.param(6, "please refund the invoice", ("billing", "keywords"), 0, id="clear-winner-by-keywords"),
        pytest.param(6, "refund the invoice for the login", ("billing", "keywords"), 0, id="margin-exactly-6"),
        pytest.param(7, "refund the invoice for the login", ("support", "classified"), 1, id="margin-5-below-7"),
        pytest.param(0, "the deploy ended in a segfault", ("support", "classified"), 1, id="tie-classifies"),
        pytest.param(0, "the price of the account", ("support", "classified"), 1, id="below-threshold-classifies"),
        pytest.param(0, LONG, ("support", "classified"), 1, id="no-keywords-classifies"),
        pytest.param(0, "fix my invoice", ("general", "short"), 0, id="short-still-default"),
    ],
)
async def test_first_message_margin(margin: int | None, message: str, expected: tuple, calls: int) -> None:
    sc, got = await run([message], first_message_margin=margin, answers="support")
    assert (got, sc.calls, sc.state()) == (
        [expected], calls, None if expected[1] == "short" else (expected[0], False, None, 0))


async def test_first_message_margin_does_not_apply_with_a_live_route() -> None:
    sc, got = await run([(MIN, "please refund the invoice")], seed=seeded("coder"), first_message_margin=0)
    assert (got, sc.calls) == ([("coder", "divergence_pending")], 0)


@pytest.mark.parametrize(
    ("margin", "message", "answer", "expected", "state", "calls"),
    [
        pytest.param(None, "please refund the invoice", "billing", ("coder", "divergence_pending"),
                     ("coder", False, "billing", 1), 0, id="off-by-default-pending"),
        pytest.param(8, "please refund the invoice", "billing", ("billing", "llm_confirmed"),
                     ("billing", False, None, 0), 1, id="12-vs-0+4-margin-8-confirms-now"),
        pytest.param(8, "please refund the invoice", None, ("coder", "llm_rejected"),
                     ("coder", False, None, 0), 1, id="early-rejection-resets"),
        pytest.param(9, "please refund the invoice", "billing", ("coder", "divergence_pending"),
                     ("coder", False, "billing", 1), 0, id="margin-8-below-9-pending"),
        pytest.param(8, "refund the invoice payment for my python work", "billing", ("billing", "llm_confirmed"),
                     ("billing", False, None, 0), 1, id="18-vs-6+4-margin-8-confirms-now"),
        pytest.param(0, "the deploy ended in a segfault", "billing", ("coder", "neutral"),
                     ("coder", False, None, 0), 0, id="not-divergent-never-early"),
    ],
)
async def test_early_confirm_margin(margin, message, answer, expected, state, calls) -> None:
    sc, got = await run([(MIN, message)], seed=seeded("coder"), early_confirm_margin=margin, answers=answer)
    assert (got, sc.state(), sc.calls) == ([expected], state, calls)


@pytest.mark.parametrize(
    ("settings", "message", "expected", "state"),
    [
        pytest.param({}, "please refund the invoice", ("coder", "divergence_pending"), ("coder", False, "billing", 1),
                     id="off-by-default-pending"),
        pytest.param({"keyword_switch_margin": 8}, "please refund the invoice", ("billing", "keywords"),
                     ("billing", False, None, 0), id="12-vs-0+4-margin-8-switches"),
        pytest.param({"keyword_switch_margin": 9}, "please refund the invoice", ("coder", "divergence_pending"),
                     ("coder", False, "billing", 1), id="margin-8-below-9-pending"),
        pytest.param({"keyword_switch_margin": 6}, "refund the invoice for the login", ("billing", "keywords"),
                     ("billing", False, None, 0), id="runner-up-is-another-agent-6"),
        pytest.param({"keyword_switch_margin": 7}, "refund the invoice for the login", ("coder", "divergence_pending"),
                     ("coder", False, "billing", 1), id="runner-up-6-margin-7-pending"),
        pytest.param({"keyword_switch_margin": 0}, "the deploy ended in a segfault", ("coder", "neutral"),
                     ("coder", False, None, 0), id="not-divergent-never-switches"),
        pytest.param({"keyword_switch_margin": 8, "early_confirm_margin": 8}, "please refund the invoice",
                     ("billing", "keywords"), ("billing", False, None, 0), id="switch-before-early-confirm"),
    ],
)
async def test_keyword_switch_margin(settings: dict, message: str, expected: tuple, state: tuple) -> None:
    sc, got = await run([(MIN, message)], seed=seeded("coder", age_s=5 * MIN), answers="coder", **settings)
    assert (got, sc.state(), sc.calls) == ([expected], state, 0)
    if expected[1] == "keywords":
        assert (sc.route().chosen_at, sc.route().last_active) == (T0 + MIN, T0 + MIN)


async def test_keyword_switch_margin_never_overrides_an_explicit_pin() -> None:
    sc, got = await run(["/agent coder", (MIN, "please refund the invoice")], keyword_switch_margin=0)
    assert (got, sc.state()) == ([("coder", "explicit"), ("coder", "explicit_pin")], ("coder", True, None, 0))


# --- the pure engine --------------------------------------------------------------------------


def test_decide_is_pure_and_asks_for_classification() -> None:
    config = make_config(TTL)
    rules = build_rules(config, config.channels["telegram"], lists_agents=True)
    route = Route("coder", chosen_at=T0, last_active=T0 + 20 * MIN)
    message = Envelope("telegram", MessageKind.TEXT, sender_id="111", chat_id="111", text=LONG)
    need = decide(message, route, rules, T0 + TTL_S)
    assert need == NeedsClassification(Purpose.RECLASSIFY, LONG, "coder", route, {})
    assert decide(message, route, rules, T0 + TTL_S - 1).reason == "cache"
    assert isinstance(decide(message, None, rules, T0), NeedsClassification)


def test_decide_confirm_carries_updated_counter_and_candidate() -> None:
    config = make_config(HEUR)
    rules = build_rules(config, config.channels["telegram"], lists_agents=True)
    route = Route("coder", chosen_at=T0, last_active=T0, candidate="billing", counter=1)
    message = Envelope("telegram", MessageKind.TEXT, sender_id="111", chat_id="111", text="please refund the invoice")
    need = decide(message, route, rules, T0 + MIN)
    assert need == NeedsClassification(
        Purpose.CONFIRM, "please refund the invoice", "coder",
        Route("coder", chosen_at=T0, last_active=T0 + MIN, candidate="billing", counter=2), {"billing": 12},
        candidate="billing")


@pytest.mark.parametrize(("text", "expected"), [
    ("ok . !", True),
    ("thanks!!! ", True),
    ("a" + "!" * 160000, False),
    ("ok" + "!" * 300, False),
])
def test_acknowledgement_scan_is_bounded(text, expected):
    from proxy.routing.engine import is_acknowledgement

    assert is_acknowledgement(text, frozenset({"ok", "thanks"})) is expected


@pytest.mark.parametrize(
    ("settings", "answer", "expected", "calls"),
    [
        pytest.param({"sticky_bonus": 0}, "billing", ("coder", "agreement"), 0, id="off-by-default-agreement"),
        pytest.param({"sticky_bonus": 0, "contest_confirm": True}, "billing", ("billing", "llm_confirmed"), 1,
                     id="tie-6-6-asks-and-switches"),
        pytest.param({"sticky_bonus": 0, "contest_confirm": True}, "coder", ("coder", "llm_rejected"), 1,
                     id="tie-asks-and-stays"),
        pytest.param({"sticky_bonus": 4, "contest_confirm": True}, "billing", ("coder", "agreement"), 0,
                     id="bonus-breaks-the-tie-no-call"),
        pytest.param({"sticky_bonus": 0, "contest_confirm": True, "confidence_threshold": 7}, "billing",
                     ("coder", "agreement"), 0, id="tied-agent-below-threshold-no-call"),
    ],
)
async def test_contest_confirm(settings: dict, answer: str, expected: tuple, calls: int) -> None:
    """Opt-in: another agent tying the current one at the top ("python refund" on coder) asks the classifier."""
    sc, got = await run([(MIN, "the python refund is wrong")], seed=seeded("coder"), answers=answer, **settings)
    assert (got, sc.calls) == ([expected], calls)


@pytest.mark.parametrize(("route", "expected"), [
    (Route("billing", chosen_at=T0, last_active=T0), ("billing", "busy")),
    (Route("coder", chosen_at=T0, last_active=T0, explicit=True), ("coder", "busy")),
    (None, ("general", "busy")),
])
def test_busy_stays_on_the_route_read_and_writes_nothing(route: Route | None, expected: tuple[str, str]) -> None:
    """Issue #10: a message that cannot get its conversation's lease within the classifier's timeout."""
    rules = build_rules(make_config(), make_config().channels["telegram"], lists_agents=True)
    decision = busy(route, rules)
    assert ((decision.agent, decision.reason), decision.store, decision.forget, decision.list_agents) == (
        expected, None, False, False)
