"""WhatsApp Cloud API channel: Meta's GET verification, X-Hub-Signature-256, batches split per agent.

Parsing lives in `whatsapp_parse` (one envelope per message and status), splitting and
re-signing in `whatsapp_split`; this module is the adapter the dispatcher talks to.
Source: Meta "WhatsApp Cloud API webhooks", Graph webhooks "Validating payloads" and
"Verification requests".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from stickyroute.channels.base import BodyPart, ItemPath, SplitError, ids_or_positions
from stickyroute.channels.meta import MetaWebhook, meta_parts
from stickyroute.channels.whatsapp_parse import load, parse
from stickyroute.channels.whatsapp_split import split_body
from stickyroute.config.model import Agent, Channel, ChannelType
from stickyroute.reply import RawHeaders, Reply
from stickyroute.routing.envelope import Envelope

__all__ = ["WhatsAppAdapter", "load", "parse"]


class WhatsAppAdapter(MetaWebhook):
    """The WhatsApp Cloud API webhook (1..n messages and statuses per POST, signed by Meta)."""

    type = ChannelType.WHATSAPP
    lists_agents = False

    def parse(self, body: bytes, headers: RawHeaders, channel: str) -> tuple[Envelope, ...]:
        """Every message and status of every change of every entry (`whatsapp_parse.parse`)."""
        return parse(body, channel)

    def delivery_ids(self, envelopes: Sequence[Envelope], body: bytes) -> list[str]:
        """wamid for messages, `<id>:<status>` for statuses, a body position for account events."""
        return ids_or_positions(envelopes, body)

    def split(self, channel: Channel, body: bytes, parts: Mapping[str, Sequence[ItemPath]]) -> dict[str, BodyPart]:
        """One body per agent (`whatsapp_split.split_body`), each re-signed with `app_secret`
        (without it, the original signature is dropped: it would not match the part)."""
        try:
            bodies = split_body(body, parts)
        except (ValueError, RecursionError) as exc:
            raise SplitError(f"cannot split the batch: {exc}") from exc
        return meta_parts(channel, bodies)

    def agent_list(self, envelope: Envelope, agents: Sequence[Agent], current: str) -> Reply | None:
        """WhatsApp cannot answer in the webhook reply: None (forwarded to the current agent)."""
        return None
