"""Messenger and Instagram adapters: shipped samples and documented events, X-Hub-Signature-256
(the algorithm written again here, independently), GET verification, batches split and re-signed."""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import json
from pathlib import Path

import pytest

from stickyroute.channels import ADAPTERS, Request, SplitError
from stickyroute.channels.meta_messaging import parse
from stickyroute.channels.meta_split import split_body
from stickyroute.config.model import Channel, ChannelType
from stickyroute.errors import UnparsedUpdate
from stickyroute.routing.envelope import Envelope, MessageKind

PAYLOADS = Path(__file__).resolve().parent / "payloads" / "messenger"
CH = "messenger"
SECRET = "fake_app_secret_0001"
MESSENGER = ADAPTERS[ChannelType.MESSENGER]
INSTAGRAM = ADAPTERS[ChannelType.INSTAGRAM]
CHANNEL = Channel(CH, ChannelType.MESSENGER, ("/messenger",), "general", app_secret=SECRET, verify_token="VT-1")
OPEN = Channel(CH, ChannelType.MESSENGER, ("/messenger",), "general")
TEXT, NON_TEXT, EDIT, BUTTON = MessageKind.TEXT, MessageKind.NON_TEXT, MessageKind.EDIT, MessageKind.BUTTON
STATUS, USER_EVENT, NO_SENDER = MessageKind.STATUS, MessageKind.USER_EVENT, MessageKind.NO_SENDER
PSID = "7000000000000001"
MID = "m_FAKEmid000000000000000000000000000000000000"


def env(kind, delivery, person=None, text=None, path=(0, "messaging", 0)) -> Envelope:
    return Envelope(channel=CH, kind=kind, delivery_id=delivery, sender_id=person, chat_id=person, text=text,
                    sender_aliases=(person,) if person else (), item_path=path)


def sample(name: str) -> bytes:
    return (PAYLOADS / name).read_bytes()


