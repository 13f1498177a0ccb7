"""Discord adapter on payload shapes from discord/discord-api-docs (interactions, application
commands, user-installable apps, webhook events) and the components reference, re-created with
invented ids (`tests/channels/realworld.py`): every sample's envelope, handshake and Ed25519
signature (signed with PyNaCl)."""

from __future__ import annotations

import nacl.signing
import pytest

from stickyroute.channels import ADAPTERS, Request
from stickyroute.config.model import Channel, ChannelType
from stickyroute.routing.envelope import Envelope, MessageKind
from tests.channels import realworld

CH = "discord"
KEY = nacl.signing.SigningKey(b"\x05" * 32)
ADAPTER = ADAPTERS[ChannelType.DISCORD]
CHANNEL = Channel(CH, ChannelType.DISCORD, ("/discord",), "general", public_key=KEY.verify_key.encode().hex())
TEXT, NON_TEXT, BUTTON, NO_SENDER = MessageKind.TEXT, MessageKind.NON_TEXT, MessageKind.BUTTON, MessageKind.NO_SENDER
CHAN, THREAD, DM, GDM = "1130000000000000001", "1140000000000000001", "1150000000000000001", "1160000000000000001"
ANA = "1170000000000000001"


def env(kind, delivery, sender=None, chat=None, thread=None, text=None, to_proxy=False) -> Envelope:
    return Envelope(channel=CH, kind=kind, delivery_id=delivery, sender_id=sender, chat_id=chat, thread_id=thread,
                    text=text, sender_aliases=(sender,) if sender else (), to_proxy=to_proxy)


def interaction(n: int) -> str:
    return f"12000000000000000{n:02d}"


EXPECTED = {
    "webhook_event_authorized": env(NO_SENDER, None),
    "webhook_event_game_dm": env(NO_SENDER, None),
    "guild_slash_command": env(TEXT, interaction(2), ANA, CHAN, text="@billing why was I charged twice  :sad:"),
    "thread_select_menu": env(BUTTON, interaction(3), ANA, CHAN, THREAD, "pro team"),
    "bot_dm_command": env(NON_TEXT, interaction(4), ANA, DM),
    "user_installed_group_dm": env(TEXT, interaction(5), ANA, GDM, text="what is new?"),
    "user_command": env(BUTTON, interaction(6), ANA, CHAN, text="View Stats"),
    "message_command": env(BUTTON, interaction(7), ANA, CHAN, text="Summarise"),
    "autocomplete": env(BUTTON, interaction(8), ANA, CHAN, text="bil"),
    "agent_subcommand": env(TEXT, interaction(9), ANA, CHAN, text="/agent billing", to_proxy=True),
    "agent_autocomplete": env(BUTTON, interaction(10), ANA, DM, text="bi", to_proxy=True),
    "modal_submit_label": env(BUTTON, interaction(11), ANA, DM, text="feedback"),
    "future_interaction_type": env(NO_SENDER, interaction(12), chat=CHAN),
}
HANDSHAKES = {"ping": (200, b'{"type":1}'), "webhook_events_ping": (204, b"")}


def test_every_sample_has_an_expectation():
    assert sorted(realworld.names(CH)) == sorted([*EXPECTED, *HANDSHAKES])


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_real_world_shapes(name):
    assert ADAPTER.parse(realworld.body(CH, name), [], CH) == (EXPECTED[name],)


def signed(body: bytes, key: nacl.signing.SigningKey = KEY) -> Request:
    stamp = b"1767700000"
    headers = [(b"x-signature-ed25519", key.sign(stamp + body).signature.hex().encode()),
               (b"x-signature-timestamp", stamp)]
    return Request("POST", b"", headers, body)


@pytest.mark.parametrize("name", realworld.names(CH))
def test_signatures_hold_and_only_pings_are_handshakes(name):
    body = realworld.body(CH, name)
    assert ADAPTER.authenticate(CHANNEL, signed(body), 0.0)
    forged = signed(body, nacl.signing.SigningKey(b"\x06" * 32))
    assert not ADAPTER.authenticate(CHANNEL, forged, 0.0)
    reply = ADAPTER.handshake(CHANNEL, signed(body), 0.0)
    assert (reply.status, reply.body) == HANDSHAKES[name] if name in HANDSHAKES else reply is None
    assert ADAPTER.handshake(CHANNEL, forged, 0.0) is None


def test_an_unknown_interaction_type_keeps_its_channel_for_a_chat_binding():
    """A type Discord adds later carries no routable kind, but its channel still names the chat:
    a chat binding of that channel applies (no sender state is touched)."""
    (envelope,) = ADAPTER.parse(realworld.body(CH, "future_interaction_type"), [], CH)
    assert (envelope.kind, envelope.chat_id, envelope.has_sender) == (NO_SENDER, CHAN, False)
