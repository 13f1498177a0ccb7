"""Discord adapter: shipped samples and documented interactions, Ed25519 signatures (checked
against PyNaCl), PING handshakes, the `agent` command and its autocomplete."""

from __future__ import annotations

import json
from pathlib import Path

import nacl.signing
import pytest

from stickyroute.channels import ADAPTERS, Request
from stickyroute.channels.discord import parse
from stickyroute.config.model import Agent, Channel, ChannelType
from stickyroute.errors import UnparsedUpdate
from stickyroute.routing.envelope import Envelope, MessageKind

PAYLOADS = Path(__file__).resolve().parent / "payloads" / "discord"
CH = "discord"
KEY = nacl.signing.SigningKey(b"\x01" * 32)
PUBLIC = "8a88e3dd7409f195fd52db2d3cba5d72ca6709bf1d94121bf3748801b40f6f5c"
ADAPTER = ADAPTERS[ChannelType.DISCORD]
CHANNEL = Channel(CH, ChannelType.DISCORD, ("/discord",), "general", public_key=PUBLIC)
OPEN = Channel(CH, ChannelType.DISCORD, ("/discord",), "general")
TEXT, NON_TEXT, BUTTON, NO_SENDER = MessageKind.TEXT, MessageKind.NON_TEXT, MessageKind.BUTTON, MessageKind.NO_SENDER
NADIA = "1400000000000000001"
HELP_DESK = "1300000000000000001"


def env(kind, delivery, sender=None, chat=None, thread=None, text=None, to_proxy=False) -> Envelope:
    return Envelope(channel=CH, kind=kind, delivery_id=delivery, sender_id=sender, chat_id=chat, thread_id=thread,
                    text=text, sender_aliases=(sender,) if sender else (), to_proxy=to_proxy)


def sample(name: str) -> bytes:
    return (PAYLOADS / name).read_bytes()


SHIPPED = [
    ("slash_command_guild.json", env(TEXT, "1700000000000000002", NADIA, HELP_DESK,
                                     text="why is my build failing on main?")),
    ("slash_command_thread.json", env(TEXT, "1700000000000000003", NADIA, HELP_DESK, "1300000000000000099",
                                      "and on the release branch?")),
    ("slash_command_dm.json", env(TEXT, "1700000000000000004", NADIA, "1300000000000000500",
                                  text="remind me how refunds work")),
    ("component_click.json", env(BUTTON, "1700000000000000005", NADIA, HELP_DESK, text="feedback:helpful")),
    ("ping.json", env(NO_SENDER, "1700000000000000001")),
]


@pytest.mark.parametrize(("name", "expected"), SHIPPED, ids=[s[0] for s in SHIPPED])
def test_shipped_samples(name, expected):
    assert parse(sample(name), CH) == (expected,)


def interaction(kind: int, data: dict | None = None, **fields) -> bytes:
    doc = {"id": "42", "application_id": "11", "type": kind, "token": "t", "version": 1,
           "channel_id": "C1", "channel": {"id": "C1", "type": 0}, "guild_id": "G1",
           "member": {"user": {"id": "U1", "username": "ana"}}, **fields}
    if data is not None:
        doc["data"] = data
    return json.dumps(doc).encode()


def option(name: str, value, kind: int = 3, **extra) -> dict:
    return {"name": name, "type": kind, "value": value, **extra}


