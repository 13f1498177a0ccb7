"""Messenger and Instagram adapters on payload shapes from chatwoot/chatwoot (Instagram factories),
howdyai/botkit (Facebook adapter tests), botpress/botpress (Page feed changes) and Meta's webhook
references, re-created with invented ids (`tests/channels/realworld.py`): every item's envelope,
X-Hub-Signature-256 (written again here), and a mixed batch split into re-signed parts."""

from __future__ import annotations

import hashlib
import hmac
import json

import pytest

from stickyroute.channels import ADAPTERS, Request
from stickyroute.config.model import Channel, ChannelType
from stickyroute.errors import UnparsedUpdate
from stickyroute.routing.envelope import Envelope, MessageKind
from tests.channels import realworld

CH = "messenger"
SECRET = "fake_app_secret_0002"
ADAPTER = ADAPTERS[ChannelType.MESSENGER]
CHANNEL = Channel(CH, ChannelType.MESSENGER, ("/messenger",), "general", app_secret=SECRET, verify_token="VT-2")
TEXT, NON_TEXT, EDIT, BUTTON = MessageKind.TEXT, MessageKind.NON_TEXT, MessageKind.EDIT, MessageKind.BUTTON
STATUS, USER_EVENT, NO_SENDER = MessageKind.STATUS, MessageKind.USER_EVENT, MessageKind.NO_SENDER
PSID, PSID2, IGSID, T = "7100000000000001", "7100000000000002", "6100000000000001", 1767700000000
M, S, C = (0, "messaging", 0), (0, "standby", 0), (0, "changes", 0)


def env(kind, delivery, person=None, text=None, path=M) -> Envelope:
    return Envelope(channel=CH, kind=kind, delivery_id=delivery, sender_id=person, chat_id=person, text=text,
                    sender_aliases=(person,) if person else (), item_path=path)


EXPECTED = {
    "text": (env(TEXT, "m_rw1", PSID, "hello"),),
    "echo_with_app_id": (env(USER_EVENT, "m_rw2", PSID),),
    "quick_reply": (env(BUTTON, "m_rw3", PSID, "COLOR_RED"),),
    "sticker_attachment": (env(NON_TEXT, "mid.$rw4", PSID),),
    "postback_with_referral": (env(BUTTON, f"postback:{PSID}:{T}", PSID, "GET_STARTED"),),
    "read": (env(STATUS, f"read:{PSID}:{T - 1000}", PSID),),
    "delivery": (env(STATUS, f"delivery:{PSID}:{T - 1000}", PSID),),
    "reaction": (env(NON_TEXT, f"reaction:{PSID}:m_rw2:react:love:{T}", PSID),),
    "referral_chat_plugin_guest": (env(USER_EVENT, f"referral:uref_rw1:{T}", "uref_rw1"),),
    "optin_user_ref": (env(USER_EVENT, f"optin:uref_rw2:{T}", "uref_rw2"),),
    "optin_notification_messages": (env(USER_EVENT, f"optin:{PSID}:{T}", PSID),),
    "pass_thread_control": (env(USER_EVENT, f"pass_thread_control:{PSID}:{T}", PSID),),
    "app_roles": (env(NO_SENDER, None),),
    "standby_message": (env(TEXT, "m_rw6", PSID, "hello while another app has the thread", S),),
    "message_edit": (env(EDIT, "edit:m_rw1:1", PSID, "hello, edited"),),
    "ig_text": (env(TEXT, "aWdfrw1", IGSID, "hi"),),
    "ig_story_mention": (env(NON_TEXT, "aWdfrw2", IGSID),),
    "ig_story_reply": (env(TEXT, "aWdfrw3", IGSID, "love it"),),
    "ig_unsend": (env(EDIT, "deleted:aWdfrw3", IGSID),),
    "ig_seen": (env(STATUS, f"read:{IGSID}:aWdfrw3", IGSID),),
    "ig_echo": (env(USER_EVENT, "aWdfrw4", IGSID),),
    "ig_standby_string_times": (env(TEXT, "aWdfrw5", "6100000000000002", "after 24 hours", S),),
    "ig_dashboard_test": (env(TEXT, "random_mid", "12334", "random_text", C),),
    "ig_comment": (env(TEXT, "comment:18000000000000003", IGSID, "@billing what does it cost?", C),),
    "ig_own_comment": (env(NO_SENDER, "comment:18000000000000004", path=C),),
    "ig_mention": (env(NO_SENDER, None, path=C),),
    "page_feed_comment": (env(USER_EVENT, None, "5000000000000001", path=C),),
    "botkit_without_object": (env(TEXT, None, "1", "Hello!"),),
    "botkit_postback_without_object": (env(BUTTON, None, "1", "Hello!"),),
    "mixed_batch": (env(TEXT, "m_rw7", PSID, "@billing my refund"),
                    env(TEXT, "m_rw8", PSID2, "opening hours please", (1, "messaging", 0)),
                    env(USER_EVENT, "m_rw9", PSID, path=(2, "messaging", 0)),
                    env(STATUS, f"read:{PSID}:{T}", PSID, path=(3, "messaging", 0))),
}


