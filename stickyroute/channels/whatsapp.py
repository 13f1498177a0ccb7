"""WhatsApp Cloud API channel: Meta's GET verification, X-Hub-Signature-256, batches split per agent.

Parsing lives in `whatsapp_parse` (one envelope per message and status), splitting and
re-signing in `whatsapp_split`; this module is the adapter the dispatcher talks to.
Source: Meta "WhatsApp Cloud API webhooks", Graph webhooks "Validating payloads" and
"Verification requests".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from urllib.parse import parse_qsl

from stickyroute.channels.base import BodyPart, ItemPath, Request, SplitError, ids_or_positions
from stickyroute.channels.security import (
    META_SIGNATURE_HEADER,
    check_meta_signature,
    meta_signature,
    verification_reply,
)
from stickyroute.channels.whatsapp_parse import load, parse
from stickyroute.channels.whatsapp_split import split_body
from stickyroute.config.model import Agent, Channel, ChannelType
from stickyroute.reply import RawHeaders, Reply
from stickyroute.routing.envelope import Envelope

__all__ = ["WhatsAppAdapter", "load", "parse"]

_SIGNATURE = META_SIGNATURE_HEADER.encode()


def _query(query: bytes) -> dict[str, str]:
    return dict(parse_qsl(query.decode("latin-1")))


class WhatsAppAdapter:
    """The WhatsApp Cloud API webhook (1..n messages and statuses per POST, signed by Meta)."""

    type = ChannelType.WHATSAPP
    lists_agents = False

    def handshake(self, channel: Channel, method: str, query: bytes) -> Reply | None:
        """Meta's GET verification, answered when `verify_token` is set: the raw challenge as
        text/plain, or 403 for a wrong token (field report T14). Else None (forwarded)."""
        if method != "GET" or not channel.verify_token:
            return None
        answer = verification_reply(_query(query), channel.verify_token)
        if answer is None:
            return None
        status, text = answer
        return Reply(status, [(b"content-type", b"text/plain; charset=utf-8")], text.encode())

    def authenticate(self, channel: Channel, request: Request) -> bool:
        """`X-Hub-Signature-256` over the raw body under `app_secret`, when one is set; Meta's
        GET verification (a `hub.mode` query parameter) carries no signature (T14)."""
        if not channel.app_secret:
            return True
        if request.method == "GET" and "hub.mode" in _query(request.query):
            return True
        return check_meta_signature(request.body, request.headers, channel.app_secret)

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
        drop = frozenset({_SIGNATURE})
        out = {}
        for agent, part in bodies.items():
            add = [(_SIGNATURE, meta_signature(part, channel.app_secret).encode())] if channel.app_secret else []
            out[agent] = BodyPart(part, drop, add)
        return out

    def agent_list(self, envelope: Envelope, agents: Sequence[Agent], current: str) -> Reply | None:
        """WhatsApp cannot answer in the webhook reply: None (forwarded to the current agent)."""
        return None
