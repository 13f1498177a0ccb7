"""Slack adapter on payload shapes taken from other projects' test suites (slackapi/bolt-python,
slackapi/java-slack-sdk, RasaHQ/rasa) and Slack's documentation, re-created with invented ids
(`tests/channels/realworld.py`): every sample's envelope, its handshake, its signature checked
the way slack_sdk signs, and the stability of its delivery id."""

from __future__ import annotations

import json

import pytest
from slack_sdk.signature import SignatureVerifier

from stickyroute.channels import ADAPTERS, Request
from stickyroute.config.model import Channel, ChannelType
from stickyroute.routing.envelope import Envelope, MessageKind
from tests.channels import realworld

CH = "slack"
SECRET = "fake_slack_signing_secret_0002"
NOW = 1767700100.0
ADAPTER = ADAPTERS[ChannelType.SLACK]
CHANNEL = Channel(CH, ChannelType.SLACK, ("/slack",), "general", signing_secret=SECRET)
TEXT, NON_TEXT, EDIT, BUTTON = MessageKind.TEXT, MessageKind.NON_TEXT, MessageKind.EDIT, MessageKind.BUTTON
USER_EVENT, NO_SENDER = MessageKind.USER_EVENT, MessageKind.NO_SENDER
T, ANA, BEN = "T0RW00001", "U0RW0000A", "W0RW0000B"
C, G, D = "C0RW00001", "G0RW00001", "D0RW00001"


def env(kind, delivery, sender=None, chat=None, thread=None, text=None, to_proxy=False) -> Envelope:
    return Envelope(channel=CH, kind=kind, delivery_id=delivery, sender_id=sender, chat_id=chat, thread_id=thread,
                    text=text, sender_aliases=(sender,) if sender else (), to_proxy=to_proxy)


def msg(chat: str, ts: str, kind: str = "message", tenant: str = T) -> str:
    return f"{kind}:{tenant}:{chat}:{ts}"


EXPECTED = {
    "org_app_message": env(NON_TEXT, msg(C, "1767700001.000100"), BEN, C, "1767700001.000100"),
    "org_app_home_opened": env(USER_EVENT, "Ev0RW002", BEN, D),
    "org_team_access_granted": env(NO_SENDER, "Ev0RW003"),
    "shared_channel_app_mention": env(TEXT, msg(C, "1767700004.000400", "app_mention"), BEN, C, "1767700004.000400",
                                      "@billing is the invoice ready?"),
    "message_changed_inner_without_ts": env(EDIT, msg(C, "1767700005.000500"), ANA, C, "1767700000.000500",
                                            "updated question"),
    "message_deleted": env(EDIT, msg(C, "1767700006.000600"), ANA, C, "1767700000.000600"),
    "thread_broadcast": env(TEXT, msg(C, "1767700007.000700"), ANA, C, "1767700000.000700",
                            "@billing also for everyone"),
    "file_share_private_channel": env(TEXT, msg(G, "1767700008.000800"), ANA, G, "1767700008.000800",
                                      "here is the log"),
    "bot_message_classic": env(NO_SENDER, msg(C, "1767700009.000900"), chat=C, thread="1767700009.000900"),
    "bot_message_other_app": env(NO_SENDER, msg(C, "1767700010.001000"), chat=C, thread="1767700010.001000"),
    "bot_reply_in_thread": env(USER_EVENT, msg(C, "1767700011.001100"), ANA, C, "1767700000.001100"),
    "assistant_thread_started": env(USER_EVENT, "Ev0RW012", BEN, D),
    "assistant_user_message": env(TEXT, msg(D, "1767700013.001300"), BEN, D, text="@billing when is it due?"),
    "assistant_title_changed": env(NO_SENDER, msg(D, "1767700014.001400"), chat=D),
    "channel_join": env(USER_EVENT, msg(C, "1767700015.001500"), ANA, C, "1767700015.001500"),
    "reaction_added": env(NON_TEXT, "Ev0RW016", ANA, C, "1767700000.001600"),
    "member_joined_channel": env(USER_EVENT, "Ev0RW017", BEN, C),
    "link_shared": env(USER_EVENT, "Ev0RW018", ANA, C, "1767700000.001800"),
    "function_executed": env(NO_SENDER, "Ev0RW019"),
    "app_rate_limited": env(NO_SENDER, f"app_rate_limited:{T}:1767700020"),
    "event_without_outer_type": env(TEXT, msg(D, "1767700021.002100"), ANA, D, text="@billing hello"),
    "message_with_link_carrying_ssl_check": env(TEXT, msg(D, "1767700022.002200"), ANA, D,
                                                text="see https://example.test/?a=1&ssl_check=1&b=2"),
    "block_actions_bot_message": env(BUTTON, "block_actions:1000000000023.1000000000002.fake23", ANA, C,
                                     "1767700000.002300", "refund"),
    "block_actions_app_home": env(BUTTON, "block_actions:1000000000024.1000000000002.fake24", ANA,
                                  text="open_settings"),
    "block_suggestion": env(BUTTON, None, ANA, text="view-id"),
    "view_submission_response_urls": env(BUTTON, "view_submission:1000000000026.1000000000002.fake26", ANA, C,
                                         text="view-id"),
    "view_closed": env(BUTTON, None, ANA, text="view-id"),
    "global_shortcut": env(BUTTON, "shortcut:1000000000028.1000000000002.fake28", ANA, text="test-shortcut"),
    "message_action": env(BUTTON, "message_action:1000000000029.1000000000002.fake29", ANA, C, "1767700000.002900",
                          "test-shortcut"),
    "interactive_message_legacy": env(BUTTON, "interactive_message:1000000000030.1000000000002.fake30", ANA, C,
                                      "1767700000.003000", "pick_channel_for_fun"),
    "dialog_submission": env(BUTTON, f"dialog_submission:{ANA}:1767700031.003100", ANA, C, text="dialog-callback-id"),
    "slash_command_enterprise_dm": env(TEXT, "command:1000000000032.1.fake32", ANA, D, text="/agent billing",
                                       to_proxy=True),
    "slash_command_escaped_mention": env(TEXT, "command:1000000000033.1.fake33", ANA, C,
                                         text="and @billing: where is the invoice?"),
    "slash_command_with_ssl_check": env(TEXT, "command:1000000000034.1.fake34", ANA, C, text="hello there"),
}
HANDSHAKES = {"ssl_check": (200, b""), "url_verification": (200, b'{"challenge": "fake-challenge-0001"}')}


