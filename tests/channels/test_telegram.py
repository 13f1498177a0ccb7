"""Telegram adapter: shipped payloads, every Update kind, field reports T9, T18, T20, T25."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stickyroute.channels import telegram
from stickyroute.errors import UnparsedUpdate
from stickyroute.routing.envelope import Envelope, MessageKind

PAYLOADS = Path(__file__).resolve().parent / "payloads" / "telegram"
CH = "tg"

TEXT, NON_TEXT, EDIT = MessageKind.TEXT, MessageKind.NON_TEXT, MessageKind.EDIT
BUTTON, NO_SENDER = MessageKind.BUTTON, MessageKind.NO_SENDER

ANA = {"id": 111, "is_bot": False, "first_name": "Ana"}
BOT = {"id": 999, "is_bot": True, "first_name": "MyBot", "username": "MyBot"}
GROUP = {"id": -1001000000001, "type": "supergroup", "title": "G"}
PRIVATE = {"id": 111, "type": "private", "first_name": "Ana"}
CHANNEL = {"id": -1002000000001, "type": "channel", "title": "News"}


def env(kind, update_id, sender=None, chat=None, thread=None, text=None) -> Envelope:
    """Expected Telegram envelope: aliases are (sender,), item_path is empty."""
    return Envelope(
        channel=CH, kind=kind, delivery_id=str(update_id), sender_id=sender, chat_id=chat,
        thread_id=thread, text=text, sender_aliases=(sender,) if sender else (),
    )


def parse(update: dict) -> Envelope:
    (envelope,) = telegram.parse(json.dumps(update).encode(), CH)
    return envelope


SHIPPED = [
    ("text_private.json",
     env(TEXT, 905311201, "5123456789", "5123456789", text="Hi, my invoice for March looks wrong")),
    ("forum_topic_message.json",
     env(TEXT, 905311202, "5234567890", "-1002345678901", "4790",
         "Can the bot explain the late fee?")),
    ("group_mention.json",
     env(TEXT, 905311203, "5123456789", "-1003456789012",
         text="@acme_helper_bot summarise today's incidents please")),
    ("group_command.json",
     env(TEXT, 905311204, "5234567890", "-1003456789012",
         text="/ask@acme_helper_bot what is our SLA?")),
    ("callback_query.json", env(BUTTON, 905311205, "5123456789", "5123456789", text="plan:pro")),
    ("edited_message.json",
     env(EDIT, 905311206, "5123456789", "5123456789", text="Hi, my invoice for April looks wrong")),
    ("my_chat_member.json", env(NO_SENDER, 905311207, chat="-1003456789012")),
    ("channel_post.json",
     env(NO_SENDER, 905311208, chat="-1004567890123",
         text="Scheduled maintenance tonight 22:00 UTC")),
]


def test_every_shipped_payload_has_an_expected_envelope():
    assert sorted(p.name for p in PAYLOADS.glob("*.json")) == sorted(name for name, _ in SHIPPED)


@pytest.mark.parametrize(("name", "expected"), SHIPPED, ids=[name for name, _ in SHIPPED])
def test_shipped_payload(name, expected):
    assert telegram.parse((PAYLOADS / name).read_bytes(), CH) == (expected,)


MSG = {"message_id": 5, "date": 1700000000}

KINDS = [
    ("message_text", {"message": {**MSG, "from": ANA, "chat": PRIVATE, "text": "hi"}},
     env(TEXT, 1, "111", "111", text="hi")),
    ("message_caption", {"message": {**MSG, "from": ANA, "chat": PRIVATE, "photo": [{}],
                                     "caption": "look"}},
     env(TEXT, 1, "111", "111", text="look")),
    ("message_photo", {"message": {**MSG, "from": ANA, "chat": PRIVATE, "photo": [{}]}},
     env(NON_TEXT, 1, "111", "111")),
    ("message_voice", {"message": {**MSG, "from": ANA, "chat": PRIVATE, "voice": {}}},
     env(NON_TEXT, 1, "111", "111")),
    ("message_sticker", {"message": {**MSG, "from": ANA, "chat": GROUP, "sticker": {}}},
     env(NON_TEXT, 1, "111", "-1001000000001")),
    ("service_new_chat_members",
     {"message": {**MSG, "from": ANA, "chat": GROUP, "new_chat_members": [ANA]}},
     env(NON_TEXT, 1, "111", "-1001000000001")),
    ("edited_message", {"edited_message": {**MSG, "from": ANA, "chat": PRIVATE, "text": "fix",
                                           "edit_date": 1700000001}},
     env(EDIT, 1, "111", "111", text="fix")),
    ("edited_message_caption",
     {"edited_message": {**MSG, "from": ANA, "chat": PRIVATE, "caption": "new caption"}},
     env(EDIT, 1, "111", "111", text="new caption")),
    ("edited_message_no_text", {"edited_message": {**MSG, "from": ANA, "chat": PRIVATE}},
     env(EDIT, 1, "111", "111")),
    ("channel_post", {"channel_post": {**MSG, "sender_chat": CHANNEL, "chat": CHANNEL,
                                       "text": "news"}},
     env(NO_SENDER, 1, chat="-1002000000001", text="news")),
    ("edited_channel_post", {"edited_channel_post": {**MSG, "sender_chat": CHANNEL,
                                                     "chat": CHANNEL, "text": "news2"}},
     env(NO_SENDER, 1, chat="-1002000000001", text="news2")),
    ("business_message", {"business_message": {**MSG, "business_connection_id": "bc1",
                                               "from": ANA, "chat": PRIVATE, "text": "b"}},
     env(TEXT, 1, "111", "111", text="b")),
    ("edited_business_message",
     {"edited_business_message": {**MSG, "business_connection_id": "bc1", "from": ANA,
                                  "chat": PRIVATE, "text": "b2"}},
     env(EDIT, 1, "111", "111", text="b2")),
    ("guest_message", {"guest_message": {**MSG, "guest_query_id": "gq1", "from": ANA,
                                         "chat": GROUP, "text": "g"}},
     env(TEXT, 1, "111", "-1001000000001", text="g")),
    ("callback_query", {"callback_query": {"id": "cq", "from": ANA, "chat_instance": "ci",
                                           "message": {**MSG, "from": BOT, "chat": GROUP},
                                           "data": "opt"}},
     env(BUTTON, 1, "111", "-1001000000001", text="opt")),
    ("callback_query_inline_message",
     {"callback_query": {"id": "cq", "from": ANA, "inline_message_id": "im1",
                         "chat_instance": "ci", "data": "opt"}},
     env(BUTTON, 1, "111", None, text="opt")),
    ("callback_query_game", {"callback_query": {"id": "cq", "from": ANA, "chat_instance": "ci",
                                                "game_short_name": "g"}},
     env(BUTTON, 1, "111")),
    ("callback_query_in_topic",
     {"callback_query": {"id": "cq", "from": ANA, "chat_instance": "ci", "data": "x",
                         "message": {**MSG, "from": BOT, "chat": GROUP,
                                     "message_thread_id": 558, "is_topic_message": True}}},
     env(BUTTON, 1, "111", "-1001000000001", "558", "x")),
    ("inline_query", {"inline_query": {"id": "iq", "from": ANA, "query": "cats", "offset": ""}},
     env(NON_TEXT, 1, "111")),
    ("chosen_inline_result", {"chosen_inline_result": {"result_id": "r", "from": ANA,
                                                       "query": "cats"}},
     env(NON_TEXT, 1, "111")),
    ("poll", {"poll": {"id": "p", "question": "q?", "options": []}}, env(NO_SENDER, 1)),
    ("poll_answer", {"poll_answer": {"poll_id": "p", "user": ANA, "option_ids": [0]}},
     env(NON_TEXT, 1, "111")),
    ("poll_answer_anonymous_chat",
     {"poll_answer": {"poll_id": "p", "voter_chat": CHANNEL, "option_ids": [0]}},
     env(NO_SENDER, 1, chat="-1002000000001")),
    ("my_chat_member", {"my_chat_member": {"chat": GROUP, "from": ANA, "date": 1}},
     env(NO_SENDER, 1, chat="-1001000000001")),
    ("chat_member", {"chat_member": {"chat": GROUP, "from": ANA, "date": 1}},
     env(NO_SENDER, 1, chat="-1001000000001")),
    ("chat_join_request", {"chat_join_request": {"chat": GROUP, "from": ANA,
                                                 "user_chat_id": 111, "date": 1}},
     env(NO_SENDER, 1, chat="-1001000000001")),
    ("message_reaction", {"message_reaction": {"chat": GROUP, "message_id": 5, "user": ANA,
                                               "date": 1, "old_reaction": [],
                                               "new_reaction": []}},
     env(NON_TEXT, 1, "111", "-1001000000001")),
    ("message_reaction_anonymous",
     {"message_reaction": {"chat": GROUP, "message_id": 5, "actor_chat": GROUP, "date": 1}},
     env(NO_SENDER, 1, chat="-1001000000001")),
    ("message_reaction_count", {"message_reaction_count": {"chat": GROUP, "message_id": 5,
                                                           "date": 1, "reactions": []}},
     env(NO_SENDER, 1, chat="-1001000000001")),
    ("shipping_query", {"shipping_query": {"id": "s", "from": ANA, "invoice_payload": "p"}},
     env(NON_TEXT, 1, "111")),
    ("pre_checkout_query", {"pre_checkout_query": {"id": "pc", "from": ANA, "currency": "EUR",
                                                   "total_amount": 100}},
     env(NON_TEXT, 1, "111")),
    ("purchased_paid_media", {"purchased_paid_media": {"from": ANA, "paid_media_payload": "x"}},
     env(NON_TEXT, 1, "111")),
    ("chat_boost", {"chat_boost": {"chat": CHANNEL, "boost": {}}},
     env(NO_SENDER, 1, chat="-1002000000001")),
    ("removed_chat_boost", {"removed_chat_boost": {"chat": CHANNEL, "boost_id": "b"}},
     env(NO_SENDER, 1, chat="-1002000000001")),
    ("business_connection", {"business_connection": {"id": "bc1", "user": ANA,
                                                     "user_chat_id": 111, "is_enabled": True}},
     env(NO_SENDER, 1, chat="111")),
    ("deleted_business_messages",
     {"deleted_business_messages": {"business_connection_id": "bc1", "chat": PRIVATE,
                                    "message_ids": [1]}},
     env(NO_SENDER, 1, chat="111")),
    ("unknown_future_kind_with_chat", {"managed_bot": {"chat": GROUP, "from": ANA}},
     env(NO_SENDER, 1, chat="-1001000000001")),
    ("unknown_future_kind_scalar", {"shiny_new_thing": 42}, env(NO_SENDER, 1)),
    ("no_kind_at_all", {}, env(NO_SENDER, 1)),
    ("message_not_an_object", {"message": "oops"}, env(NO_SENDER, 1)),
    ("message_without_from_or_text", {"message": {**MSG, "chat": GROUP}},
     env(NO_SENDER, 1, chat="-1001000000001")),
    ("bot_sender_kept", {"message": {**MSG, "from": BOT, "chat": GROUP, "text": "beep"}},
     env(TEXT, 1, "999", "-1001000000001", text="beep")),
    ("anonymous_admin_sender_chat",
     {"message": {**MSG, "from": {"id": 1087968824, "is_bot": True,
                                  "first_name": "Group", "username": "GroupAnonymousBot"},
                  "sender_chat": GROUP, "chat": GROUP, "text": "/agent qa"}},
     env(TEXT, 1, "-1001000000001", "-1001000000001", text="/agent qa")),
    ("automatic_forward_from_linked_channel",
     {"message": {**MSG, "from": {"id": 777000, "is_bot": False, "first_name": "Telegram"},
                  "sender_chat": CHANNEL, "chat": GROUP, "is_automatic_forward": True,
                  "text": "news"}},
     env(NO_SENDER, 1, chat="-1001000000001", text="news")),
]


@pytest.mark.parametrize(("fields", "expected"), [k[1:] for k in KINDS], ids=[k[0] for k in KINDS])
def test_update_kind(fields, expected):
    assert parse({"update_id": 1, **fields}) == expected


def test_every_known_kind_is_in_the_table():
    tested = {key for _, fields, _ in KINDS for key in fields}
    assert set(telegram.KNOWN_KINDS) <= tested


def test_t9_channel_post_without_from():
    update = {"update_id": 9001, "channel_post": {
        "message_id": 1, "sender_chat": CHANNEL, "chat": CHANNEL, "date": 1700000000,
        "text": "hello"}}
    assert parse(update) == env(NO_SENDER, 9001, chat="-1002000000001", text="hello")
    assert parse(update).has_sender is False


def test_t9_my_chat_member_has_no_sender():
    update = {"update_id": 9002, "my_chat_member": {"chat": {"id": -1001000000001,
                                                             "type": "supergroup"},
                                                    "from": ANA, "date": 1700000000}}
    assert parse(update) == env(NO_SENDER, 9002, chat="-1001000000001")
    assert parse(update).has_sender is False


def test_t18_reply_chain_thread_id_is_not_a_topic():
    update = {"update_id": 1801, "message": {
        **MSG, "from": ANA, "chat": GROUP, "message_thread_id": 4242, "text": "re",
        "reply_to_message": {**MSG, "from": ANA, "chat": GROUP, "text": "root"}}}
    assert parse(update) == env(TEXT, 1801, "111", "-1001000000001", None, "re")


def test_t18_forum_topic_message_has_thread():
    update = {"update_id": 1802, "message": {
        **MSG, "from": ANA, "chat": {**GROUP, "is_forum": True}, "message_thread_id": 558,
        "is_topic_message": True, "text": "in topic"}}
    assert parse(update) == env(TEXT, 1802, "111", "-1001000000001", "558", "in topic")


def test_t18_is_topic_message_false_has_no_thread():
    update = {"update_id": 1803, "message": {
        **MSG, "from": ANA, "chat": GROUP, "message_thread_id": 558,
        "is_topic_message": False, "text": "x"}}
    assert parse(update).thread_id is None


def test_t20_callback_query_sender_is_the_presser_not_the_bot():
    update = {"update_id": 2001, "callback_query": {
        "id": "cq1", "from": {"id": 222, "is_bot": False, "first_name": "Ben"},
        "message": {"message_id": 77, "from": {"id": 999, "is_bot": True, "first_name": "MyBot"},
                    "chat": {"id": -1001000000001, "type": "supergroup"},
                    "date": 1700000000, "text": "pick one"},
        "chat_instance": "ci-1", "data": "opt-2"}}
    assert parse(update) == env(BUTTON, 2001, "222", "-1001000000001", text="opt-2")


@pytest.mark.parametrize(
    ("user_id", "chat_id"),
    [(111, -1001000000001), ("111", "-1001000000001")],
    ids=["numbers", "strings"],
)
def test_t25_ids_are_normalised_to_decimal_strings(user_id, chat_id):
    update = {"update_id": 2501, "message": {**MSG, "from": {"id": user_id, "is_bot": False},
                                             "chat": {"id": chat_id, "type": "supergroup"},
                                             "text": "hi"}}
    assert parse(update) == env(TEXT, 2501, "111", "-1001000000001", text="hi")


def test_compact_bytes_with_escapes_are_decoded():
    body = b'{"update_id":7,"message":{"message_id":1,"from":{"id":111},"chat":{"id":111},' \
           b'"date":1,"text":"caf\\u00e9 http:\\/\\/ex.test"}}'
    assert telegram.parse(body, CH) == (env(TEXT, 7, "111", "111", text="café http://ex.test"),)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"", "telegram: body is not valid JSON"),
        (b"{not json", "telegram: body is not valid JSON"),
        (b"\xff\xfe\x00garbage", "telegram: body is not valid JSON"),
        (b"[" * 100000, "telegram: body is not valid JSON"),
        (b"[1, 2]", "telegram: body is a JSON list, not an object"),
        (b'"update"', "telegram: body is a JSON str, not an object"),
        (b'{"message": {}}', "telegram: body has no integer update_id"),
        (b'{"update_id": "5", "message": {}}', "telegram: body has no integer update_id"),
        (b'{"update_id": true}', "telegram: body has no integer update_id"),
        (b'{"update_id": 1.5}', "telegram: body has no integer update_id"),
    ],
    ids=["empty", "broken", "not_utf8", "too_deep", "list", "string", "no_update_id",
         "string_update_id", "bool_update_id", "float_update_id"],
)
def test_bad_body_raises_unparsed_update(body, message):
    with pytest.raises(UnparsedUpdate) as excinfo:
        telegram.parse(body, CH)
    assert str(excinfo.value).startswith(message)
