"""Edge authentication of inbound webhooks: Telegram secret token, Meta signature, Meta GET handshake.

Pure functions. `headers` is either ASGI raw headers (`list[tuple[bytes, bytes]]`) or a mapping
of header name to value (e.g. Starlette `Headers`); names match case-insensitively, the first
occurrence wins. Every secret comparison is constant time (`hmac.compare_digest` on bytes).
An empty configured secret never matches (fail closed): callers check only when a secret is set.

Sources: Telegram Bot API `setWebhook` (`secret_token`, sent as
`X-Telegram-Bot-Api-Secret-Token`); Meta Graph webhooks "Validating payloads"
(`X-Hub-Signature-256: sha256=<hex HMAC-SHA256(app secret, raw body)>`) and "Verification
requests" (`hub.mode=subscribe`, `hub.verify_token`, `hub.challenge`: answer the bare challenge).
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterable, Mapping

HeadersLike = Iterable[tuple[bytes, bytes]] | Mapping[str, str]

TELEGRAM_SECRET_HEADER = "x-telegram-bot-api-secret-token"
META_SIGNATURE_HEADER = "x-hub-signature-256"
_SHA256_PREFIX = b"sha256="


def _header(headers: HeadersLike, name: str) -> bytes | None:
    """First value of header `name` (lower case) as bytes, or None."""
    items = headers.items() if isinstance(headers, Mapping) else headers
    for key, value in items:
        key_text = key.decode("latin-1") if isinstance(key, bytes) else key
        if key_text.lower() == name:
            return value if isinstance(value, bytes) else value.encode("latin-1", "replace")
    return None


def check_telegram_secret(headers: HeadersLike, expected: str) -> bool:
    """True when `X-Telegram-Bot-Api-Secret-Token` equals `expected` (constant time).

    False when the header is missing or `expected` is empty.
    """
    received = _header(headers, TELEGRAM_SECRET_HEADER)
    if received is None or not expected:
        return False
    return hmac.compare_digest(received, expected.encode("utf-8"))


def meta_signature(body: bytes, app_secret: str) -> str:
    """The `X-Hub-Signature-256` value for `body`: `sha256=<lower-case hex HMAC-SHA256>`."""
    return "sha256=" + hmac.new(app_secret.encode("utf-8"), body, hashlib.sha256).hexdigest()


def check_meta_signature(body: bytes, headers: HeadersLike, app_secret: str) -> bool:
    """True when `X-Hub-Signature-256` is the HMAC-SHA256 of the raw `body` under `app_secret`.

    The hex digest matches in any letter case; the comparison is constant time. False when the
    header is missing, lacks the `sha256=` prefix, or `app_secret` is empty.
    """
    received = _header(headers, META_SIGNATURE_HEADER)
    if received is None or not app_secret or received[:7].lower() != _SHA256_PREFIX:
        return False
    expected = meta_signature(body, app_secret).encode("ascii")
    return hmac.compare_digest(_SHA256_PREFIX + received[7:].strip().lower(), expected)


def verification_reply(query: Mapping[str, str], verify_token: str) -> tuple[int, str] | None:
    """The proxy's answer to a Meta GET verification, as (status, text/plain body).

    `query` is the decoded query (e.g. Starlette `QueryParams`). A request carrying none of
    `hub.mode`, `hub.verify_token`, `hub.challenge` is not a verification: None (forward it).
    Otherwise (200, challenge) when `hub.mode` is `subscribe`, a challenge is present and the
    token matches `verify_token` (constant time); else (403, "forbidden").
    """
    mode = query.get("hub.mode")
    token = query.get("hub.verify_token")
    challenge = query.get("hub.challenge")
    if mode is None and token is None and challenge is None:
        return None
    token_ok = (
        token is not None
        and bool(verify_token)
        and hmac.compare_digest(token.encode("utf-8"), verify_token.encode("utf-8"))
    )
    if mode == "subscribe" and challenge is not None and token_ok:
        return 200, challenge
    return 403, "forbidden"
