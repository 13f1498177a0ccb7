"""WhatsApp adapter: shipped payloads, every message type, statuses, batches, T1, T11, T13, T25."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stickyroute import channels
from stickyroute.channels import whatsapp
from stickyroute.config.model import ChannelType
from stickyroute.errors import UnparsedUpdate
from stickyroute.routing.envelope import Envelope, MessageKind

PAYLOADS = Path(__file__).resolve().parent / "payloads" / "whatsapp"
CH = "wa"

TEXT, NON_TEXT, BUTTON = MessageKind.TEXT, MessageKind.NON_TEXT, MessageKind.BUTTON
STATUS, NO_SENDER = MessageKind.STATUS, MessageKind.NO_SENDER

MIRA, MIRA_BSUID = "15550100123", "US.10000000000000000001"
KOFI, KOFI_BSUID = "15550100187", "US.10000000000000000002"
WAMID_1 = "wamid.HBgLMTU1NTAxMDAxMjMVAgASGBQzQUZBS0UwMDAwMDAwMDAwMDAwMQA="
WAMID_2 = "wamid.HBgLMTU1NTAxMDAxODcVAgASGBQzQUZBS0UwMDAwMDAwMDAwMDAwMgA="
WAMID_3 = "wamid.HBgLMTU1NTAxMDAxMjMVAgASGBQzQUZBS0UwMDAwMDAwMDAwMDAwMwA="
WAMID_OUT = "wamid.HBgLMTU1NTAxMDAxMDAVAgARGBJGQUtFQlVTSU5FU1NNU0cwMQA="
GROUP_ID = "Y2FwaV9ncm91cDpGQUtFR1JPVVAwMDAwMQ"


def msg(kind, delivery, aliases, path, text=None, chat=None) -> Envelope:
    """Expected message envelope: sender is the first alias, chat defaults to the sender."""
    return Envelope(
        channel=CH, kind=kind, delivery_id=delivery, sender_id=aliases[0],
        chat_id=chat or aliases[0], text=text, sender_aliases=aliases, item_path=path,
    )


def status(delivery, aliases, path, chat=None) -> Envelope:
    sender = aliases[0] if aliases else None
    return Envelope(
        channel=CH, kind=STATUS, delivery_id=delivery, sender_id=sender,
        chat_id=chat or sender, sender_aliases=aliases, item_path=path,
    )


def no_sender(path) -> Envelope:
    return Envelope(channel=CH, kind=NO_SENDER, item_path=path)


FIRST = (0, 0, "messages", 0)
SHIPPED = [
    ("text.json", (msg(TEXT, WAMID_1, (MIRA, MIRA_BSUID), FIRST,
                       "Olá! Is my order #4411 shipped?"),)),
    ("reply_with_context.json", (msg(TEXT, WAMID_3, (MIRA, MIRA_BSUID), FIRST,
                                     "Yes, that one - the blue jacket"),)),
    ("group_message.json", (msg(TEXT, WAMID_2, (KOFI, KOFI_BSUID), FIRST,
                                "@Acme can you share the opening hours with the team?",
                                chat=GROUP_ID),)),
    ("interactive_button_reply.json", (msg(BUTTON, WAMID_3, (MIRA, MIRA_BSUID), FIRST,
                                           "Pro plan"),)),
    ("template_quick_reply.json", (msg(BUTTON, WAMID_3, (MIRA, MIRA_BSUID), FIRST,
                                       "Confirm"),)),
    ("status_delivered.json", (status(f"{WAMID_OUT}:delivered", (MIRA,),
                                      (0, 0, "statuses", 0)),)),
    ("batched_two_messages.json", (
        msg(TEXT, WAMID_1, (MIRA, MIRA_BSUID), FIRST, "Where is my refund?"),
        msg(TEXT, WAMID_2, (KOFI, KOFI_BSUID), (0, 0, "messages", 1),
            "Hello, I need to change my address"),
    )),
    ("batched_two_entries.json", (
        msg(TEXT, WAMID_1, (MIRA, MIRA_BSUID), FIRST, "Where is my refund?"),
        status(f"{WAMID_OUT}:read", (KOFI,), (1, 0, "statuses", 0)),
    )),
    ("username_user_no_phone.json", (msg(TEXT, WAMID_1, (MIRA_BSUID,), FIRST,
                                         "hi, new number who dis"),)),
]


def test_every_shipped_payload_has_expected_envelopes():
    assert sorted(p.name for p in PAYLOADS.glob("*.json")) == sorted(name for name, _ in SHIPPED)


@pytest.mark.parametrize(("name", "expected"), SHIPPED, ids=[name for name, _ in SHIPPED])
def test_shipped_payload(name, expected):
    assert whatsapp.parse((PAYLOADS / name).read_bytes(), CH) == expected


def body(*changes_per_entry: list[dict]) -> bytes:
    """A WABA body; each argument is one entry's list of change values."""
    return json.dumps({"object": "whatsapp_business_account", "entry": [
        {"id": f"WABA{e}", "changes": [{"field": "messages", "value": {
            "messaging_product": "whatsapp", "metadata": {"phone_number_id": "PN1"}, **value}}
            for value in values]}
        for e, values in enumerate(changes_per_entry)]}).encode()


