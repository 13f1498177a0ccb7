"""Explicit switches (issue #3, "Explicit switches"; field report T26): `/agent <name>`,
`/agent@<bot> <name>`, `/agent auto`, `/agent`, `@<name>` at word boundaries, aliases, unique
dash prefixes, unknown and ambiguous names, two agents named."""

from __future__ import annotations

import pytest

from stickyroute.routing.explicit import AgentNames, ExplicitKind, ExplicitSwitch, parse_explicit
from tests.scenario import AGENTS

NAMES = AgentNames((a.name, a.aliases) for a in AGENTS.values())
BOT = "stickybot"

SWITCH, AUTO, LIST, UNKNOWN, NONE = (ExplicitKind.SWITCH, ExplicitKind.AUTO, ExplicitKind.LIST,
                                     ExplicitKind.UNKNOWN, ExplicitKind.NONE)


def switch(agent: str) -> ExplicitSwitch:
    return ExplicitSwitch(SWITCH, agent)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("/agent billing", switch("billing"), id="command"),
        pytest.param("/agent Billing", switch("billing"), id="command-name-case"),
        pytest.param("/AGENT billing", switch("billing"), id="command-case"),
        pytest.param("  /agent   billing  ", switch("billing"), id="command-spaces"),
        pytest.param("/agent @billing", switch("billing"), id="command-at-name"),
        pytest.param("/agent accounts", switch("billing"), id="command-alias"),
        pytest.param("/agent ops", switch("ops-agent"), id="command-unique-dash-prefix"),
        pytest.param("/agent ops-agent", switch("ops-agent"), id="command-full-dashed-name"),
        pytest.param("/agent billing and the invoice too", switch("billing"), id="command-with-more-text"),
        pytest.param("/agent billing.", switch("billing"), id="command-name-full-stop"),
        pytest.param("/agent billing, please", switch("billing"), id="command-name-comma"),
        pytest.param("/agent auto!", ExplicitSwitch(AUTO), id="auto-punctuation"),
        pytest.param("/agent billing.example", ExplicitSwitch(UNKNOWN), id="command-dotted-name"),
        pytest.param("/agent billing, ask @billing", switch("billing"), id="command-and-mention-same-agent"),
        pytest.param("/agent@stickybot billing", switch("billing"), id="command-addressed-to-us"),
        pytest.param("/agent@StickyBot billing", switch("billing"), id="command-addressed-to-us-any-case"),
        pytest.param("/agent data", ExplicitSwitch(UNKNOWN), id="command-ambiguous-prefix"),
        pytest.param("/agent translator", ExplicitSwitch(UNKNOWN), id="command-unknown-name"),
        pytest.param("/agent dana", ExplicitSwitch(UNKNOWN), id="command-person"),
        pytest.param("/agent billing @support", ExplicitSwitch(UNKNOWN), id="command-and-mention-two-agents"),
        pytest.param("/agent auto", ExplicitSwitch(AUTO), id="auto"),
        pytest.param("/agent AUTO", ExplicitSwitch(AUTO), id="auto-case"),
        pytest.param("/agent@stickybot auto", ExplicitSwitch(AUTO), id="auto-addressed"),
        pytest.param("/agent", ExplicitSwitch(LIST), id="list"),
        pytest.param("  /agent  ", ExplicitSwitch(LIST), id="list-spaces"),
        pytest.param("/agent@stickybot", ExplicitSwitch(LIST), id="list-addressed"),
        pytest.param("/agent@otherbot billing", ExplicitSwitch(NONE), id="command-for-another-bot"),
        pytest.param("/agent@otherbot", ExplicitSwitch(NONE), id="list-for-another-bot"),
        pytest.param("/agents billing", ExplicitSwitch(NONE), id="other-command"),
        pytest.param("/agentbilling", ExplicitSwitch(NONE), id="glued-command"),
        pytest.param("please /agent billing", ExplicitSwitch(NONE), id="command-not-at-start"),
    ],
)
def test_agent_command(text: str, expected: ExplicitSwitch) -> None:
    assert parse_explicit(text, NAMES, BOT) == expected


def test_command_addressed_to_a_bot_when_our_name_is_unknown_is_not_ours() -> None:
    assert parse_explicit("/agent@stickybot billing", NAMES, None) == ExplicitSwitch(NONE)


