"""Splitting a mixed WhatsApp batch into one body per agent, and re-signing it (T13)."""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import hmac
import json
from pathlib import Path

import pytest

from stickyroute.channels import whatsapp
from stickyroute.channels.whatsapp_split import sign, split_body
from stickyroute.errors import UnparsedUpdate

PAYLOADS = Path(__file__).resolve().parent / "payloads" / "whatsapp"
TWO_MESSAGES = (PAYLOADS / "batched_two_messages.json").read_bytes()
TWO_ENTRIES = (PAYLOADS / "batched_two_entries.json").read_bytes()


def compact(doc: dict) -> bytes:
    return json.dumps(doc, ensure_ascii=True, separators=(",", ":")).encode()


def without_path(envelopes) -> list:
    return [dataclasses.replace(e, item_path=()) for e in envelopes]


def test_two_messages_of_one_change_split_with_their_own_contacts():
    original = json.loads(TWO_MESSAGES)
    value = original["entry"][0]["changes"][0]["value"]
    expected = {}
    for agent, index in (("billing", 0), ("support", 1)):
        doc = copy.deepcopy(original)
        part_value = doc["entry"][0]["changes"][0]["value"]
        part_value["contacts"] = [value["contacts"][index]]
        part_value["messages"] = [value["messages"][index]]
        expected[agent] = compact(doc)

    parts = split_body(TWO_MESSAGES, {"billing": [(0, 0, "messages", 0)],
                                      "support": [(0, 0, "messages", 1)]})

    assert parts == expected
    envelopes = whatsapp.parse(TWO_MESSAGES, "wa")
    assert whatsapp.parse(parts["billing"], "wa") == (envelopes[0],)
    assert whatsapp.parse(parts["support"], "wa") == (
        dataclasses.replace(envelopes[1], item_path=(0, 0, "messages", 0)),)


def test_two_entries_split_keeps_each_entry_whole():
    original = json.loads(TWO_ENTRIES)
    parts = split_body(TWO_ENTRIES, {"billing": [(0, 0, "messages", 0)],
                                     "support": [(1, 0, "statuses", 0)]})
    waba = "whatsapp_business_account"
    assert parts == {
        "billing": compact({"object": waba, "entry": [original["entry"][0]]}),
        "support": compact({"object": waba, "entry": [original["entry"][1]]}),
    }


def test_parts_are_compact_ascii_with_lowercase_escapes():
    raw = (PAYLOADS / "text.json").read_bytes()
    assert split_body(raw, {"general": [(0, 0, "messages", 0)]}) == {"general": (
        b'{"object":"whatsapp_business_account","entry":[{"id":"100000000000001","changes":'
        b'[{"value":{"messaging_product":"whatsapp","metadata":{"display_phone_number":'
        b'"15550100100","phone_number_id":"200000000000001"},"contacts":[{"profile":{"name":'
        b'"Mira Solberg"},"wa_id":"15550100123","user_id":"US.10000000000000000001"}],'
        b'"messages":[{"from":"15550100123","from_user_id":"US.10000000000000000001","id":'
        b'"wamid.HBgLMTU1NTAxMDAxMjMVAgASGBQzQUZBS0UwMDAwMDAwMDAwMDAwMQA=","timestamp":'
        b'"1767600000","type":"text","text":{"body":"Ol\\u00e1! Is my order #4411 shipped?"}}]},'
        b'"field":"messages"}]}]}'
    )}


MIXED = json.dumps({"object": "whatsapp_business_account", "entry": [
    {"id": "WABA1", "changes": [
        {"value": {"messaging_product": "whatsapp", "metadata": {"phone_number_id": "PN1"},
                   "contacts": [{"wa_id": "15550000001", "profile": {"name": "Ana"}},
                                {"wa_id": "15550000002"},
                                {"user_id": "US.3"}],
                   "messages": [
                       {"from": "15550000001", "id": "wamid.A", "type": "text",
                        "text": {"body": "/agent billing"}},
                       {"from_user_id": "US.3", "id": "wamid.C", "type": "text",
                        "text": {"body": "hi"}}],
                   "statuses": [{"id": "wamid.OUT", "status": "read",
                                 "recipient_id": "15550000002"}]},
         "field": "messages"},
        {"value": {"messaging_product": "whatsapp", "event": "VERIFIED_ACCOUNT"},
         "field": "account_update"},
    ]},
    {"id": "WABA2", "changes": [
        {"value": {"messaging_product": "whatsapp", "metadata": {"phone_number_id": "PN2"},
                   "messages": [{"from": "15550000002", "id": "wamid.B", "type": "text",
                                 "text": {"body": "where is my order"}}]},
         "field": "messages"}]},
]}, indent=2).encode()


def _mixed_part(entries: list) -> dict:
    return {"object": "whatsapp_business_account", "entry": entries}


def test_mixed_batch_split_items_contacts_and_no_sender_change():
    doc = json.loads(MIXED)
    entry1, entry2 = doc["entry"]
    change, account = entry1["changes"]
    value = change["value"]
    meta = {"messaging_product": "whatsapp", "metadata": {"phone_number_id": "PN1"}}

    parts = split_body(MIXED, {
        "billing": [(0, 0, "messages", 0), (0, 1)],
        "support": [(0, 0, "statuses", 0), (1, 0, "messages", 0)],
        "sales": [(0, 0, "messages", 1)],
    })

    assert json.loads(parts["billing"]) == _mixed_part([{"id": "WABA1", "changes": [
        {"value": {**meta, "contacts": [value["contacts"][0]],
                   "messages": [value["messages"][0]]}, "field": "messages"},
        account]}])
    assert json.loads(parts["support"]) == _mixed_part([
        {"id": "WABA1", "changes": [
            {"value": {**meta, "contacts": [value["contacts"][1]],
                       "statuses": value["statuses"]}, "field": "messages"}]},
        entry2])
    assert json.loads(parts["sales"]) == _mixed_part([{"id": "WABA1", "changes": [
        {"value": {**meta, "contacts": [value["contacts"][2]],
                   "messages": [value["messages"][1]]}, "field": "messages"}]}])