DOCUMENTED = [
    pytest.param(interaction(2, {"id": "9", "name": "agent", "type": 1, "options": [option("name", "billing")]}),
                 env(TEXT, "42", "U1", "C1", text="/agent billing", to_proxy=True), id="agent-command-switch"),
    pytest.param(interaction(2, {"id": "9", "name": "agent", "type": 1}),
                 env(TEXT, "42", "U1", "C1", text="/agent", to_proxy=True), id="agent-command-list"),
    pytest.param(interaction(2, {"id": "9", "name": "Agent", "type": 1, "options": [option("who", "auto")]}),
                 env(TEXT, "42", "U1", "C1", text="/agent auto", to_proxy=True), id="agent-command-other-option-name"),
    pytest.param(interaction(4, {"id": "9", "name": "agent", "type": 1,
                                 "options": [option("name", "bil", focused=True)]}),
                 env(BUTTON, "42", "U1", "C1", text="bil", to_proxy=True), id="agent-autocomplete"),
    pytest.param(interaction(4, {"id": "9", "name": "ask", "type": 1,
                                 "options": [option("topic", "ref", focused=True)]}),
                 env(BUTTON, "42", "U1", "C1", text="ref"), id="other-autocomplete"),
    pytest.param(interaction(2, {"id": "9", "name": "ticket", "type": 1, "options": [
        {"name": "open", "type": 2, "options": [{"name": "new", "type": 1, "options": [
            option("title", "printer on fire <@123> <#456>"), option("urgent", True, 5), option("count", 3, 4)]}]}]}),
                 env(TEXT, "42", "U1", "C1", text="printer on fire"), id="subcommand-group-strings-only"),
    pytest.param(interaction(2, {"id": "9", "name": "ping", "type": 1}), env(NON_TEXT, "42", "U1", "C1"),
                 id="command-without-text"),
    pytest.param(interaction(2, {"id": "9", "name": "Report message", "type": 3, "target_id": "77",
                                 "resolved": {"messages": {"77": {"content": "spam"}}}}),
                 env(BUTTON, "42", "U1", "C1", text="Report message"), id="message-context-menu"),
    pytest.param(interaction(2, {"id": "9", "name": "agent", "type": 2, "target_id": "5"}),
                 env(BUTTON, "42", "U1", "C1", text="agent"), id="user-context-menu-named-agent-is-not-the-command"),
    pytest.param(interaction(3, {"custom_id": "plan", "component_type": 3, "values": ["pro", "yearly"]}),
                 env(BUTTON, "42", "U1", "C1", text="pro yearly"), id="select-menu"),
    pytest.param(interaction(5, {"custom_id": "feedback_modal", "components": [
        {"type": 1, "components": [{"type": 4, "custom_id": "why", "value": "slow"}]}]}),
                 env(BUTTON, "42", "U1", "C1", text="feedback_modal"), id="modal-submit"),
    pytest.param(interaction(2, {"id": "9", "name": "ask", "type": 1, "options": [option("q", "hi")]},
                             member=None, user={"id": "U2"}, channel={"id": "D1", "type": 1}, channel_id="D1",
                             guild_id=None),
                 env(TEXT, "42", "U2", "D1", text="hi"), id="dm-user"),
    pytest.param(interaction(3, {"custom_id": "x", "component_type": 2}, channel_id="T1",
                             channel={"id": "T1", "type": 12, "parent_id": "C1"}),
                 env(BUTTON, "42", "U1", "C1", "T1", "x"), id="private-thread"),
    pytest.param(interaction(2, {"id": "9", "name": "ask", "type": 1}, member=None),
                 env(NO_SENDER, "42", chat="C1"), id="no-user"),
    pytest.param(interaction(9, {}), env(NO_SENDER, "42", chat="C1"), id="unknown-interaction-type"),
    pytest.param(interaction(3, {"custom_id": "x", "component_type": 2}, channel_id="T1",
                             channel={"id": "T1", "type": [11], "parent_id": "C1"}),
                 env(BUTTON, "42", "U1", "T1", text="x"), id="channel-type-of-the-wrong-type"),
    pytest.param(json.dumps({"version": 1, "application_id": "11", "type": 1, "event": {
        "type": "APPLICATION_AUTHORIZED", "timestamp": "2024-10-18T14:42:53.064834",
        "data": {"integration_type": 1, "scopes": ["applications.commands"], "user": {"id": "U1"}}}}).encode(),
                 env(NO_SENDER, None), id="webhook-event"),
]


@pytest.mark.parametrize(("body", "expected"), DOCUMENTED)
def test_documented_interactions(body, expected):
    assert parse(body, CH) == (expected,)


@pytest.mark.parametrize("body", [b"", b"{", b"[]", b'"x"'])
def test_unreadable_bodies_are_unparsed(body):
    with pytest.raises(UnparsedUpdate):
        parse(body, CH)


def test_a_webhook_event_is_keyed_by_its_body():
    body = DOCUMENTED[-1].values[0]
    assert ADAPTER.delivery_ids(parse(body, CH), body) == ADAPTER.delivery_ids(parse(body, CH), bytes(body))
    assert ADAPTER.delivery_ids(parse(body, CH), body)[0].endswith(":")


# --- signatures -----------------------------------------------------------------------------------

STAMP = "1767600002"
GUILD_SIGNATURE = ("95d83741ac331e5c255f4f6f1f14ac519d32215295cf0ae68ef75e39f7c05a85d4ae2324d6157837cec5ffa51a3bf"
                   "ee43fb95a29dcb2bac03e47126341a3e006")


def request(body: bytes, signature: str | None, stamp: str | None = STAMP) -> Request:
    headers = []
    if signature is not None:
        headers.append((b"x-signature-ed25519", signature.encode()))
    if stamp is not None:
        headers.append((b"x-signature-timestamp", stamp.encode()))
    return Request("POST", b"", headers, body)


def sign(body: bytes, stamp: str = STAMP) -> str:
    return KEY.sign(stamp.encode() + body).signature.hex()