def test_plain_command_needs_no_bot_username() -> None:
    assert parse_explicit("/agent billing", NAMES, None) == switch("billing")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # field report T26
        pytest.param("@dana can you check this?", ExplicitSwitch(NONE), id="T26-person"),
        pytest.param("@billing can you check this?", switch("billing"), id="T26-agent"),
        pytest.param("@billingbot hi", ExplicitSwitch(NONE), id="T26-longer-name"),
        pytest.param("mail ops@billing.example please", ExplicitSwitch(NONE), id="T26-email"),
        pytest.param("thanks @support!", switch("support"), id="T26-trailing-punctuation"),
        # boundaries
        pytest.param("hey @billing", switch("billing"), id="end-of-text"),
        pytest.param("(@support)", switch("support"), id="in-brackets"),
        pytest.param("@support, please", switch("support"), id="comma-after"),
        pytest.param("ask @support.", switch("support"), id="full-stop-after"),
        pytest.param("@billing's invoice", switch("billing"), id="apostrophe-after"),
        pytest.param("@billing.example is a domain", ExplicitSwitch(NONE), id="dotted-name"),
        pytest.param("@billing_team hi", ExplicitSwitch(NONE), id="underscore-longer-name"),
        pytest.param("@billing-team hi", ExplicitSwitch(NONE), id="dash-longer-name"),
        pytest.param("@ops-agentx hi", ExplicitSwitch(NONE), id="longer-dashed-name"),
        pytest.param("x@billing", ExplicitSwitch(NONE), id="word-before"),
        pytest.param("@@billing", ExplicitSwitch(NONE), id="double-at"),
        pytest.param("billing", ExplicitSwitch(NONE), id="bare-name-is-no-mention"),
        pytest.param("email me at a@b.c", ExplicitSwitch(NONE), id="short-email"),
        # names
        pytest.param("@BILLING help", switch("billing"), id="case-insensitive"),
        pytest.param("@accounts help", switch("billing"), id="alias"),
        pytest.param("ping @HelpDesk", switch("support"), id="alias-case"),
        pytest.param("@ops restart it", switch("ops-agent"), id="unique-dash-prefix"),
        pytest.param("@Ops-Agent restart it", switch("ops-agent"), id="full-dashed-name"),
        pytest.param("@content write this", switch("content-writer"), id="another-unique-prefix"),
        pytest.param("@data look at this", ExplicitSwitch(NONE), id="ambiguous-prefix"),
        pytest.param("@agent hi", ExplicitSwitch(NONE), id="trailing-part-is-no-prefix"),
        # several mentions
        pytest.param("@billing or @support?", ExplicitSwitch(NONE), id="two-agents-no-switch"),
        pytest.param("@billing @ops @support", ExplicitSwitch(NONE), id="three-agents-no-switch"),
        pytest.param("@billing and @accounts", switch("billing"), id="name-and-alias-same-agent"),
        pytest.param("@billing @billing", switch("billing"), id="same-agent-twice"),
        pytest.param("@billing and @dana", switch("billing"), id="agent-and-person"),
        pytest.param("", ExplicitSwitch(NONE), id="empty"),
    ],
)
def test_mentions(text: str, expected: ExplicitSwitch) -> None:
    assert parse_explicit(text, NAMES, BOT) == expected


def test_no_text_is_no_switch() -> None:
    assert parse_explicit(None, NAMES, BOT) == ExplicitSwitch(NONE)


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("coder", "coder"), ("CODER", "coder"), ("accounts", "billing"), ("helpdesk", "support"),
        ("ops", "ops-agent"), ("content", "content-writer"), ("data", None), ("dana", None),
        ("writer", None), ("", None),
    ],
)
def test_agent_names_lookup(word: str, expected: str | None) -> None:
    assert NAMES.lookup(word) == expected


def test_a_real_name_wins_over_another_agents_dash_prefix() -> None:
    names = AgentNames([("ops", ()), ("ops-agent", ())])
    assert (names.lookup("ops"), names.lookup("ops-agent")) == ("ops", "ops-agent")


@pytest.mark.parametrize(("text", "expected"), [
    ("see https://medium.com/@coder/post", ExplicitSwitch(ExplicitKind.NONE)),
    ("the file is at path/@coder", ExplicitSwitch(ExplicitKind.NONE)),
    ("tag #@coder", ExplicitSwitch(ExplicitKind.NONE)),
    ("query ?user=@coder", ExplicitSwitch(ExplicitKind.NONE)),
    ("ping @coder/", ExplicitSwitch(ExplicitKind.NONE)),
    ("/agent@OtherBot @coder", ExplicitSwitch(ExplicitKind.NONE)),
    ("/ask@OtherBot can @coder help?", ExplicitSwitch(ExplicitKind.NONE)),
    ("/ask@MyBot can @coder help?", ExplicitSwitch(ExplicitKind.SWITCH, "coder")),
    ("(cc @coder)", ExplicitSwitch(ExplicitKind.SWITCH, "coder")),
])
def test_mentions_inside_urls_or_other_bots_commands_do_not_switch(text, expected):
    assert parse_explicit(text, NAMES, "MyBot") == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("/agent x" + "!" * 25000 + "x", ExplicitSwitch(ExplicitKind.UNKNOWN)),
    ("/agent coder" + "!" * 25000, ExplicitSwitch(ExplicitKind.SWITCH, "coder")),
    ("@coder" + "-" * 25000, ExplicitSwitch(ExplicitKind.NONE)),
])
def test_long_punctuation_runs_are_parsed_in_one_pass(text, expected):
    """A 25,000-character argument must not make the parser quadratic (it froze the loop)."""
    assert parse_explicit(text, NAMES, "MyBot") == expected
