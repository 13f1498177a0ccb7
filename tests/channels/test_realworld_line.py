"""LINE adapter on payload shapes from line/line-bot-sdk-python (the webhook sample holding every
event type), line/line-bot-sdk-nodejs (a group message without userId) and LINE's reference
(account events, mentions, emojis), re-created with invented ids (`tests/channels/realworld.py`):
every event's envelope, the signature and every split part checked by line-bot-sdk's
WebhookParser."""

from __future__ import annotations

import pytest
from linebot.v3 import WebhookParser

from stickyroute.channels import ADAPTERS, Request
from stickyroute.channels.security import line_signature
from stickyroute.config.model import Channel, ChannelType
from stickyroute.routing.envelope import Envelope, MessageKind
from tests.channels import realworld

CH = "line"
SECRET = "fake_line_channel_secret_0002"
ADAPTER = ADAPTERS[ChannelType.LINE]
CHANNEL = Channel(CH, ChannelType.LINE, ("/line",), "general", channel_secret=SECRET)
TEXT, NON_TEXT, EDIT, BUTTON = MessageKind.TEXT, MessageKind.NON_TEXT, MessageKind.EDIT, MessageKind.BUTTON
USER_EVENT, NO_SENDER = MessageKind.USER_EVENT, MessageKind.NO_SENDER
ANA, BEN = "U0000000000000000000000000000aaa1", "U0000000000000000000000000000bbb2"
GROUP, ROOM = "C0000000000000000000000000000ggg1", "R0000000000000000000000000000rrr1"


def env(n: int, path: int, kind, sender=None, chat=None, text=None) -> Envelope:
    return Envelope(channel=CH, kind=kind, delivery_id=f"01JRW0000000000000000000{n:02d}", sender_id=sender,
                    chat_id=chat, text=text, sender_aliases=(sender,) if sender else (), item_path=(path,))


SDK = [  # (event number, kind, sender, chat, text), in body order
    (1, TEXT, ANA, ANA, "Hello, world"), (2, NO_SENDER, None, ROOM, None), (3, NON_TEXT, ANA, ANA, None),
    (4, NON_TEXT, ANA, ANA, None), (5, NON_TEXT, ANA, ANA, None), (6, NON_TEXT, ANA, ANA, None),
    (7, USER_EVENT, ANA, ANA, None), (8, USER_EVENT, ANA, ANA, None), (9, NO_SENDER, None, GROUP, None),
    (10, NO_SENDER, None, GROUP, None), (11, BUTTON, ANA, ANA, "action=buy&itemId=1&color=red"),
    (12, USER_EVENT, ANA, ANA, None), (13, USER_EVENT, ANA, ANA, None), (14, USER_EVENT, ANA, ANA, None),
    (15, TEXT, ANA, GROUP, "Hello, group"), (16, TEXT, ANA, ROOM, "Hello, room"),
    (17, BUTTON, ANA, ANA, "action=buy&itemId=2"), (18, BUTTON, ANA, ANA, "action=buy&itemId=3"),
    (19, BUTTON, ANA, ANA, "action=buy&itemId=4"), (20, NO_SENDER, None, GROUP, None),
    (21, NO_SENDER, None, GROUP, None), (22, NON_TEXT, ANA, ANA, None), (23, USER_EVENT, ANA, GROUP, None),
    (24, USER_EVENT, ANA, ANA, None), (25, NON_TEXT, ANA, ANA, None), (26, TEXT, ANA, ANA, "Hello again"),
    (27, EDIT, ANA, ANA, "Hello, edited world"), (28, USER_EVENT, ANA, ANA, None),
]
EXPECTED = {
    "sdk_every_event": tuple(env(n, i, k, s, c, t) for i, (n, k, s, c, t) in enumerate(SDK)),
    "account_events": (env(41, 0, NO_SENDER, chat=ANA), env(42, 1, NO_SENDER, chat=ANA), env(43, 2, NO_SENDER, chat=ANA),
                       env(50, 3, NO_SENDER), env(51, 4, NO_SENDER), env(44, 5, NO_SENDER, chat=ANA),
                       env(45, 6, USER_EVENT, ANA, ANA), env(46, 7, USER_EVENT, ANA, ANA)),
    "group_without_user": (env(60, 0, NO_SENDER, chat=GROUP),),
    "mentions_and_emoji": (env(47, 0, TEXT, ANA, GROUP, "\U0001f600   $ @billing please"),
                           env(48, 1, TEXT, BEN, GROUP, "meeting moved")),
}


def test_every_sample_has_an_expectation():
    assert sorted(realworld.names(CH)) == sorted([*EXPECTED, "verify"])


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_real_world_shapes(name):
    assert ADAPTER.parse(realworld.body(CH, name), [], CH) == EXPECTED[name]


def test_message_edited_is_an_edit_with_its_new_text():
    """LINE's `messageEdited` (line-bot-sdk's MessageEditedEvent): the new text, never a switch."""
    edited = ADAPTER.parse(realworld.body(CH, "sdk_every_event"), [], CH)[26]
    assert (edited.kind, edited.sender_id, edited.text) == (EDIT, ANA, "Hello, edited world")


@pytest.mark.parametrize("name", realworld.names(CH))
def test_line_bot_sdk_accepts_every_signed_sample_and_only_verify_is_a_handshake(name):
    body = realworld.body(CH, name)
    signature = line_signature(body, SECRET)
    request = Request("POST", b"", [(b"x-line-signature", signature.encode())], body)
    events = WebhookParser(SECRET).parse(body.decode(), signature)
    assert ADAPTER.authenticate(CHANNEL, request, 0.0)
    reply = ADAPTER.handshake(CHANNEL, request, 0.0)
    assert (reply is not None) == (name == "verify") == (events == [])


def test_the_sdk_batch_split_three_ways_is_accepted_part_by_part_by_line_bot_sdk():
    body = realworld.body(CH, "sdk_every_event")
    envelopes = ADAPTER.parse(body, [], CH)
    owners = ("general", "billing", "support")
    paths = {agent: [e.item_path for i, e in enumerate(envelopes) if i % 3 == n] for n, agent in enumerate(owners)}
    parts = ADAPTER.split(CHANNEL, body, paths)
    for n, agent in enumerate(owners):
        (signature,) = [value for name, value in parts[agent].add if name == b"x-line-signature"]
        events = WebhookParser(SECRET).parse(parts[agent].body.decode(), signature.decode())
        assert [e.webhook_event_id for e in events] == [e.delivery_id for i, e in enumerate(envelopes) if i % 3 == n]