def one_message(message: dict, contacts: list | None = None) -> bytes:
    extra = {"contacts": contacts} if contacts is not None else {}
    return body([{**extra, "messages": [{"from": "15550000001", "id": "wamid.M",
                                         "timestamp": "1700000000", **message}]}])


ANA = ("15550000001",)
TYPES = [
    ("text", {"type": "text", "text": {"body": "hello"}}, TEXT, "hello"),
    ("text_empty", {"type": "text", "text": {"body": ""}}, NON_TEXT, None),
    ("button", {"type": "button", "button": {"payload": "P", "text": "Yes"}}, BUTTON, "Yes"),
    ("interactive_button_reply", {"type": "interactive", "interactive": {
        "type": "button_reply", "button_reply": {"id": "b1", "title": "Pro plan"}}},
     BUTTON, "Pro plan"),
    ("interactive_list_reply", {"type": "interactive", "interactive": {
        "type": "list_reply", "list_reply": {"id": "l1", "title": "Row 1",
                                             "description": "d"}}},
     BUTTON, "Row 1"),
    ("interactive_nfm_reply", {"type": "interactive", "interactive": {
        "type": "nfm_reply", "nfm_reply": {"response_json": "{}"}}}, BUTTON, None),
    ("image_caption", {"type": "image", "image": {"id": "m1", "caption": "my receipt"}},
     TEXT, "my receipt"),
    ("image", {"type": "image", "image": {"id": "m1"}}, NON_TEXT, None),
    ("video_caption", {"type": "video", "video": {"id": "m1", "caption": "clip"}}, TEXT, "clip"),
    ("video", {"type": "video", "video": {"id": "m1"}}, NON_TEXT, None),
    ("document_caption", {"type": "document", "document": {"id": "m1", "caption": "cv"}},
     TEXT, "cv"),
    ("document", {"type": "document", "document": {"id": "m1", "filename": "a.pdf"}},
     NON_TEXT, None),
    ("audio", {"type": "audio", "audio": {"id": "m1"}}, NON_TEXT, None),
    ("voice", {"type": "voice", "voice": {"id": "m1"}}, NON_TEXT, None),
    ("sticker", {"type": "sticker", "sticker": {"id": "m1"}}, NON_TEXT, None),
    ("location", {"type": "location", "location": {"latitude": 1.0, "longitude": 2.0}},
     NON_TEXT, None),
    ("contacts", {"type": "contacts", "contacts": [{"name": {"formatted_name": "X"}}]},
     NON_TEXT, None),
    ("reaction", {"type": "reaction", "reaction": {"message_id": "wamid.X", "emoji": "👍"}},
     NON_TEXT, None),
    ("order", {"type": "order", "order": {"catalog_id": "c", "product_items": []}},
     NON_TEXT, None),
    ("unsupported", {"type": "unsupported", "errors": [{"code": 131051}]}, NON_TEXT, None),
    ("system", {"type": "system", "system": {"body": "changed number",
                                             "type": "user_changed_number"}},
     NON_TEXT, None),
    ("future_type", {"type": "hologram", "hologram": {}}, NON_TEXT, None),
]


@pytest.mark.parametrize(("message", "kind", "text"), [t[1:] for t in TYPES],
                         ids=[t[0] for t in TYPES])
def test_message_type(message, kind, text):
    assert whatsapp.parse(one_message(message), CH) == (msg(kind, "wamid.M", ANA, FIRST, text),)


def test_t1_escaped_bytes_decode_to_text():
    raw = (b'{"object":"whatsapp_business_account","entry":[{"id":"WABA1","changes":[{"field":'
           b'"messages","value":{"messaging_product":"whatsapp","metadata":{"phone_number_id":'
           b'"PN1"},"contacts":[{"wa_id":"15550000001","profile":{"name":"Ana Test"}}],'
           b'"messages":[{"from":"15550000001","id":"wamid.T1","timestamp":"1700000000",'
           b'"type":"text","text":{"body":"see http:\\/\\/ex.test\\/a caf\\u00e9"}}]}}]}]}')
    assert whatsapp.parse(raw, CH) == (
        msg(TEXT, "wamid.T1", ANA, FIRST, "see http://ex.test/a café"),)