def test_every_sample_has_an_expectation():
    assert sorted(realworld.names("meta")) == sorted([*EXPECTED, "whatsapp_object"])


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_real_world_shapes(name):
    body = realworld.body("meta", name)
    envelopes = ADAPTER.parse(body, [], CH)
    assert envelopes == EXPECTED[name]
    assert envelopes == ADAPTERS[ChannelType.INSTAGRAM].parse(body, [], CH)


def test_a_body_of_another_meta_product_is_unparsed():
    with pytest.raises(UnparsedUpdate):
        ADAPTER.parse(realworld.body("meta", "whatsapp_object"), [], CH)


def test_the_accounts_own_comment_is_never_scored():
    """An Instagram comment written by the account itself (`from.id` is the entry's id: an agent's
    public reply) names no person: no route is read or written for it, `@general` in it is no switch."""
    (own,) = ADAPTER.parse(realworld.body("meta", "ig_own_comment"), [], CH)
    assert (own.kind, own.has_sender, own.text) == (NO_SENDER, False, None)


def test_a_body_without_object_is_read_like_meta_sends_it():
    """howdyai/botkit's Facebook tests post `{"entry": [...]}` without `object`: read, not unparsed."""
    (item,) = ADAPTER.parse(realworld.body("meta", "botkit_without_object"), [], CH)
    assert (item.kind, item.sender_id, item.text) == (TEXT, "1", "Hello!")


def independent_signature(body: bytes) -> str:
    return "sha256=" + hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()


@pytest.mark.parametrize("name", realworld.names("meta"))
def test_signatures_hold_and_posts_are_no_handshake(name):
    body = realworld.body("meta", name)
    request = Request("POST", b"", [(b"x-hub-signature-256", independent_signature(body).encode())], body)
    assert ADAPTER.authenticate(CHANNEL, request, 0.0)
    assert not ADAPTER.authenticate(CHANNEL, Request("POST", b"", request.headers, body + b" "), 0.0)
    assert ADAPTER.handshake(CHANNEL, request, 0.0) is None


def test_the_mixed_batch_split_per_person_into_re_signed_parts():
    body = realworld.body("meta", "mixed_batch")
    envelopes = ADAPTER.parse(body, [], CH)
    paths = {"billing": [e.item_path for e in envelopes if e.sender_id == PSID],
             "general": [e.item_path for e in envelopes if e.sender_id == PSID2]}
    parts = ADAPTER.split(CHANNEL, body, paths)
    for agent, mids in (("billing", ["m_rw7", "m_rw9", None]), ("general", ["m_rw8"])):
        part = parts[agent]
        assert part.drop == frozenset({b"x-hub-signature-256"})
        assert part.add == [(b"x-hub-signature-256", independent_signature(part.body).encode())]
        items = [item for entry in json.loads(part.body)["entry"] for item in entry["messaging"]]
        assert [item.get("message", {}).get("mid") for item in items] == mids