def test_the_shipped_signature_holds_here_and_in_nacl():
    body = sample("slash_command_guild.json")
    assert KEY.verify_key.encode().hex() == PUBLIC
    assert sign(body) == GUILD_SIGNATURE
    nacl.signing.VerifyKey(bytes.fromhex(PUBLIC)).verify(STAMP.encode() + body, bytes.fromhex(GUILD_SIGNATURE))
    assert ADAPTER.authenticate(CHANNEL, request(body, GUILD_SIGNATURE), 0.0)


@pytest.mark.parametrize(("signature", "stamp", "accepted"), [
    pytest.param(GUILD_SIGNATURE.upper(), STAMP, True, id="hex-in-upper-case"),
    pytest.param("00" * 64, STAMP, False, id="bad-signature"),
    pytest.param(GUILD_SIGNATURE, "1767600003", False, id="other-timestamp"),
    pytest.param(GUILD_SIGNATURE[:-2], STAMP, False, id="truncated"),
    pytest.param("zz" * 64, STAMP, False, id="not-hex"),
    pytest.param(None, STAMP, False, id="missing-signature"),
    pytest.param(GUILD_SIGNATURE, None, False, id="missing-timestamp"),
])
def test_signature_forms(signature, stamp, accepted):
    body = sample("slash_command_guild.json")
    assert ADAPTER.authenticate(CHANNEL, request(body, signature, stamp), 0.0) is accepted


def test_a_changed_body_fails_and_no_key_accepts_everything():
    body = sample("slash_command_guild.json").replace(b"main", b"mian")
    assert not ADAPTER.authenticate(CHANNEL, request(body, GUILD_SIGNATURE), 0.0)
    assert ADAPTER.authenticate(OPEN, request(body, None, None), 0.0)


# --- handshakes -----------------------------------------------------------------------------------

def test_ping_is_answered_type_1_after_the_signature_check():
    body = sample("ping.json")
    reply = ADAPTER.handshake(CHANNEL, request(body, sign(body)), 0.0)
    assert reply is not None
    assert (reply.status, json.loads(reply.body), reply.header(b"content-type")) == (200, {"type": 1},
                                                                                       b"application/json")


@pytest.mark.parametrize("signature", [None, "00" * 64])
def test_a_ping_with_a_bad_signature_is_not_answered(signature):
    body = sample("ping.json")
    req = request(body, signature)
    assert ADAPTER.handshake(CHANNEL, req, 0.0) is None
    assert not ADAPTER.authenticate(CHANNEL, req, 0.0)


def test_webhook_events_ping_is_answered_204():
    body = json.dumps({"version": 1, "application_id": "11", "type": 0}).encode()
    reply = ADAPTER.handshake(CHANNEL, request(body, sign(body)), 0.0)
    assert reply is not None and (reply.status, reply.body) == (204, b"")


@pytest.mark.parametrize("body", [sample("slash_command_guild.json"), sample("component_click.json"),
                                  DOCUMENTED[-1].values[0], b'{"type": true}', b"not json"])
def test_other_interactions_are_no_handshake(body):
    assert ADAPTER.handshake(OPEN, request(body, None, None), 0.0) is None


# --- the agent command ----------------------------------------------------------------------------

AGENTS = (Agent("general", "http://a"), Agent("billing", "http://b", description="invoices"), Agent("bilbo", "http://c"))


def test_agent_command_answered_with_an_ephemeral_listing():
    envelope = env(TEXT, "42", "U1", "C1", text="/agent billing", to_proxy=True)
    reply = ADAPTER.agent_list(envelope, AGENTS, "billing")
    assert reply is not None and reply.status == 200
    answer = json.loads(reply.body)
    assert answer["type"] == 4 and answer["data"]["flags"] == 64
    assert answer["data"]["content"].split("\n") == [
        "Now talking to billing.",
        "Agents (switch with /agent <name>, back to automatic with /agent auto):",
        "\u2022 general", "\u2022 billing (current) - invoices", "\u2022 bilbo"]


@pytest.mark.parametrize(("typed", "names"), [("bil", ["billing", "bilbo"]), ("", ["general", "billing", "bilbo"]),
                                              ("GEN", ["general"]), ("x", [])])
def test_agent_autocomplete_answers_choices(typed, names):
    envelope = env(BUTTON, "42", "U1", "C1", text=typed or None, to_proxy=True)
    reply = ADAPTER.agent_list(envelope, AGENTS, "general")
    assert reply is not None
    assert json.loads(reply.body) == {"type": 8, "data": {"choices": [{"name": n, "value": n} for n in names]}}


def test_other_interactions_get_no_listing():
    assert ADAPTER.agent_list(env(TEXT, "42", "U1", "C1", text="/agent"), AGENTS, "general") is None
