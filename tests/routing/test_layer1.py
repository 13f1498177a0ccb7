"""Layer 1 (issue #2 "Layer 1 resolution", issue #3 "Layer 2 runs only when Layer 1 resolved to
the channel default"): user binding > thread route (forum topics) > chat binding > default."""

from __future__ import annotations

import pytest

from stickyroute.config.model import Binding, Channel, ChannelType, ThreadRoute
from stickyroute.routing.envelope import Envelope, MessageKind
from stickyroute.routing.layer1 import Layer1, Resolution

GROUP = "-1001000000001"
CHANNEL = Channel(
    name="telegram", type=ChannelType.TELEGRAM, paths=("/webhooks/telegram",), default_agent="general",
    bindings=(Binding("support", user="111"), Binding("billing", chat=GROUP), Binding("sales", user="15550000001")),
    thread_routes=(ThreadRoute(GROUP, "7", "ops-agent"),),
)
LAYER1 = Layer1(CHANNEL)


def env(kind: MessageKind = MessageKind.TEXT, sender: str | None = "333", chat: str | None = "333",
        thread: str | None = None, aliases: tuple[str, ...] | None = None) -> Envelope:
    if aliases is None:
        aliases = (sender,) if sender else ()
    return Envelope("telegram", kind, sender_id=sender, chat_id=chat, thread_id=thread, text="hi",
                    sender_aliases=aliases)


@pytest.mark.parametrize(
    ("envelope", "expected"),
    [
        pytest.param(env(), Resolution("general", "default", True), id="nothing-matches-default"),
        pytest.param(env(sender="111", chat="111"), Resolution("support", "binding", False), id="user-binding"),
        pytest.param(env(sender="111", chat=GROUP, thread="7"), Resolution("support", "binding", False),
                     id="user-binding-beats-thread-route"),
        pytest.param(env(sender="111", chat=GROUP), Resolution("support", "binding", False),
                     id="user-binding-beats-chat-binding"),
        pytest.param(env(chat=GROUP, thread="7"), Resolution("ops-agent", "thread_route", False),
                     id="thread-route"),
        pytest.param(env(chat=GROUP, thread="8"), Resolution("billing", "chat_binding", False),
                     id="other-topic-chat-binding"),
        pytest.param(env(chat=GROUP), Resolution("billing", "chat_binding", False), id="chat-binding"),
        pytest.param(env(chat="-1009", thread="7"), Resolution("general", "default", True),
                     id="thread-id-of-another-chat"),
        pytest.param(env(MessageKind.NO_SENDER, sender=None, chat=GROUP, thread="7"),
                     Resolution("billing", "chat_binding", False), id="no-sender-skips-thread-route"),
        pytest.param(env(MessageKind.NO_SENDER, sender=None, chat="-1009"), Resolution("general", "default", True),
                     id="no-sender-default"),
        pytest.param(env(MessageKind.NO_SENDER, sender="111", chat="-1009"), Resolution("general", "default", True),
                     id="no-sender-kind-skips-user-binding"),
        pytest.param(env(sender="bsuid.1", chat="bsuid.1", aliases=("bsuid.1", "15550000001")),
                     Resolution("sales", "binding", False), id="any-sender-alias-binds"),
        pytest.param(env(MessageKind.STATUS, sender="111", chat="111"), Resolution("support", "binding", False),
                     id="status-goes-to-bound-recipient"),
        pytest.param(env(MessageKind.EDIT, sender="111", chat="111"), Resolution("support", "binding", False),
                     id="edit-of-bound-user"),
    ],
)
def test_resolve(envelope: Envelope, expected: Resolution) -> None:
    assert LAYER1.match(envelope) == expected


def test_channel_without_bindings_is_always_default() -> None:
    bare = Layer1(Channel(name="wa", type=ChannelType.WHATSAPP, paths=("/wa",), default_agent="general"))
    assert bare.match(env(sender="111", chat=GROUP, thread="7")) == Resolution("general", "default", True)