def test_every_sample_has_an_expectation():
    assert sorted(realworld.names(CH)) == sorted([*EXPECTED, *HANDSHAKES])


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_real_world_shapes(name):
    body = realworld.body(CH, name)
    envelopes = ADAPTER.parse(body, [], CH)
    expected = EXPECTED[name]
    if expected.delivery_id is None:  # no id of its own: keyed by its place in this exact body
        assert ADAPTER.delivery_ids(envelopes, body) == ADAPTER.delivery_ids(ADAPTER.parse(body, [], CH), body)
        assert ADAPTER.delivery_ids(envelopes, body)[0] != ADAPTER.delivery_ids(envelopes, body + b" ")[0]
    assert envelopes == (expected,)


def signed(body: bytes, stamp: float = NOW) -> Request:
    verifier = SignatureVerifier(SECRET)
    signature = verifier.generate_signature(timestamp=str(int(stamp)), body=body)
    headers = [(b"x-slack-request-timestamp", str(int(stamp)).encode()), (b"x-slack-signature", signature.encode())]
    return Request("POST", b"", headers, body)


@pytest.mark.parametrize("name", realworld.names(CH))
def test_every_sample_signed_like_slack_sdk_authenticates_and_a_changed_one_does_not(name):
    body = realworld.body(CH, name)
    request = signed(body)
    assert ADAPTER.authenticate(CHANNEL, request, NOW)
    assert not ADAPTER.authenticate(CHANNEL, Request("POST", b"", request.headers, body + b"&"), NOW)
    assert not ADAPTER.authenticate(CHANNEL, signed(body, NOW - 301), NOW)


@pytest.mark.parametrize("name", realworld.names(CH))
def test_only_verifications_are_handshakes(name):
    reply = ADAPTER.handshake(CHANNEL, signed(realworld.body(CH, name)), NOW)
    if name in HANDSHAKES:
        assert reply is not None and (reply.status, reply.body) == HANDSHAKES[name]
    else:
        assert reply is None


def test_a_message_whose_link_carries_ssl_check_is_no_ssl_check():
    """Its blocks hold the raw link `...?a=1&ssl_check=1&b=2`: read as a form, the JSON body has a
    field `ssl_check` = "1"; the message must reach an agent, not be answered by the proxy."""
    body = realworld.body(CH, "message_with_link_carrying_ssl_check")
    assert b"&ssl_check=1&" in body
    assert ADAPTER.handshake(CHANNEL, signed(body), NOW) is None


@pytest.mark.parametrize("name", [n for n, e in EXPECTED.items() if (e.delivery_id or "").startswith(
    ("message:", "app_mention:"))])
def test_a_message_copy_with_a_new_event_id_keeps_its_delivery_id(name):
    doc = json.loads(realworld.body(CH, name))
    copy = json.dumps({**doc, "event_id": "Ev0RWCOPY"}).encode()
    assert ADAPTER.delivery_ids(ADAPTER.parse(copy, [], CH), copy) == [EXPECTED[name].delivery_id]