def test_t11_statuses_only_with_contact_without_profile():
    raw = body([{"contacts": [{"wa_id": "15550000001"}], "statuses": [
        {"id": "wamid.OUT1", "status": "read", "timestamp": "1700000100",
         "recipient_id": "15550000001"}]}])
    assert whatsapp.parse(raw, CH) == (
        status("wamid.OUT1:read", ANA, (0, 0, "statuses", 0)),)


def test_t13_every_change_is_read():
    raw = body([
        {"statuses": [{"id": "wamid.OUT2", "status": "delivered", "recipient_id": "15550000001"}]},
        {"messages": [{"from": "15550000002", "id": "wamid.T13", "type": "text",
                       "text": {"body": "/agent billing"}}]},
    ])
    assert whatsapp.parse(raw, CH) == (
        status("wamid.OUT2:delivered", ANA, (0, 0, "statuses", 0)),
        msg(TEXT, "wamid.T13", ("15550000002",), (0, 1, "messages", 0), "/agent billing"),
    )


def test_messages_and_statuses_in_body_key_order():
    raw = body([{
        "statuses": [{"id": "wamid.S", "status": "sent", "recipient_id": "15550000002"}],
        "messages": [{"from": "15550000001", "id": "wamid.A", "type": "audio", "audio": {}},
                     {"from": "15550000002", "id": "wamid.B", "type": "text",
                      "text": {"body": "b"}}],
    }], [{"messages": [{"from": "15550000003", "id": "wamid.C", "type": "text",
                        "text": {"body": "c"}}]}])
    assert whatsapp.parse(raw, CH) == (
        status("wamid.S:sent", ("15550000002",), (0, 0, "statuses", 0)),
        msg(NON_TEXT, "wamid.A", ANA, (0, 0, "messages", 0)),
        msg(TEXT, "wamid.B", ("15550000002",), (0, 0, "messages", 1), "b"),
        msg(TEXT, "wamid.C", ("15550000003",), (1, 0, "messages", 0), "c"),
    )


@pytest.mark.parametrize(
    ("sender", "expected"),
    [("15550000001", "15550000001"), ("+15550000001", "15550000001"), (15550000001, "15550000001")],
    ids=["digits", "plus", "number"],
)
def test_t25_phone_numbers_are_normalised(sender, expected):
    (envelope,) = whatsapp.parse(one_message({"from": sender, "type": "text",
                                              "text": {"body": "x"}}), CH)
    assert (envelope.sender_id, envelope.chat_id, envelope.sender_aliases) == (
        expected, expected, (expected,))


def test_contacts_add_aliases_phone_first():
    raw = one_message({"from_user_id": "US.1", "type": "text", "text": {"body": "x"}},
                      contacts=[{"wa_id": "15550000009", "user_id": "US.9"},
                                {"wa_id": "+15550000001", "user_id": "US.1"}])
    assert whatsapp.parse(raw, CH) == (
        msg(TEXT, "wamid.M", ("15550000001", "US.1"), FIRST, "x"),)


def test_contact_found_by_bsuid_gives_the_phone_first():
    raw = body([{"contacts": [{"wa_id": "15550000001", "user_id": "US.1"}], "messages": [
        {"from_user_id": "US.1", "id": "wamid.M", "type": "text", "text": {"body": "x"}}]}])
    assert whatsapp.parse(raw, CH) == (
        msg(TEXT, "wamid.M", ("15550000001", "US.1"), FIRST, "x"),)


def test_group_message_chat_is_the_group():
    raw = one_message({"from_user_id": "US.1", "group_id": "G1", "type": "text",
                       "text": {"body": "hi all"}})
    assert whatsapp.parse(raw, CH) == (
        msg(TEXT, "wamid.M", ("15550000001", "US.1"), FIRST, "hi all", chat="G1"),)


def test_group_status_belongs_to_the_participant_in_the_group():
    raw = body([{"statuses": [{"id": "wamid.G", "status": "read", "recipient_type": "group",
                               "recipient_id": "G1", "recipient_participant_id": "15550000001",
                               "recipient_user_id": "US.1"}]}])
    assert whatsapp.parse(raw, CH) == (
        status("wamid.G:read", ("15550000001", "US.1"), (0, 0, "statuses", 0), chat="G1"),)


