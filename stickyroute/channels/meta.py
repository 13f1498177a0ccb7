"""What every Meta webhook shares (WhatsApp Cloud API, Messenger, Instagram): the GET verification
answered by the proxy and the `X-Hub-Signature-256` check, plus re-signing a split batch's parts.

Source: Meta Graph webhooks, "Verification requests" (`hub.mode=subscribe`, `hub.verify_token`,
`hub.challenge`: answer the bare challenge) and "Validating payloads" (`X-Hub-Signature-256:
sha256=<hex HMAC-SHA256(app secret, raw body)>`).
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import parse_qsl

from stickyroute.channels.base import BodyPart, Request
from stickyroute.channels.security import (
    META_SIGNATURE_HEADER,
    check_meta_signature,
    meta_signature,
    verification_reply,
)
from stickyroute.config.model import Channel
from stickyroute.reply import Reply

__all__ = ["MetaWebhook", "meta_parts"]

_SIGNATURE = META_SIGNATURE_HEADER.encode()
_TEXT = [(b"content-type", b"text/plain; charset=utf-8")]


def _query(query: bytes) -> dict[str, str]:
    return dict(parse_qsl(query.decode("latin-1")))


class MetaWebhook:
    """The handshake and authentication of a Meta webhook channel (`app_secret`, `verify_token`)."""

    def handshake(self, channel: Channel, request: Request, now: float) -> Reply | None:
        """Meta's GET verification, answered when `verify_token` is set: the raw challenge as
        text/plain, or 403 for a wrong token (field report T14). Else None (forwarded)."""
        if request.method != "GET" or not channel.verify_token:
            return None
        answer = verification_reply(_query(request.query), channel.verify_token)
        if answer is None:
            return None
        status, text = answer
        return Reply(status, list(_TEXT), text.encode())

    def authenticate(self, channel: Channel, request: Request, now: float) -> bool:
        """`X-Hub-Signature-256` over the raw body under `app_secret`, when one is set; Meta's
        GET verification (a `hub.mode` query parameter) carries no signature (T14)."""
        if not channel.app_secret:
            return True
        if request.method == "GET" and "hub.mode" in _query(request.query):
            return True
        return check_meta_signature(request.body, request.headers, channel.app_secret)


def meta_parts(channel: Channel, bodies: Mapping[str, bytes]) -> dict[str, BodyPart]:
    """Each agent's part of a split Meta batch, re-signed with `app_secret` (without one, the
    original signature is dropped all the same: it would not match the part)."""
    drop = frozenset({_SIGNATURE})
    secret = channel.app_secret
    return {agent: BodyPart(part, drop, [(_SIGNATURE, meta_signature(part, secret).encode())] if secret else [])
            for agent, part in bodies.items()}
