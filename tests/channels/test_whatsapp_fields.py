"""WhatsApp changes routed by `field`: one row per field of platforms.md section 4 (and `calls`,
`user_id_update` from the Cloud API reference), plus the linear-time contact index (issue #10)."""

from __future__ import annotations

import json

import pytest

from stickyroute.channels import whatsapp
from stickyroute.channels.whatsapp_split import split_body
from stickyroute.routing.envelope import Envelope, MessageKind

CH = "wa"
META = {"messaging_product": "whatsapp", "metadata": {"phone_number_id": "PN1"}}
USER_EVENT, HISTORY, NO_SENDER = MessageKind.USER_EVENT, MessageKind.HISTORY, MessageKind.NO_SENDER


def change(field: str | None, value: dict) -> bytes:
    one = {"value": {**META, **value}}
    if field is not None:
        one = {"field": field, **one}
    return json.dumps({"object": "whatsapp_business_account", "entry": [{"id": "W", "changes": [one]}]}).encode()


def env(kind: MessageKind, aliases: tuple[str, ...], path: tuple, delivery: str | None = None) -> Envelope:
    sender = aliases[0] if aliases else None
    return Envelope(CH, kind, delivery_id=delivery, sender_id=sender, chat_id=sender, sender_aliases=aliases,
                    item_path=path)


HISTORY_VALUE = {"history": [{"metadata": {"phase": 0, "chunk_order": 1, "progress": 100}, "threads": [
    {"id": "15550000001", "messages": [{"from": "15550000001", "id": "wamid.H1", "timestamp": "1", "type": "text",
                                        "text": {"body": "old question"}, "history_context": {"status": "read"}}]},
    {"id": "15550000002", "messages": [{"from": "15550000009", "id": "wamid.H2", "timestamp": "2", "type": "text",
                                        "text": {"body": "old answer"}}]},
]}]}
FIELDS = [
    ("history", HISTORY_VALUE, (env(HISTORY, ("15550000001",), (0, 0, "history", 0, 0)),
                                env(HISTORY, ("15550000002",), (0, 0, "history", 0, 1)))),
    ("calls", {"contacts": [{"wa_id": "15550000001", "user_id": "US.1", "profile": {"name": "A"}}],
               "calls": [{"id": "wacid.1", "from": "15550000001", "to": "15550100100", "event": "connect",
                          "direction": "USER_INITIATED", "timestamp": "1"}]},
     (env(USER_EVENT, ("15550000001", "US.1"), (0, 0, "calls", 0), "wacid.1:connect"),)),
    ("calls", {"calls": [{"id": "wacid.2", "from": "15550100100", "to": "15550000002", "event": "terminate",
                          "direction": "BUSINESS_INITIATED"}]},
     (env(USER_EVENT, ("15550000002",), (0, 0, "calls", 0), "wacid.2:terminate"),)),
    ("smb_message_echoes", {"message_echoes": [{"from": "15550100100", "to": "15550000003", "to_user_id": "US.3",
                                                "id": "wamid.E1", "type": "text", "text": {"body": "sent from the app"}}]},
     (env(USER_EVENT, ("15550000003", "US.3"), (0, 0, "message_echoes", 0), "wamid.E1:echo"),)),
    ("user_preferences", {"contacts": [{"wa_id": "15550000004", "profile": {"name": "D"}}],
                          "user_preferences": [{"wa_id": "15550000004", "category": "marketing_messages",
                                                "value": "stop", "detail": "stop promotions", "timestamp": 1}]},
     (env(USER_EVENT, ("15550000004",), (0, 0, "user_preferences", 0)),)),
    ("user_id_update", {"user_id_update": [{"wa_id": "15550000005", "user_id": "US.5"}]},
     (env(USER_EVENT, ("15550000005", "US.5"), (0, 0, "user_id_update", 0)),)),
    ("account_update", {"event": "VERIFIED_ACCOUNT"}, (env(NO_SENDER, (), (0, 0)),)),
    ("message_template_status_update", {"event": "APPROVED", "message_template_id": 1}, (env(NO_SENDER, (), (0, 0)),)),
    ("phone_number_quality_update", {"event": "FLAGGED", "current_limit": "TIER_1K"}, (env(NO_SENDER, (), (0, 0)),)),
    ("a_future_field", {"messages": [{"from": "15550000006", "id": "wamid.F", "type": "text", "text": {"body": "x"}}]},
     (env(NO_SENDER, (), (0, 0)),)),
]


