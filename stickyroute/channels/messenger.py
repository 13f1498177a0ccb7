"""Messenger and Instagram channels: Meta's GET verification and X-Hub-Signature-256 (shared with
WhatsApp, `channels.meta`), one envelope per messaging event (`meta_messaging`), mixed batches
split per agent and re-signed with the app secret (`meta_split`).

The two platforms send the same webhook shape (`object` "page" for Messenger, "instagram" for
Instagram); each channel type reads both, so one callback URL may serve a Page and its Instagram
account. Meta ignores the reply's body: `/agent` alone goes to the current agent.
Source: Meta "Messenger Platform webhooks", "Instagram Messaging webhooks".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from stickyroute.channels.base import BodyPart, ItemPath, SplitError, ids_or_positions
from stickyroute.channels.meta import MetaWebhook, meta_parts
from stickyroute.channels.meta_messaging import parse
from stickyroute.channels.meta_split import split_body
from stickyroute.config.model import Agent, Channel, ChannelType
from stickyroute.reply import RawHeaders, Reply
from stickyroute.routing.envelope import Envelope

__all__ = ["MessagingAdapter"]


class MessagingAdapter(MetaWebhook):
    """A Messenger or Instagram webhook (1..n entries per POST, signed by Meta)."""

    lists_agents = False

    def __init__(self, kind: ChannelType) -> None:
        self.type = kind

    def parse(self, body: bytes, headers: RawHeaders, channel: str) -> tuple[Envelope, ...]:
        """Every item of every entry (`meta_messaging.parse`); UnparsedUpdate for a bad body."""
        return parse(body, channel)

    def delivery_ids(self, envelopes: Sequence[Envelope], body: bytes) -> list[str]:
        """mid, postback / read / reaction keys (`meta_messaging`), else a body position."""
        return ids_or_positions(envelopes, body)

    def split(self, channel: Channel, body: bytes, parts: Mapping[str, Sequence[ItemPath]]) -> dict[str, BodyPart]:
        """One body per agent (`meta_split.split_body`), each re-signed with `app_secret`."""
        try:
            bodies = split_body(body, parts)
        except (ValueError, RecursionError) as exc:
            raise SplitError(f"cannot split the batch: {exc}") from exc
        return meta_parts(channel, bodies)

    def agent_list(self, envelope: Envelope, agents: Sequence[Agent], current: str) -> Reply | None:
        """Meta cannot answer in the webhook reply: None (forwarded to the current agent)."""
        return None