def test_status_of_username_user_has_only_bsuid():
    raw = body([{"statuses": [{"id": "wamid.U", "status": "sent", "recipient_user_id": "US.1"}]}])
    assert whatsapp.parse(raw, CH) == (status("wamid.U:sent", ("US.1",), (0, 0, "statuses", 0)),)


def test_status_without_recipient_or_state():
    raw = body([{"statuses": [{"id": "wamid.X"}]}])
    assert whatsapp.parse(raw, CH) == (status("wamid.X", (), (0, 0, "statuses", 0)),)


def test_message_without_any_sender_id_is_no_sender():
    raw = body([{"messages": [{"id": "wamid.N", "type": "text", "text": {"body": "who"}}]}])
    assert whatsapp.parse(raw, CH) == (Envelope(
        channel=CH, kind=NO_SENDER, delivery_id="wamid.N", text="who",
        item_path=(0, 0, "messages", 0)),)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (json.dumps({"object": "whatsapp_business_account", "entry": [{"id": "W", "changes": [
            {"field": "account_update", "value": {"event": "VERIFIED_ACCOUNT"}}]}]}).encode(),
         (no_sender((0, 0)),)),
        (body([{"errors": [{"code": 131000, "title": "Something went wrong"}]}]),
         (no_sender((0, 0)),)),
        (body([{"messages": [], "statuses": []}]), (no_sender((0, 0)),)),
        (json.dumps({"object": "whatsapp_business_account", "entry": [{"id": "W"}]}).encode(),
         (no_sender((0,)),)),
        (json.dumps({"object": "whatsapp_business_account", "entry": []}).encode(),
         (no_sender(()),)),
        (json.dumps({"object": "whatsapp_business_account", "entry": [
            "junk", {"id": "W", "changes": ["junk", {"value": {"messages": ["junk"]}}]}]}).encode(),
         (no_sender((0,)), no_sender((1, 0)), no_sender((1, 1, "messages", 0)))),
    ],
    ids=["account_update", "errors_only", "empty_lists", "entry_without_changes", "no_entries",
         "junk_items"],
)
def test_items_without_a_user_are_no_sender(raw, expected):
    assert whatsapp.parse(raw, CH) == expected


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b"", "whatsapp: body is not valid JSON"),
        (b"{\"object\":", "whatsapp: body is not valid JSON"),
        (b"\xff\xfe\x00", "whatsapp: body is not valid JSON"),
        (b"[]", "whatsapp: body is not an object with object='whatsapp_business_account'"),
        (b'{"object":"page","entry":[]}',
         "whatsapp: body is not an object with object='whatsapp_business_account'"),
        (b'{"update_id":1,"message":{}}',
         "whatsapp: body is not an object with object='whatsapp_business_account'"),
        (b'{"object":"whatsapp_business_account"}', "whatsapp: body has no entry list"),
        (b'{"object":"whatsapp_business_account","entry":{}}', "whatsapp: body has no entry list"),
    ],
    ids=["empty", "truncated", "not_utf8", "list", "messenger", "telegram", "no_entry",
         "entry_object"],
)
def test_bad_body_raises_unparsed_update(raw, message):
    with pytest.raises(UnparsedUpdate) as excinfo:
        whatsapp.parse(raw, CH)
    assert str(excinfo.value).startswith(message)


@pytest.mark.parametrize("channel_type", ["whatsapp", ChannelType.WHATSAPP])
def test_registry_dispatches_by_channel_type(channel_type):
    raw = (PAYLOADS / "text.json").read_bytes()
    assert channels.parse(channel_type, raw, CH) == whatsapp.parse(raw, CH)
    assert {t.value: type(a).__name__ for t, a in channels.ADAPTERS.items()} == {
        "telegram": "TelegramAdapter", "whatsapp": "WhatsAppAdapter", "slack": "SlackAdapter",
        "discord": "DiscordAdapter", "line": "LineAdapter", "messenger": "MessagingAdapter",
        "instagram": "MessagingAdapter"}
    assert all(adapter.type is kind for kind, adapter in channels.ADAPTERS.items())


def test_registry_telegram():
    raw = b'{"update_id": 3, "message": {"from": {"id": 1}, "chat": {"id": 1}, "text": "t"}}'
    assert channels.parse(ChannelType.TELEGRAM, raw, "tg") == channels.telegram.parse(raw, "tg")


def test_registry_unknown_type():
    with pytest.raises(ValueError, match="no channel adapter for type 'viber'"):
        channels.parse("viber", b"{}", "vb")