@pytest.mark.parametrize(("field", "value", "expected"), FIELDS,
                         ids=[f"{f}-{i}" for i, (f, _v, _e) in enumerate(FIELDS)])
def test_every_field_is_read_by_its_row(field: str, value: dict, expected: tuple[Envelope, ...]) -> None:
    assert whatsapp.parse(change(field, value), CH) == expected


def test_a_change_without_field_is_read_as_messages() -> None:
    (got,) = whatsapp.parse(change(None, {"messages": [{"from": "155", "id": "wamid.N", "type": "text",
                                                       "text": {"body": "hi"}}]}), CH)
    assert (got.kind, got.sender_id, got.delivery_id) == (MessageKind.TEXT, "155", "wamid.N")


def test_a_group_status_matches_its_participant_bsuid() -> None:
    (got,) = whatsapp.parse(change("messages", {"statuses": [{
        "id": "wamid.G", "status": "read", "recipient_type": "group", "recipient_id": "G1",
        "recipient_participant_id": "15550000007", "recipient_participant_user_id": "US.7"}]}), CH)
    assert (got.sender_aliases, got.chat_id) == (("15550000007", "US.7"), "G1")


def test_a_group_status_of_a_username_user_has_only_the_bsuid() -> None:
    (got,) = whatsapp.parse(change("messages", {"statuses": [{
        "id": "wamid.G", "status": "read", "recipient_type": "group", "recipient_id": "G1",
        "recipient_participant_user_id": "US.8"}]}), CH)
    assert (got.sender_id, got.sender_aliases, got.kind) == ("US.8", ("US.8",), MessageKind.STATUS)


def big_batch(n: int) -> bytes:
    contacts = [{"wa_id": f"1555{i:07d}", "user_id": f"US.{i}", "profile": {"name": f"U{i}"}} for i in range(n)]
    messages = [{"from": f"1555{i:07d}", "id": f"wamid.{i}", "timestamp": "1", "type": "text",
                 "text": {"body": f"message {i}"}} for i in range(n)]
    return change("messages", {"contacts": contacts, "messages": messages})


def test_contacts_are_matched_through_the_index_for_every_message() -> None:
    found = whatsapp.parse(big_batch(3000), CH)
    assert [e.sender_aliases for e in found[::1000]] == [("15550000000", "US.0"), ("15550001000", "US.1000"),
                                                         ("15550002000", "US.2000")]


def test_a_split_part_keeps_exactly_its_senders_contacts() -> None:
    raw = big_batch(6)
    parts = split_body(raw, {"a": [(0, 0, "messages", i) for i in (0, 2, 4)],
                             "b": [(0, 0, "messages", i) for i in (1, 3, 5)]})
    a = json.loads(parts["a"])["entry"][0]["changes"][0]["value"]
    assert [c["wa_id"] for c in a["contacts"]] == ["15550000000", "15550000002", "15550000004"]
    assert [m["id"] for m in a["messages"]] == ["wamid.0", "wamid.2", "wamid.4"]


def test_a_history_change_goes_whole_to_the_one_agent_of_its_threads_and_is_never_cut() -> None:
    raw = change("history", HISTORY_VALUE)
    whole = split_body(raw, {"a": [(0, 0, "history", 0, 0), (0, 0, "history", 0, 1)]})
    assert json.loads(whole["a"])["entry"][0]["changes"][0]["value"]["history"] == HISTORY_VALUE["history"]
    with pytest.raises(ValueError, match="names users of 2 agents"):
        split_body(raw, {"a": [(0, 0, "history", 0, 0)], "b": [(0, 0, "history", 0, 1)]})


@pytest.mark.parametrize("field", [[1], {"a": 1}, 5, True])
def test_a_field_that_is_not_a_string_is_an_unknown_field(field: object) -> None:
    """Found by fuzzing: `"field": [1]` raised TypeError (unhashable) out of the adapter."""
    raw = json.dumps({"object": "whatsapp_business_account", "entry": [{"changes": [
        {"field": field, "value": {"messages": [{"from": "155", "id": "wamid.X", "type": "text"}]}}]}]}).encode()
    assert whatsapp.parse(raw, CH) == (env(NO_SENDER, (), (0, 0)),)
