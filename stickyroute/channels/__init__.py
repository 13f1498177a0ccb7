"""Channel adapters: one module per platform behind one registry keyed by `ChannelType`.

    ADAPTERS[channel.type] -> ChannelAdapter   (protocol in `stickyroute.channels.base`)

Adding a platform is one module (its adapter class) and one line in `ADAPTERS`. The dispatcher
asks the adapter; it never branches on the platform.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from stickyroute.channels.base import BodyPart, ChannelAdapter, ItemPath, Request, SplitError
from stickyroute.channels.discord import DiscordAdapter
from stickyroute.channels.line import LineAdapter
from stickyroute.channels.messenger import MessagingAdapter
from stickyroute.channels.slack import SlackAdapter
from stickyroute.channels.telegram import TelegramAdapter
from stickyroute.channels.whatsapp import WhatsAppAdapter
from stickyroute.config.model import ChannelType
from stickyroute.routing.envelope import Envelope

__all__ = [
    "ADAPTERS", "BodyPart", "ChannelAdapter", "ItemPath", "Request", "SplitError", "adapter", "lists_agents",
    "parse",
]

ADAPTERS: Mapping[ChannelType, ChannelAdapter] = MappingProxyType({
    ChannelType.TELEGRAM: TelegramAdapter(),
    ChannelType.WHATSAPP: WhatsAppAdapter(),
    ChannelType.SLACK: SlackAdapter(),
    ChannelType.DISCORD: DiscordAdapter(),
    ChannelType.LINE: LineAdapter(),
    ChannelType.MESSENGER: MessagingAdapter(ChannelType.MESSENGER),
    ChannelType.INSTAGRAM: MessagingAdapter(ChannelType.INSTAGRAM),
})
"""Channel type -> its adapter."""


def adapter(channel_type: ChannelType | str) -> ChannelAdapter:
    """The adapter of `channel_type` (a `ChannelType` or its value); ValueError when none."""
    try:
        return ADAPTERS[ChannelType(channel_type)]
    except (KeyError, ValueError):
        raise ValueError(f"no channel adapter for type {channel_type!r}") from None


def lists_agents(channel_type: ChannelType) -> bool:
    """Whether the proxy answers `/agent` alone itself on this platform."""
    return adapter(channel_type).lists_agents


def parse(channel_type: ChannelType | str, body: bytes, channel: str) -> tuple[Envelope, ...]:
    """Parse `body` with the adapter of `channel_type`; `channel` is the config channel name.

    Raises ValueError for a channel type without an adapter, UnparsedUpdate for a bad body.
    """
    return adapter(channel_type).parse(body, [], channel)
