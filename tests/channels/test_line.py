"""LINE adapter: shipped samples and documented events, X-Line-Signature (checked against
line-bot-sdk's WebhookParser), the Verify handshake, batches split per agent and re-signed."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from linebot.v3 import WebhookParser
from linebot.v3.exceptions import InvalidSignatureError

from stickyroute.channels import ADAPTERS, Request, SplitError
from stickyroute.channels.line import parse, split_body, without_mentions
from stickyroute.channels.security import line_signature
from stickyroute.config.model import Channel, ChannelType
from stickyroute.errors import UnparsedUpdate
from stickyroute.routing.envelope import Envelope, MessageKind

PAYLOADS = Path(__file__).resolve().parent / "payloads" / "line"
CH = "line"
SECRET = "fake_line_channel_secret_0001"
ADAPTER = ADAPTERS[ChannelType.LINE]
CHANNEL = Channel(CH, ChannelType.LINE, ("/line",), "general", channel_secret=SECRET)
OPEN = Channel(CH, ChannelType.LINE, ("/line",), "general")
TEXT, NON_TEXT, BUTTON = MessageKind.TEXT, MessageKind.NON_TEXT, MessageKind.BUTTON
USER_EVENT, NO_SENDER = MessageKind.USER_EVENT, MessageKind.NO_SENDER
U1 = "U1234567890abcdef1234567890abcdef"
U2 = "U2234567890abcdef1234567890abcdef"
GROUP = "C0123456789abcdef0123456789abcdef"
EVENT = "01JFAKEWEBHOOKEVENT0000000"


def env(kind, delivery, sender=None, chat=None, text=None, path=(0,)) -> Envelope:
    return Envelope(channel=CH, kind=kind, delivery_id=delivery, sender_id=sender, chat_id=chat, text=text,
                    sender_aliases=(sender,) if sender else (), item_path=path)


def sample(name: str) -> bytes:
    return (PAYLOADS / name).read_bytes()


SHIPPED = [
    ("text_user.json", (env(TEXT, f"{EVENT}1", U1, U1, "How late are you open today?"),)),
    ("group_mention.json", (env(TEXT, f"{EVENT}2", U2, GROUP, "please book the meeting room"),)),
    ("quoted_reply.json", (env(TEXT, f"{EVENT}3", U1, U1, "yes, this one"),)),
    ("postback.json", (env(BUTTON, f"{EVENT}4", U1, U1, "action=confirm&booking=7781"),)),
    ("batched_two_events.json", (env(TEXT, f"{EVENT}5", U1, U1, "first question"),
                                 env(USER_EVENT, f"{EVENT}6", U2, U2, path=(1,)))),
    ("verify_empty.json", (env(NO_SENDER, None, path=()),)),
]


@pytest.mark.parametrize(("name", "expected"), SHIPPED, ids=[s[0] for s in SHIPPED])
def test_shipped_samples(name, expected):
    assert parse(sample(name), CH) == expected


def body_of(*events: dict) -> bytes:
    return json.dumps({"destination": "Ubot", "events": list(events)}).encode()


def event(kind: str, source: dict | None = None, **fields) -> dict:
    return {"type": kind, "mode": "active", "timestamp": 1767600000000, "webhookEventId": "E1",
            "deliveryContext": {"isRedelivery": False},
            "source": source if source is not None else {"type": "user", "userId": "U1"}, **fields}


GROUP_NO_USER = {"type": "group", "groupId": "C1"}
DOCUMENTED = [
    pytest.param(event("message", message={"type": "image", "id": "1", "contentProvider": {"type": "line"}}),
                 env(NON_TEXT, "E1", "U1", "U1"), id="image"),
    pytest.param(event("message", message={"type": "sticker", "id": "1", "packageId": "1", "stickerId": "1"}),
                 env(NON_TEXT, "E1", "U1", "U1"), id="sticker"),
    pytest.param(event("message", {"type": "room", "roomId": "R1", "userId": "U1"},
                       message={"type": "text", "id": "1", "text": "@billing where is my refund?"}),
                 env(TEXT, "E1", "U1", "R1", "@billing where is my refund?"), id="typed-agent-mention-kept"),
    pytest.param(event("message", {"type": "group", "groupId": "C1", "userId": "U1"},
                       message={"type": "text", "id": "1", "text": "@billing @All please check",
                                "mention": {"mentionees": [{"index": 0, "length": 8, "type": "user", "userId": "U9"},
                                                           {"index": 9, "length": 4, "type": "all"}]}}),
                 env(TEXT, "E1", "U1", "C1", "please check"), id="line-user-named-billing-is-not-an-agent"),
    pytest.param(event("message", {"type": "group", "groupId": "C1", "userId": "U1"},
                       message={"type": "text", "id": "1", "text": "\U0001f34e @Dana hi",
                                "mention": {"mentionees": [{"index": 3, "length": 5, "type": "user"}]}}),
                 env(TEXT, "E1", "U1", "C1", "\U0001f34e  hi"), id="mention-after-an-emoji-counts-utf16"),
    pytest.param(event("message", GROUP_NO_USER, message={"type": "text", "id": "1", "text": "hello"}),
                 env(NO_SENDER, "E1", chat="C1"), id="group-message-without-user"),
    pytest.param(event("follow", replyToken="r", follow={"isUnblocked": True}), env(USER_EVENT, "E1", "U1", "U1"),
                 id="follow"),
    pytest.param(event("unfollow"), env(USER_EVENT, "E1", "U1", "U1"), id="unfollow"),
    pytest.param(event("unsend", unsend={"messageId": "325708"}), env(USER_EVENT, "E1", "U1", "U1"), id="unsend"),
    pytest.param(event("join", GROUP_NO_USER, replyToken="r"), env(NO_SENDER, "E1", chat="C1"), id="join"),
    pytest.param(event("memberJoined", GROUP_NO_USER, joined={"members": [{"type": "user", "userId": "U4"}]}),
                 env(NO_SENDER, "E1", chat="C1"), id="member-joined"),
    pytest.param(event("videoPlayComplete", videoPlayComplete={"trackingId": "t"}),
                 env(USER_EVENT, "E1", "U1", "U1"), id="video-play-complete"),
    pytest.param(event("beacon", beacon={"hwid": "d41d8cd98f", "type": "enter"}), env(USER_EVENT, "E1", "U1", "U1"),
                 id="beacon"),
    pytest.param(event("accountLink", link={"result": "ok", "nonce": "n"}), env(USER_EVENT, "E1", "U1", "U1"),
                 id="account-link"),
    pytest.param(event("membership", membership={"type": "joined", "membershipId": 3}),
                 env(USER_EVENT, "E1", "U1", "U1"), id="membership"),
    pytest.param({"type": "activated", "mode": "active", "timestamp": 1, "webhookEventId": "E1",
                  "chatControl": {"expireAt": 1}}, env(NO_SENDER, "E1"), id="activated-no-source"),
    pytest.param(event("botSuspended"), env(NO_SENDER, "E1", chat="U1"), id="bot-suspended"),
    pytest.param(event("somethingNew"), env(USER_EVENT, "E1", "U1", "U1"), id="unknown-with-user"),
    pytest.param({"what": 1}, env(NO_SENDER, None), id="unknown-without-anything"),
]


@pytest.mark.parametrize(("item", "expected"), DOCUMENTED)
def test_documented_events(item, expected):
    assert parse(body_of(item), CH) == (expected,)


@pytest.mark.parametrize("body", [b"{", b"[]", b'{"destination": "U"}', b'{"events": {}}'])
def test_unreadable_bodies_are_unparsed(body):
    with pytest.raises(UnparsedUpdate):
        parse(body, CH)


@pytest.mark.parametrize(("text", "mentionees", "expected"), [
    ("@a b", [{"index": 0, "length": 2}], "b"),
    ("x @a", [{"index": 5, "length": 2}], "x @a"),
    ("x @a", [{"index": 0, "length": 2}], "x @a"),
    ("@a @b", [{"index": 3, "length": 2}, {"index": 0, "length": 2}], ""),
    ("@a", [{"index": True, "length": 2}, {"index": 0, "length": -1}], "@a"),
])
def test_mention_spans(text, mentionees, expected):
    assert without_mentions(text, mentionees) == expected


# --- signatures -----------------------------------------------------------------------------------

SIGNATURES = {"text_user.json": "N+kL9ryNFPW9eILpFkv2EuhIw07u6FkIxr9R8R/JbYg=",
              "batched_two_events.json": "3R+jrF+M+3iGUYy5wnKFFhOOI74sRS/oMW6xbH5RLc8="}


def request(body: bytes, signature: str | None) -> Request:
    headers = [(b"x-line-signature", signature.encode())] if signature is not None else []
    return Request("POST", b"", headers, body)


@pytest.mark.parametrize(("name", "signature"), SIGNATURES.items())
def test_the_shipped_signatures_hold_here_and_in_line_bot_sdk(name, signature):
    body = sample(name)
    assert line_signature(body, SECRET) == signature
    assert ADAPTER.authenticate(CHANNEL, request(body, signature), 0.0)
    assert len(WebhookParser(SECRET).parse(body.decode(), signature)) == len(parse(body, CH))


@pytest.mark.parametrize("signature", [None, "", "not base64!", line_signature(b"other", SECRET),
                                       line_signature(sample("text_user.json"), "other-secret")])
def test_bad_or_missing_signatures_fail(signature):
    assert not ADAPTER.authenticate(CHANNEL, request(sample("text_user.json"), signature), 0.0)


def test_no_secret_accepts_everything():
    assert ADAPTER.authenticate(OPEN, request(sample("text_user.json"), None), 0.0)


# --- the Verify handshake -------------------------------------------------------------------------

def test_verify_is_answered_200_once_signed():
    body = sample("verify_empty.json")
    reply = ADAPTER.handshake(CHANNEL, request(body, line_signature(body, SECRET)), 0.0)
    assert reply is not None and (reply.status, reply.body) == (200, b"")


@pytest.mark.parametrize("signature", [None, "AAAA"])
def test_verify_with_a_bad_signature_is_not_answered(signature):
    req = request(sample("verify_empty.json"), signature)
    assert ADAPTER.handshake(CHANNEL, req, 0.0) is None
    assert not ADAPTER.authenticate(CHANNEL, req, 0.0)


@pytest.mark.parametrize("body", [sample("text_user.json"), b'{"events": [], "x": "' + b"y" * 5000 + b'"}', b"{"])
def test_other_bodies_are_no_handshake(body):
    assert ADAPTER.handshake(OPEN, request(body, None), 0.0) is None


# --- splits ---------------------------------------------------------------------------------------

def test_a_mixed_batch_splits_into_re_signed_parts_that_line_bot_sdk_accepts():
    body = sample("batched_two_events.json")
    original = json.loads(body)
    parts = ADAPTER.split(CHANNEL, body, {"billing": [(0,)], "support": [(1,)]})
    for agent, index in (("billing", 0), ("support", 1)):
        part = parts[agent]
        expected = {"destination": original["destination"], "events": [original["events"][index]]}
        assert part.body == json.dumps(expected, separators=(",", ":")).encode()
        assert part.drop == frozenset({b"x-line-signature"})
        [(name, signature)] = part.add
        assert name == b"x-line-signature"
        events = WebhookParser(SECRET).parse(part.body.decode(), signature.decode())
        assert [e.webhook_event_id for e in events] == [original["events"][index]["webhookEventId"]]
        with pytest.raises(InvalidSignatureError):
            WebhookParser(SECRET).parse(part.body.decode(), SIGNATURES["batched_two_events.json"])
    assert parse(parts["support"].body, CH) == (dataclasses.replace(parse(body, CH)[1], item_path=(0,)),)


def test_split_keeps_other_top_level_keys_in_place_and_non_ascii_escaped():
    body = json.dumps({"destination": "Ubot", "events": [event("message", message={"type": "text", "id": "1",
                                                                                    "text": "caf\u00e9"}),
                                                         event("follow")], "extra": 1}, ensure_ascii=False).encode()
    parts = split_body(body, {"a": [(1,)], "b": [(0,)]})
    assert json.loads(parts["a"]) == {"destination": "Ubot", "events": [event("follow")], "extra": 1}
    assert b"caf\\u00e9" in parts["b"] and list(json.loads(parts["b"])) == ["destination", "events", "extra"]


def test_without_a_secret_the_parts_drop_the_old_signature_and_add_none():
    parts = ADAPTER.split(OPEN, sample("batched_two_events.json"), {"a": [(0,)], "b": [(1,)]})
    assert [(p.drop, p.add) for p in parts.values()] == [(frozenset({b"x-line-signature"}), [])] * 2


@pytest.mark.parametrize("paths", [{"a": [(2,)]}, {"a": [(0,)], "b": [(0,)]}, {"a": [("0",)]}, {"a": [(0, 1)]},
                                   {"a": [(True,)]}, {"a": [()]}])
def test_impossible_splits_are_split_errors(paths):
    with pytest.raises(SplitError):
        ADAPTER.split(CHANNEL, sample("batched_two_events.json"), paths)


def test_a_batch_of_20000_events_splits_into_two_halves():
    events = [event("message", {"type": "user", "userId": f"U{i}"}, webhookEventId=f"E{i}",
                    message={"type": "text", "id": str(i), "text": "hi"}) for i in range(20_000)]
    body = body_of(*events)
    parts = split_body(body, {"even": [(i,) for i in range(0, 20_000, 2)], "odd": [(i,) for i in range(1, 20_000, 2)]})
    assert [len(json.loads(p)["events"]) for p in parts.values()] == [10_000, 10_000]
