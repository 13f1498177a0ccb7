"""Channel adapters: one pure parser per platform, raw webhook body -> envelopes.

    PARSERS[channel_type](body: bytes, channel: str) -> tuple[Envelope, ...]

Telegram yields exactly one envelope per body, WhatsApp 1..n (one per message or status).
Every parser raises `proxy.errors.UnparsedUpdate` for a body that is not JSON or not a known
shape of its platform; any other body yields envelopes (unknown kinds as NO_SENDER).
"""

from __future__ import annotations

from typing import Callable

from proxy.channels import telegram, whatsapp
from proxy.config.model import ChannelType
from proxy.routing.envelope import Envelope

Parser = Callable[[bytes, str], tuple[Envelope, ...]]

PARSERS: dict[str, Parser] = {
    "telegram": telegram.parse,
    "whatsapp": whatsapp.parse,
}
"""Channel type (`ChannelType.value`) -> its parser."""


def parse(channel_type: str | ChannelType, body: bytes, channel: str) -> tuple[Envelope, ...]:
    """Parse `body` with the adapter of `channel_type`; `channel` is the config channel name.

    Raises ValueError for a channel type without an adapter, UnparsedUpdate for a bad body.
    """
    key = channel_type.value if isinstance(channel_type, ChannelType) else channel_type
    try:
        parser = PARSERS[key]
    except KeyError:
        raise ValueError(f"no channel adapter for type {key!r}") from None
    return parser(body, channel)