def independent_signature(body: bytes, secret: str = SECRET) -> str:
    """Meta's algorithm, written here on its own: sha256= + hex HMAC-SHA256 of the raw bytes."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


SHIPPED = [
    ("text.json", env(TEXT, f"{MID}1", PSID, "Do you deliver on Sundays?")),
    ("reply_to.json", env(TEXT, f"{MID}2", PSID, "this one please")),
    ("quick_reply.json", env(BUTTON, f"{MID}3", PSID, "TRACK_ORDER")),
    ("postback.json", env(BUTTON, f"postback:{MID}4", PSID, "BILLING")),
    ("echo.json", env(USER_EVENT, f"{MID}5", PSID)),
    ("instagram_dm.json", env(TEXT, "aWdfZAG1faXRlbToxOklHTWVzc2FnZAUlEOkZBS0UwMDAwMDAwMDAwMQ", "9000000000000001",
                              "Is the red one back in stock?")),
]


@pytest.mark.parametrize(("name", "expected"), SHIPPED, ids=[s[0] for s in SHIPPED])
def test_shipped_samples(name, expected):
    assert parse(sample(name), CH) == (expected,)
    adapter = INSTAGRAM if name.startswith("instagram") else MESSENGER
    assert adapter.parse(sample(name), [], CH) == (expected,)


def body_of(*items: dict, obj: str = "page", key: str = "messaging") -> bytes:
    return json.dumps({"object": obj, "entry": [{"id": "P1", "time": 1, key: list(items)}]}).encode()


def item(**event) -> dict:
    return {"sender": {"id": "U1"}, "recipient": {"id": "P1"}, "timestamp": 1458668856463, **event}


DOCUMENTED = [
    pytest.param(item(message={"mid": "m1", "attachments": [{"type": "image", "payload": {"url": "https://x"}}]}),
                 env(NON_TEXT, "m1", "U1"), id="attachment-only"),
    pytest.param(item(message={"mid": "m1", "text": "hi", "is_echo": True, "app_id": 1},
                      sender={"id": "P1"}, recipient={"id": "U1"}),
                 env(USER_EVENT, "m1", "U1"), id="echo-follows-the-person"),
    pytest.param(item(message={"mid": "m1", "is_deleted": True}), env(EDIT, "deleted:m1", "U1"),
                 id="instagram-unsend"),
    pytest.param(item(message_edit={"mid": "m1", "text": "fixed", "num_edit": 2}), env(EDIT, "edit:m1:2", "U1",
                                                                                       "fixed"), id="message-edit"),
    pytest.param(item(postback={"title": "Start", "payload": "GET_STARTED"}),
                 env(BUTTON, "postback:U1:1458668856463", "U1", "GET_STARTED"), id="postback-without-mid"),
    pytest.param(item(reaction={"reaction": "love", "emoji": "\u2764", "action": "react", "mid": "m0"}),
                 env(NON_TEXT, "reaction:U1:m0:react:love:1458668856463", "U1"), id="reaction"),
    pytest.param(item(read={"watermark": 1458668856253}), env(STATUS, "read:U1:1458668856253", "U1"),
                 id="messenger-read"),
    pytest.param(item(read={"mid": "m0"}), env(STATUS, "read:U1:m0", "U1"), id="instagram-seen"),
    pytest.param(item(delivery={"mids": ["m0"], "watermark": 1458668856253}),
                 env(STATUS, "delivery:U1:1458668856253", "U1"), id="delivery"),
    pytest.param(item(referral={"ref": "ad1", "source": "ADS", "type": "OPEN_THREAD"}),
                 env(USER_EVENT, "referral:U1:1458668856463", "U1"), id="referral"),
    pytest.param(item(sender={"user_ref": "UR1"}, optin={"ref": "x", "user_ref": "UR1"}),
                 env(USER_EVENT, "optin:UR1:1458668856463", "UR1"), id="optin-with-a-user-ref"),
    pytest.param({"recipient": {"id": "P1"}, "timestamp": 5, "optin": {"type": "one_time_notif_req",
                                                                       "user_ref": "UR2"}},
                 env(USER_EVENT, "optin:UR2:5", "UR2"), id="optin-with-only-its-user-ref"),
    pytest.param(item(sender={"user_ref": "G1"}, message={"mid": "m1", "text": "from the chat plugin"}),
                 env(TEXT, "m1", "G1", "from the chat plugin"), id="chat-plugin-guest"),
    pytest.param(item(pass_thread_control={"new_owner_app_id": "123", "metadata": "x"}),
                 env(USER_EVENT, "pass_thread_control:U1:1458668856463", "U1"), id="handover"),
    pytest.param({"recipient": {"id": "P1"}, "timestamp": 5, "app_roles": {"123": ["primary_receiver"]}},
                 env(NO_SENDER, None), id="app-roles-without-sender"),
    pytest.param(item(future_event={"x": 1}), env(USER_EVENT, "future_event:U1:1458668856463", "U1"),
                 id="unknown-kind"),
    pytest.param(item(message={"mid": "m1", "text": "hi"}, timestamp=None, sender={"id": 12345}),
                 env(TEXT, "m1", "12345", "hi"), id="numeric-sender"),
]


@pytest.mark.parametrize(("event", "expected"), DOCUMENTED)
def test_documented_messaging_events(event, expected):
    assert parse(body_of(event), CH) == (expected,)


def test_standby_items_are_read_like_messaging():
    assert parse(body_of(item(message={"mid": "m1", "text": "hi"}), key="standby"), CH) == (
        env(TEXT, "m1", "U1", "hi", (0, "standby", 0)),)


def change(field: str, value: dict) -> dict:
    return {"field": field, "value": value}


CHANGES = [
    pytest.param(change("messages", {"sender": {"id": "12334"}, "recipient": {"id": "23245"},
                                     "timestamp": "1527459824", "message": {"mid": "random_mid", "text": "random_text"}}),
                 env(TEXT, "random_mid", "12334", "random_text", (0, "changes", 0)), id="dashboard-test-message"),
    pytest.param(change("comments", {"id": "17865799348089039", "from": {"id": "IGSID1", "username": "ana"},
                                     "text": "how much is this?", "media": {"id": "M1"}}),
                 env(TEXT, "comment:17865799348089039", "IGSID1", "how much is this?", (0, "changes", 0)),
                 id="comment"),
    pytest.param(change("mentions", {"media_id": "M1", "comment_id": "C1"}), env(NO_SENDER, None,
                                                                                  path=(0, "changes", 0)),
                 id="mention-of-the-account"),
    pytest.param(change("message_reactions", {"sender": {"id": "U1"}, "recipient": {"id": "P1"}, "timestamp": 7,
                                              "reaction": {"mid": "m0", "action": "unreact"}}),
                 env(NON_TEXT, "reaction:U1:m0:unreact::7", "U1", path=(0, "changes", 0)), id="reaction-change"),
    pytest.param(change("story_insights", {"media_id": "M1", "impressions": 44}),
                 env(NO_SENDER, None, path=(0, "changes", 0)), id="unknown-field"),
]


@pytest.mark.parametrize(("entry_change", "expected"), CHANGES)
def test_instagram_changes_form(entry_change, expected):
    assert parse(body_of(entry_change, obj="instagram", key="changes"), CH) == (expected,)


def test_every_entry_and_item_is_read_and_empty_ones_are_kept_apart():
    body = json.dumps({"object": "page", "entry": [
        {"id": "P1", "time": 1, "messaging": [item(message={"mid": "a", "text": "one"}),
                                              item(message={"mid": "b", "text": "two"}, sender={"id": "U2"})]},
        {"id": "P1", "time": 1},
        {"id": "P2", "time": 1, "messaging": [], "standby": [item(read={"watermark": 3})]},
    ]}).encode()
    assert parse(body, CH) == (env(TEXT, "a", "U1", "one"), env(TEXT, "b", "U2", "two", (0, "messaging", 1)),
                               env(NO_SENDER, None, path=(1,)), env(STATUS, "read:U1:3", "U1", path=(2, "standby", 0)))
    assert parse(b'{"object": "page", "entry": []}', CH) == (env(NO_SENDER, None, path=()),)


@pytest.mark.parametrize("body", [b"{", b"[]", b'{"object": "whatsapp_business_account", "entry": []}',
                                  b'{"object": "page"}', b'{"object": "page", "entry": {}}',
                                  b'{"object": ["page"], "entry": []}', b'{"object": {"page": 1}, "entry": []}'])
def test_unreadable_bodies_are_unparsed(body):
    with pytest.raises(UnparsedUpdate):
        parse(body, CH)


# --- signatures and verification ------------------------------------------------------------------

def request(body: bytes, signature: str | None, method: str = "POST", query: bytes = b"") -> Request:
    headers = [(b"x-hub-signature-256", signature.encode())] if signature is not None else []
    return Request(method, query, headers, body)


@pytest.mark.parametrize("adapter", [MESSENGER, INSTAGRAM])
def test_the_shipped_signature_holds(adapter):
    body = sample("text.json")
    expected = "sha256=0ac9709723cc7c2974ae9f4da71cf70610d6d52f16998cd75b5eae426217c472"
    assert independent_signature(body) == expected
    assert adapter.authenticate(CHANNEL, request(body, expected), 0.0)


@pytest.mark.parametrize("signature", [None, "sha256=" + "0" * 64, independent_signature(b"x"), "0ac97"])
def test_bad_or_missing_signatures_fail(signature):
    assert not MESSENGER.authenticate(CHANNEL, request(sample("text.json"), signature), 0.0)
    assert MESSENGER.authenticate(OPEN, request(sample("text.json"), signature), 0.0)


@pytest.mark.parametrize(("token", "status", "body"), [("VT-1", 200, b"1158201444"), ("nope", 403, b"forbidden")])
def test_get_verification_is_answered_by_the_proxy(token, status, body):
    query = f"hub.mode=subscribe&hub.verify_token={token}&hub.challenge=1158201444".encode()
    req = request(b"", None, "GET", query)
    assert INSTAGRAM.authenticate(CHANNEL, req, 0.0)
    reply = INSTAGRAM.handshake(CHANNEL, req, 0.0)
    assert reply is not None and (reply.status, reply.body) == (status, body)


# --- splits ---------------------------------------------------------------------------------------

def two_people() -> bytes:
    return json.dumps({"object": "page", "entry": [
        {"id": "P1", "time": 1, "messaging": [item(message={"mid": "a", "text": "caf\u00e9 open?"})]},
        {"id": "P1", "time": 2, "messaging": [item(message={"mid": "b", "text": "refund"}, sender={"id": "U2"})],
         "standby": [item(read={"watermark": 3})]},
    ]}, ensure_ascii=False).encode()


def test_a_mixed_batch_splits_per_agent_and_each_part_is_re_signed():
    body = two_people()
    paths = {"billing": [(1, "messaging", 0)], "support": [(0, "messaging", 0), (1, "standby", 0)]}
    parts = MESSENGER.split(CHANNEL, body, paths)
    original = json.loads(body)
    billing = {"object": "page", "entry": [{"id": "P1", "time": 2, "messaging": original["entry"][1]["messaging"]}]}
    support = {"object": "page", "entry": [original["entry"][0],
                                           {"id": "P1", "time": 2, "standby": original["entry"][1]["standby"]}]}
    assert json.loads(parts["billing"].body) == billing and json.loads(parts["support"].body) == support
    assert b"caf\\u00e9" in parts["support"].body
    for part in parts.values():
        assert part.drop == frozenset({b"x-hub-signature-256"})
        assert part.add == [(b"x-hub-signature-256", independent_signature(part.body).encode())]
    envelopes = parse(body, CH)
    assert parse(parts["billing"].body, CH) == (dataclasses.replace(envelopes[1], item_path=(0, "messaging", 0)),)


def test_split_keeps_entries_without_items_with_their_owner():
    body = json.dumps({"object": "page", "entry": [{"id": "P1"}, {"id": "P2", "messaging": [item(read={"mid": "x"})]}]})
    parts = split_body(body.encode(), {"a": [(0,)], "b": [(1, "messaging", 0)]})
    assert json.loads(parts["a"])["entry"] == [{"id": "P1"}]
    assert [e["id"] for e in json.loads(parts["b"])["entry"]] == ["P2"]


@pytest.mark.parametrize("paths", [
    {"a": [(0, "messaging", 5)]}, {"a": [(0, "messaging", 0)], "b": [(0, "messaging", 0)]},
    {"a": [(0,)]}, {"a": [(9,)]}, {"a": [(0, "changes", 0)]}, {"a": [()]}, {"a": [(0, "messaging", "0")]},
])
def test_impossible_splits_are_split_errors(paths):
    with pytest.raises(SplitError):
        MESSENGER.split(CHANNEL, two_people(), paths)
