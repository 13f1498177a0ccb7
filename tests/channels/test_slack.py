"""Slack adapter: shipped samples and samples built from Slack's documentation, every event kind,
v0 signatures (checked against slack_sdk's own verifier), handshakes, slash commands."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import urlencode

import pytest
from slack_sdk.signature import SignatureVerifier

from stickyroute.channels import ADAPTERS, Request
from stickyroute.channels.security import slack_signature
from stickyroute.channels.slack import parse
from stickyroute.channels.slack_text import plain_text
from stickyroute.config.model import Agent, Channel, ChannelType
from stickyroute.errors import UnparsedUpdate
from stickyroute.routing.envelope import Envelope, MessageKind

PAYLOADS = Path(__file__).resolve().parent / "payloads" / "slack"
CH = "slack"
SECRET = "fake_slack_signing_secret_0001"
ADAPTER = ADAPTERS[ChannelType.SLACK]
CHANNEL = Channel(CH, ChannelType.SLACK, ("/slack",), "general", signing_secret=SECRET)
OPEN = Channel(CH, ChannelType.SLACK, ("/slack",), "general")
TEXT, NON_TEXT, EDIT, BUTTON = MessageKind.TEXT, MessageKind.NON_TEXT, MessageKind.EDIT, MessageKind.BUTTON
USER_EVENT, NO_SENDER = MessageKind.USER_EVENT, MessageKind.NO_SENDER
TEAM = "T0FAKE0001"


def env(kind, delivery, sender=None, chat=None, thread=None, text=None, to_proxy=False) -> Envelope:
    return Envelope(channel=CH, kind=kind, delivery_id=delivery, sender_id=sender, chat_id=chat, thread_id=thread,
                    text=text, sender_aliases=(sender,) if sender else (), to_proxy=to_proxy)


def sample(name: str) -> bytes:
    return (PAYLOADS / name).read_bytes()


SHIPPED = [
    ("dm_message.json", env(TEXT, f"message:{TEAM}:D0FAKEDM01:1767600000.000100", "U0FAKEUSR1", "D0FAKEDM01",
                            text="Can you reset my VPN token?")),
    ("thread_reply.json", env(TEXT, f"message:{TEAM}:C0FAKECHN1:1767600200.000300", "U0FAKEUSR2", "C0FAKECHN1",
                              "1767600100.000200", "Same problem here since this morning")),
    ("app_mention.json", env(TEXT, f"app_mention:{TEAM}:C0FAKECHN1:1767600300.000400", "U0FAKEUSR1",
                             "C0FAKECHN1", "1767600300.000400", "what changed in release 4.2?")),
    ("message_same_mention.json", env(TEXT, f"message:{TEAM}:C0FAKECHN1:1767600300.000400", "U0FAKEUSR1",
                                      "C0FAKECHN1", "1767600300.000400", "what changed in release 4.2?")),
    ("bot_own_message.json", env(USER_EVENT, f"message:{TEAM}:C0FAKECHN1:1767600305.000500", "U0FAKEUSR1",
                                 "C0FAKECHN1", "1767600300.000400")),
    ("message_changed.json", env(EDIT, f"message:{TEAM}:D0FAKEDM01:1767600400.000600", "U0FAKEUSR1", "D0FAKEDM01",
                                 text="Can you reset my VPN token? (laptop)")),
    ("block_actions.txt", env(BUTTON, "block_actions:1000000000001.1000000000002.fakefakefakefakefakefakefake0001",
                              "U0FAKEUSR1", "C0FAKECHN1", "1767600300.000400", "yes")),
    ("slash_command.txt", env(TEXT, "command:1000000000005.1000000000002.fakefakefakefakefakefakefake0002",
                              "U0FAKEUSR1", "C0FAKECHN1", text="how do I rotate my API key?")),
    ("url_verification.json", env(NO_SENDER, None)),
]


@pytest.mark.parametrize(("name", "expected"), SHIPPED, ids=[s[0] for s in SHIPPED])
def test_shipped_samples(name, expected):
    assert parse(sample(name), CH) == (expected,)


def callback(event: dict, **outer) -> bytes:
    doc = {"token": "x", "team_id": TEAM, "api_app_id": "A1", "event": event, "type": "event_callback",
           "event_id": "Ev42", "event_time": 1767600000, **outer}
    return json.dumps(doc).encode()


def message(**fields) -> dict:
    return {"type": "message", "channel": "C1", "user": "U1", "ts": "1767600000.000100", "text": "hello there",
            "channel_type": "channel", **fields}


KEY = f"message:{TEAM}:C1:1767600000.000100"
DOCUMENTED = [
    pytest.param(message(), env(TEXT, KEY, "U1", "C1", "1767600000.000100", "hello there"), id="top-level-starts-thread"),
    pytest.param(message(subtype="thread_broadcast", thread_ts="1767599999.000001"),
                 env(TEXT, KEY, "U1", "C1", "1767599999.000001", "hello there"), id="thread-broadcast-is-a-reply"),
    pytest.param(message(subtype="file_share", text=""), env(NON_TEXT, KEY, "U1", "C1", "1767600000.000100"),
                 id="file-share-without-text"),
    pytest.param(message(subtype="me_message"), env(TEXT, KEY, "U1", "C1", "1767600000.000100", "hello there"),
                 id="me-message"),
    pytest.param(message(text="<@U0BOT> <@U7|dana> @billing can you check <https://x.test/a|this>?"),
                 env(TEXT, KEY, "U1", "C1", "1767600000.000100", "@billing can you check this?"),
                 id="user-mentions-removed-typed-agent-mention-kept"),
    pytest.param(message(text="<!subteam^S1|@billing> &lt;b&gt; &amp; <#C9|general> <!here>"),
                 env(TEXT, KEY, "U1", "C1", "1767600000.000100", "<b> & #general"), id="group-mention-not-an-agent"),
    pytest.param(message(text="<@U0BOT>"), env(NON_TEXT, KEY, "U1", "C1", "1767600000.000100"),
                 id="only-a-mention-is-no-text"),
    pytest.param(message(channel="D1", channel_type="im"), env(TEXT, f"message:{TEAM}:D1:1767600000.000100", "U1",
                                                               "D1", None, "hello there"), id="dm-is-one-conversation"),
    pytest.param(message(subtype=["bot_message"]), env(TEXT, KEY, "U1", "C1", "1767600000.000100", "hello there"),
                 id="subtype-of-the-wrong-type"),
    pytest.param(message(subtype="bot_message", bot_id="B1", user=None), env(NO_SENDER, KEY, chat="C1",
                                                                             thread="1767600000.000100"),
                 id="bot-message-top-level-no-sender"),
    pytest.param(message(bot_id="B1", user="UBOT", channel="D1", channel_type="im"),
                 env(NO_SENDER, f"message:{TEAM}:D1:1767600000.000100", chat="D1"), id="bot-message-in-dm"),
    pytest.param(message(subtype="channel_join", text="<@U1> has joined the channel"),
                 env(USER_EVENT, KEY, "U1", "C1", "1767600000.000100"), id="channel-join"),
    pytest.param(message(subtype="message_deleted", hidden=True, user=None,
                         previous_message={"user": "U1", "ts": "1767599000.000001", "text": "old"}),
                 env(EDIT, KEY, "U1", "C1", "1767599000.000001"), id="message-deleted"),
    pytest.param(message(subtype="message_changed", hidden=True, user=None,
                         message={"user": "UBOT", "bot_id": "B1", "text": "thinking... done", "ts": "1767599000.1",
                                  "thread_ts": "1767598000.1", "parent_user_id": "U1"}),
                 env(USER_EVENT, KEY, "U1", "C1", "1767598000.1"), id="bot-edits-its-reply"),
    pytest.param(message(subtype="message_replied", hidden=True, user=None,
                         message={"user": "U1", "ts": "1767598000.1", "thread_ts": "1767598000.1"}),
                 env(USER_EVENT, KEY, "U1", "C1", "1767598000.1"), id="message-replied"),
    pytest.param({"type": "reaction_added", "user": "U1", "reaction": "thumbsup", "item_user": "U2",
                  "item": {"type": "message", "channel": "C1", "ts": "1360782400.498405"},
                  "event_ts": "1360782804.083113"},
                 env(NON_TEXT, "Ev42", "U1", "C1", "1360782400.498405"), id="reaction-added"),
    pytest.param({"type": "member_joined_channel", "user": "W06GH7XHN", "channel": "C0698JE0H", "channel_type": "C",
                  "team": TEAM, "inviter": "U123"},
                 env(USER_EVENT, "Ev42", "W06GH7XHN", "C0698JE0H"), id="member-joined-channel"),
    pytest.param({"type": "app_home_opened", "user": "U1", "channel": "D1", "tab": "home", "event_ts": "1.2"},
                 env(USER_EVENT, "Ev42", "U1", "D1"), id="app-home-opened"),
    pytest.param({"type": "team_join", "user": {"id": "U9", "name": "new"}}, env(USER_EVENT, "Ev42", "U9"),
                 id="team-join-user-object"),
    pytest.param({"type": "assistant_thread_started", "assistant_thread": {
        "user_id": "U1", "context": {}, "channel_id": "D1", "thread_ts": "1729999327.187299"}},
                 env(USER_EVENT, "Ev42", "U1", "D1"), id="assistant-thread-started"),
    pytest.param({"type": "app_uninstalled"}, env(NO_SENDER, "Ev42"), id="app-uninstalled"),
    pytest.param({"type": "tokens_revoked", "tokens": {"bot": ["U1"]}}, env(NO_SENDER, "Ev42"), id="tokens-revoked"),
    pytest.param({"type": "future_kind", "user": "U1", "channel": "C1"}, env(USER_EVENT, "Ev42", "U1", "C1"),
                 id="unknown-event-with-user"),
    pytest.param({"type": "future_kind"}, env(NO_SENDER, "Ev42"), id="unknown-event-without-user"),
]


@pytest.mark.parametrize(("event", "expected"), DOCUMENTED)
def test_documented_events(event, expected):
    assert parse(callback(event), CH) == (expected,)


def test_enterprise_grid_message_keys_its_identity_on_the_team_then_the_enterprise():
    grid = callback(message(user="W1", team="T2"), team_id=None, enterprise_id="E1", context_team_id="T2")
    assert parse(grid, CH) == (env(TEXT, "message:E1:C1:1767600000.000100", "W1", "C1", "1767600000.000100",
                                   "hello there"),)
    workspace = callback(message(user="W1"), enterprise_id="E1")
    assert parse(workspace, CH)[0].delivery_id == KEY


@pytest.mark.parametrize(("doc", "expected"), [
    ({"token": "x", "team_id": TEAM, "minute_rate_limited": 1518467820, "api_app_id": "A1",
      "type": "app_rate_limited"}, env(NO_SENDER, f"app_rate_limited:{TEAM}:1518467820")),
    ({"type": "event_callback", "team_id": TEAM, "event_id": "Ev1"}, env(NO_SENDER, "Ev1")),
    ({"type": "something_new"}, env(NO_SENDER, None)),
])
def test_outer_types_without_an_event(doc, expected):
    assert parse(json.dumps(doc).encode(), CH) == (expected,)


@pytest.mark.parametrize("body", [b"{not json", b"[1, 2]", b"hello=world", b"\xff\xfe=1",
                                  b"payload=%7Bnot", b"payload=%5B1%5D"])
def test_unreadable_bodies_are_unparsed(body):
    with pytest.raises(UnparsedUpdate):
        parse(body, CH)


def interaction(doc: dict) -> bytes:
    return urlencode({"payload": json.dumps(doc)}).encode()


INTERACTIONS = [
    pytest.param({"type": "view_submission", "team": {"id": TEAM}, "user": {"id": "U1"}, "trigger_id": "t1",
                  "view": {"id": "V1", "callback_id": "ticket", "private_metadata": ""},
                  "response_urls": [{"block_id": "b", "action_id": "a", "channel_id": "C5",
                                     "response_url": "https://hooks.slack.com/app/x"}]},
                 env(BUTTON, "view_submission:t1", "U1", "C5", text="ticket"), id="view-submission-response-url"),
    pytest.param({"type": "view_submission", "user": {"id": "U1"}, "trigger_id": "t2",
                  "view": {"id": "V1", "callback_id": "ticket",
                           "private_metadata": json.dumps({"channel_id": "C5", "thread_ts": "1.5"})}},
                 env(BUTTON, "view_submission:t2", "U1", "C5", "1.5", "ticket"), id="view-submission-metadata"),
    pytest.param({"type": "view_closed", "user": {"id": "U1"}, "view": {"id": "V1", "callback_id": "ticket",
                                                                          "private_metadata": "not json"}},
                 env(BUTTON, None, "U1", text="ticket"), id="view-closed-names-no-conversation"),
    pytest.param({"type": "shortcut", "callback_id": "open_ticket", "trigger_id": "t3", "user": {"id": "U1"},
                  "action_ts": "1581106241.371594"}, env(BUTTON, "shortcut:t3", "U1", text="open_ticket"),
                 id="global-shortcut"),
    pytest.param({"type": "message_action", "callback_id": "summarise", "trigger_id": "t4", "user": {"id": "U1"},
                  "channel": {"id": "C1"}, "message": {"ts": "1.2", "thread_ts": "1.1", "text": "x"}},
                 env(BUTTON, "message_action:t4", "U1", "C1", "1.1", "summarise"), id="message-shortcut"),
    pytest.param({"type": "block_actions", "user": {"id": "U1"}, "trigger_id": "t5",
                  "container": {"type": "message", "message_ts": "1.2", "channel_id": "D1"},
                  "channel": {"id": "D1"}, "message": {"ts": "1.2"},
                  "actions": [{"action_id": "pick", "selected_option": {"value": "plan-b"}, "action_ts": "1.3"}]},
                 env(BUTTON, "block_actions:t5", "U1", "D1", text="plan-b"), id="block-actions-in-dm"),
    pytest.param({"type": "block_suggestion", "user": {"id": "U1"}, "action_id": "city", "value": "Par",
                  "container": {"type": "view", "view_id": "V1"}, "view": {"id": "V1"}},
                 env(BUTTON, None, "U1", text=None), id="block-suggestion"),
    pytest.param({"type": "interactive_message", "user": {"id": "U1"}, "channel": {"id": "C1"},
                  "callback_id": "legacy", "action_ts": "1.9", "message_ts": "1.1",
                  "actions": [{"name": "go", "value": "go", "type": "button"}]},
                 env(BUTTON, "interactive_message:U1:1.9", "U1", "C1", "1.1", "go"), id="legacy-attachment-button"),
    pytest.param({"type": "something_new", "user": {"id": "U1"}, "channel": {"id": "C1"}, "trigger_id": "t6"},
                 env(NO_SENDER, "something_new:t6", chat="C1"), id="unknown-interaction"),
]


@pytest.mark.parametrize(("doc", "expected"), INTERACTIONS)
def test_interactivity_payloads(doc, expected):
    assert parse(interaction(doc), CH) == (expected,)


def command(**fields) -> bytes:
    base = {"token": "x", "team_id": TEAM, "channel_id": "C1", "user_id": "U1", "command": "/agent", "text": "",
            "trigger_id": "t9", "response_url": "https://hooks.slack.com/commands/x"}
    return urlencode({**base, **fields}).encode()


@pytest.mark.parametrize(("body", "expected"), [
    (command(), env(TEXT, "command:t9", "U1", "C1", text="/agent", to_proxy=True)),
    (command(text="billing"), env(TEXT, "command:t9", "U1", "C1", text="/agent billing", to_proxy=True)),
    (command(text="auto", channel_id="D1"), env(TEXT, "command:t9", "U1", "D1", text="/agent auto", to_proxy=True)),
    (command(command="/AGENT", text="ops"), env(TEXT, "command:t9", "U1", "C1", text="/agent ops", to_proxy=True)),
    (command(command="/ask", text="where is my <https://x.test|invoice>?"),
     env(TEXT, "command:t9", "U1", "C1", text="where is my invoice?")),
    (command(command="/help"), env(NON_TEXT, "command:t9", "U1", "C1")),
    (command(command="/agent", user_id=""), env(NO_SENDER, "command:t9", chat="C1")),
])
def test_slash_commands(body, expected):
    assert parse(body, CH) == (expected,)


@pytest.mark.parametrize(("text", "plain"), [
    ("<@U123> hi", "hi"),
    ("<@U123|dana> hi", "hi"),
    ("see <https://a.test/x?y=1&amp;z=2>", "see https://a.test/x?y=1&z=2"),
    ("mail <mailto:ops@billing.example|ops@billing.example>", "mail ops@billing.example"),
    ("<!date^1392734382^{date}|Feb 18, 2014> ok", "Feb 18, 2014 ok"),
    ("a &lt; b &gt; c", "a < b > c"),
    ("@support please", "@support please"),
])
def test_plain_text(text, plain):
    assert plain_text(text) == plain


# --- signatures -----------------------------------------------------------------------------------

STAMP = 1767600001
DM_SIGNATURE = "v0=348f3a7106039d513f8d96366659f7e33f6e313f7faa630e821a83655c21cb5b"


def request(body: bytes, signature: str | None = DM_SIGNATURE, stamp: str | None = str(STAMP),
            method: str = "POST") -> Request:
    headers = []
    if signature is not None:
        headers.append((b"x-slack-signature", signature.encode()))
    if stamp is not None:
        headers.append((b"x-slack-request-timestamp", stamp.encode()))
    return Request(method, b"", headers, body)


class FakeClock:
    def __init__(self, now: float) -> None:
        self.value = now

    def now(self) -> float:
        return self.value


@pytest.mark.parametrize(("name", "signature"), [
    ("dm_message.json", DM_SIGNATURE),
    ("block_actions.txt", "v0=bffa26649a0c798986d7cd49245d5de83d0e3c8d6b887896d4e1a47a2dc1269c"),
    ("slash_command.txt", "v0=b05744a1a793c7c0e8429d08bb0341ddc75c54c65ab5ee979307cf7dea1d87bc"),
])
def test_the_shipped_signatures_hold_here_and_in_slack_sdk(name, signature):
    body = sample(name)
    assert slack_signature(body, str(STAMP), SECRET) == signature
    assert ADAPTER.authenticate(CHANNEL, request(body, signature), STAMP + 10.0)
    verifier = SignatureVerifier(SECRET, clock=FakeClock(STAMP + 10.0))
    assert verifier.is_valid(body, str(STAMP), signature)


@pytest.mark.parametrize(("now", "signature", "stamp", "accepted"), [
    pytest.param(STAMP + 300.0, DM_SIGNATURE, str(STAMP), True, id="5-minutes-old"),
    pytest.param(STAMP + 300.5, DM_SIGNATURE, str(STAMP), False, id="expired"),
    pytest.param(STAMP - 300.5, DM_SIGNATURE, str(STAMP), False, id="from-the-future"),
    pytest.param(STAMP, DM_SIGNATURE.upper().replace("V0=", "v0="), str(STAMP), True, id="hex-in-upper-case"),
    pytest.param(STAMP, "v0=" + "0" * 64, str(STAMP), False, id="bad-signature"),
    pytest.param(STAMP, DM_SIGNATURE, str(STAMP + 1), False, id="other-timestamp"),
    pytest.param(STAMP, None, str(STAMP), False, id="missing-signature"),
    pytest.param(STAMP, DM_SIGNATURE, None, False, id="missing-timestamp"),
    pytest.param(STAMP, DM_SIGNATURE, "1767600001.5", False, id="timestamp-not-digits"),
    pytest.param(STAMP, DM_SIGNATURE, "\u0661767600001", False, id="timestamp-not-ascii"),
])
def test_signature_window_and_forms(now, signature, stamp, accepted):
    body = sample("dm_message.json")
    assert ADAPTER.authenticate(CHANNEL, request(body, signature, stamp), now) is accepted
    if signature is not None and stamp is not None and stamp.isascii() and stamp.isdigit():
        verifier = SignatureVerifier(SECRET, clock=FakeClock(now))
        assert verifier.is_valid(body, stamp, signature.lower()) is accepted


def test_a_changed_body_fails_and_no_secret_accepts_everything():
    body = sample("dm_message.json").replace(b"VPN", b"VPM")
    assert not ADAPTER.authenticate(CHANNEL, request(body), STAMP)
    assert ADAPTER.authenticate(OPEN, request(body, None, None), STAMP)


# --- handshakes -----------------------------------------------------------------------------------

def signed(body: bytes, now: float = STAMP, secret: str = SECRET) -> Request:
    return request(body, slack_signature(body, str(int(now)), secret), str(int(now)))


def test_url_verification_is_answered_with_its_challenge_once_signed():
    body = sample("url_verification.json")
    reply = ADAPTER.handshake(CHANNEL, signed(body), STAMP)
    assert reply is not None and reply.status == 200
    assert json.loads(reply.body) == {"challenge": "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P"}
    assert reply.header(b"content-type") == b"application/json"


@pytest.mark.parametrize("req", [
    pytest.param(request(b"", None, None), id="unsigned"),
    pytest.param(None, id="wrong-secret"),
    pytest.param("expired", id="expired"),
])
def test_url_verification_with_a_bad_signature_is_not_answered(req):
    body = sample("url_verification.json")
    if req is None:
        req = signed(body, secret="another-secret")
    elif req == "expired":
        req = signed(body, STAMP - 400)
    else:
        req = request(body, None, None)
    assert ADAPTER.handshake(CHANNEL, req, STAMP) is None
    assert not ADAPTER.authenticate(CHANNEL, req, STAMP)


def test_url_verification_without_a_secret_is_answered():
    reply = ADAPTER.handshake(OPEN, request(sample("url_verification.json"), None, None), STAMP)
    assert reply is not None and json.loads(reply.body)["challenge"].startswith("3eZb")


@pytest.mark.parametrize("body", [b"ssl_check=1&token=x", b"token=x&ssl_check=1"])
def test_ssl_check_is_answered_200_before_any_signature(body):
    reply = ADAPTER.handshake(CHANNEL, request(body, None, None), STAMP)
    assert reply is not None and (reply.status, reply.body) == (200, b"")


@pytest.mark.parametrize("body", [
    sample("dm_message.json"), sample("slash_command.txt"), b"ssl_check=0",
    b"command=%2Fagent&ssl_check=1", json.dumps({"type": "url_verification", "challenge": 5}).encode(),
    b'{"type": "url_verification", "challenge": "' + b"x" * 5000 + b'"}',
])
def test_other_requests_are_no_handshake(body):
    assert ADAPTER.handshake(OPEN, request(body, None, None), STAMP) is None


def test_a_get_is_no_handshake():
    assert ADAPTER.handshake(OPEN, request(sample("url_verification.json"), method="GET"), STAMP) is None


# --- the /agent slash command ---------------------------------------------------------------------

AGENTS = (Agent("general", "http://a", description="answers everything"), Agent("billing", "http://b", aliases=("money",)))


@pytest.mark.parametrize(("text", "chat", "current", "first"), [
    ("/agent", "C1", "general", "In this channel /agent picks"),
    ("/agent billing", "D1", "billing", "Now talking to billing."),
    ("/agent money", "D1", "billing", "Now talking to billing."),
    ("/agent nobody", "D1", "general", "Not switched to 'nobody' (unknown here, or too many switches): still general."),
    ("/agent auto", "D1", "general", "Back to automatic routing: general answers for now."),
])
def test_agent_command_answered_ephemerally(text, chat, current, first):
    envelope = env(TEXT, "command:t", "U1", chat, text=text, to_proxy=True)
    reply = ADAPTER.agent_list(envelope, AGENTS, current)
    assert reply is not None and reply.status == 200
    answer = json.loads(reply.body)
    assert answer["response_type"] == "ephemeral"
    lines = answer["text"].split("\n")
    assert lines[0].startswith(first)
    marked = {"general": "\u2022 general (current) - answers everything", "billing": "\u2022 billing (current)"}
    assert lines[-2:] == ([marked["general"], "\u2022 billing"] if current == "general"
                          else ["\u2022 general - answers everything", marked["billing"]])
    assert reply.header(b"x-stickyroute-agent") == current.encode()


def test_agent_list_answers_only_envelopes_addressed_to_the_proxy():
    assert ADAPTER.agent_list(env(TEXT, "m", "U1", "C1", text="/agent"), AGENTS, "general") is None
