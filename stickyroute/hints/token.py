"""Conversation tokens: the signed, expiring reference to a conversation that a forwarded request
carries in `X-Stickyroute-Conversation` (issue #12), for agents that answer asynchronously.

    <payload>.<mac>    both base64url without padding
    payload            channel U+001F digest U+001F version U+001F expires_at
    mac                the first 16 bytes of HMAC-SHA256(secret, payload)

`digest` is `ConversationKey.digest` (32 hex of SHA-256 over the key's parts: no raw chat or user
id), `version` the route's `chosen_at` (`repr` float) when the request was forwarded, `expires_at`
whole seconds on the proxy's clock (the channel's route TTL after forwarding). The token is
opaque to agents: they hand it back unchanged to `POST /v1/hints`.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import math
import secrets
from dataclasses import dataclass

from stickyroute.errors import StickyrouteError

__all__ = ["ConversationTokens", "TokenClaims", "TokenRejected"]

_MAC_BYTES = 16
_SEP = "\x1f"
MAX_TOKEN_CHARS = 1024
"""Anything longer is not one of ours (bounds the work on a forged value)."""


class TokenRejected(StickyrouteError):
    """A conversation token that is malformed, forged (bad MAC) or expired; `reason` says which."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class TokenClaims:
    """What a valid token says: channel, key digest (32 hex), route version, expiry (seconds)."""

    channel: str
    digest: str
    version: float
    expires_at: float


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.b64decode(text + "=" * (-len(text) % 4), altchars=b"-_", validate=True)


class ConversationTokens:
    """Mints and reads conversation tokens under one HMAC key.

    `secret` None: a random 32-byte key for this process (tokens die with it; replicas need a
    shared `[hints] secret`).
    """

    def __init__(self, secret: str | None) -> None:
        self.ephemeral = secret is None
        self._key = secrets.token_bytes(32) if secret is None else secret.encode("utf-8")

    def _mac(self, payload: bytes) -> bytes:
        return hmac.new(self._key, payload, hashlib.sha256).digest()[:_MAC_BYTES]

    def mint(self, channel: str, digest: str, version: float, expires_at: float) -> str:
        """A token for the conversation `digest` of `channel` at route `version`, valid until
        `expires_at` (seconds, rounded up to a whole second)."""
        payload = _SEP.join((channel, digest, repr(version), str(math.ceil(expires_at)))).encode("utf-8")
        return f"{_b64(payload)}.{_b64(self._mac(payload))}"

    def read(self, token: str, now: float) -> TokenClaims:
        """The claims of a valid token at `now`. Raises TokenRejected("malformed" | "forged" |
        "expired")."""
        if len(token) > MAX_TOKEN_CHARS or token.count(".") != 1:
            raise TokenRejected("malformed")
        head, mac = token.split(".")
        try:
            payload, signature = _unb64(head), _unb64(mac)
        except (binascii.Error, ValueError):
            raise TokenRejected("malformed") from None
        if not hmac.compare_digest(signature, self._mac(payload)):
            raise TokenRejected("forged")
        try:
            channel, digest, version, expires = payload.decode("utf-8").split(_SEP)
            claims = TokenClaims(channel, digest, float(version), float(expires))
        except ValueError:
            raise TokenRejected("malformed") from None
        if now >= claims.expires_at:
            raise TokenRejected("expired")
        return claims