def test_round_trip_every_item_lands_in_exactly_one_part():
    owners = {"billing": [(0, 0, "messages", 0), (0, 1)],
              "support": [(0, 0, "statuses", 0), (1, 0, "messages", 0)],
              "sales": [(0, 0, "messages", 1)]}
    parts = split_body(MIXED, owners)
    original = {e.item_path: e for e in whatsapp.parse(MIXED, "wa")}
    for agent, paths in owners.items():
        expected = [original[tuple(p)] for p in paths]
        got = whatsapp.parse(parts[agent], "wa")
        assert sorted(without_path(got), key=repr) == sorted(without_path(expected), key=repr)
        assert list(json.loads(parts[agent])) == ["object", "entry"]


def test_contacts_all_kept_when_a_kept_message_names_no_user():
    raw = json.dumps({"object": "whatsapp_business_account", "entry": [{"id": "W", "changes": [
        {"field": "messages", "value": {
            "contacts": [{"wa_id": "1"}, {"wa_id": "2"}],
            "messages": [{"id": "wamid.N", "type": "text", "text": {"body": "?"}},
                         {"from": "2", "id": "wamid.2", "type": "text", "text": {"body": "x"}}],
        }}]}]}).encode()
    parts = split_body(raw, {"general": [(0, 0, "messages", 0)], "qa": [(0, 0, "messages", 1)]})
    assert json.loads(parts["general"])["entry"][0]["changes"][0]["value"] == {
        "contacts": [{"wa_id": "1"}, {"wa_id": "2"}],
        "messages": [{"id": "wamid.N", "type": "text", "text": {"body": "?"}}]}
    assert json.loads(parts["qa"])["entry"][0]["changes"][0]["value"] == {
        "contacts": [{"wa_id": "2"}],
        "messages": [{"from": "2", "id": "wamid.2", "type": "text", "text": {"body": "x"}}]}


def test_contacts_key_dropped_when_no_contact_belongs_to_the_part():
    raw = json.dumps({"object": "whatsapp_business_account", "entry": [{"id": "W", "changes": [
        {"field": "messages", "value": {
            "contacts": [{"wa_id": "1"}],
            "messages": [{"from": "1", "id": "wamid.1", "type": "text", "text": {"body": "a"}}],
            "statuses": [{"id": "wamid.O", "status": "sent", "recipient_id": "2"}],
        }}]}]}).encode()
    parts = split_body(raw, {"a": [(0, 0, "messages", 0)], "b": [(0, 0, "statuses", 0)]})
    assert json.loads(parts["b"])["entry"][0]["changes"][0]["value"] == {
        "statuses": [{"id": "wamid.O", "status": "sent", "recipient_id": "2"}]}


def test_whole_body_path_for_a_body_without_entries():
    raw = b'{"object":"whatsapp_business_account","entry":[],"extra":1}'
    assert split_body(raw, {"general": [()]}) == {"general": raw}


@pytest.mark.parametrize(
    ("parts", "message"),
    [
        ({"a": [(0, 0, "messages", 2)]}, "item path (0, 0, 'messages', 2) of agent 'a' is not"),
        ({"a": [(0, 0)]}, "item path (0, 0) of agent 'a' is not an item of the body"),
        ({"a": [(0,)]}, "item path (0,) of agent 'a' is not an item of the body"),
        ({"a": [(0, 0, "messages", 0)], "b": [(0, 0, "messages", 0)]},
         "item path (0, 0, 'messages', 0) owned by 'a' and 'b'"),
    ],
    ids=["index_out_of_range", "change_with_items", "entry_with_changes", "two_owners"],
)
def test_bad_item_paths_raise(parts, message):
    with pytest.raises(ValueError) as excinfo:
        split_body(TWO_MESSAGES, parts)
    assert str(excinfo.value).startswith(message)


def test_split_of_a_bad_body_raises_unparsed_update():
    with pytest.raises(UnparsedUpdate):
        split_body(b"not json", {"a": [(0, 0, "messages", 0)]})


def test_sign_is_meta_x_hub_signature_256():
    part = split_body(TWO_MESSAGES, {"a": [(0, 0, "messages", 0)]})["a"]
    expected = hmac.new(b"test-app-secret", part, hashlib.sha256).hexdigest()
    assert sign(part, "test-app-secret") == f"sha256={expected}"


@pytest.mark.parametrize(
    ("name", "signature"),
    [("text.json", "sha256=2dcdfeb32daab4fbfe691e17eddee2435fd7064cca3de930777a86bdef81cde8"),
     ("batched_two_messages.json",
      "sha256=001c37bafa9ca1a8e95af675eb0e19f8845301d8e1618c96292d3a28ee61b39f")],
)
def test_sign_matches_shipped_signature_fixtures(name, signature):
    assert sign((PAYLOADS / name).read_bytes(), "fake_app_secret_0001") == signature
