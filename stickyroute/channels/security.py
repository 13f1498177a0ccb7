"""Edge authentication of inbound webhooks: Telegram secret token, Meta, Slack, LINE and Discord
signatures, Meta GET handshake.

Pure functions. `headers` is either ASGI raw headers (`list[tuple[bytes, bytes]]`) or a mapping
of header name to value (e.g. Starlette `Headers`); names match case-insensitively, the first
occurrence wins. Every secret comparison is constant time (`hmac.compare_digest` on bytes).
An empty configured secret never matches (fail closed): callers check only when a secret is set.

Sources: Telegram Bot API `setWebhook` (`secret_token`, sent as
`X-Telegram-Bot-Api-Secret-Token`); Meta Graph webhooks "Validating payloads"
(`X-Hub-Signature-256: sha256=<hex HMAC-SHA256(app secret, raw body)>`) and "Verification
requests" (`hub.mode=subscribe`, `hub.verify_token`, `hub.challenge`: answer the bare challenge);
Slack "Verifying requests from Slack" (`X-Slack-Signature: v0=<hex HMAC-SHA256(signing secret,
"v0:" + X-Slack-Request-Timestamp + ":" + raw body)>`, refused more than 5 minutes from now);
LINE "Verify webhook signature" (`X-Line-Signature: base64(HMAC-SHA256(channel secret, raw
body))`); Discord "Receiving and responding", security (`X-Signature-Ed25519`: hex Ed25519
signature of `X-Signature-Timestamp` + raw body under the application's public key).
"""

from __future__ import annotations

import base64
import binascii
import functools
import hashlib
import hmac
from collections.abc import Iterable, Mapping

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from stickyroute.config.ids import ascii_int

HeadersLike = Iterable[tuple[bytes, bytes]] | Mapping[str, str]

TELEGRAM_SECRET_HEADER = "x-telegram-bot-api-secret-token"
META_SIGNATURE_HEADER = "x-hub-signature-256"
SLACK_SIGNATURE_HEADER = "x-slack-signature"
SLACK_TIMESTAMP_HEADER = "x-slack-request-timestamp"
SLACK_MAX_AGE_S = 300.0
"""A Slack request whose timestamp is further than this from now (seconds, either way) is refused."""
LINE_SIGNATURE_HEADER = "x-line-signature"
DISCORD_SIGNATURE_HEADER = "x-signature-ed25519"
DISCORD_TIMESTAMP_HEADER = "x-signature-timestamp"
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


def slack_signature(body: bytes, timestamp: str, signing_secret: str) -> str:
    """The `X-Slack-Signature` value: `v0=<hex HMAC-SHA256(secret, "v0:<timestamp>:<body>")>`."""
    base = b"v0:" + timestamp.encode("ascii") + b":" + body
    return "v0=" + hmac.new(signing_secret.encode("utf-8"), base, hashlib.sha256).hexdigest()


def check_slack_signature(body: bytes, headers: HeadersLike, signing_secret: str, now: float) -> bool:
    """True when `X-Slack-Signature` signs the raw `body` with `X-Slack-Request-Timestamp` under
    `signing_secret` (constant time) and that timestamp (ASCII digits, seconds) is within
    `SLACK_MAX_AGE_S` of `now`. False when a header is missing or `signing_secret` is empty."""
    received = _header(headers, SLACK_SIGNATURE_HEADER)
    stamp = _header(headers, SLACK_TIMESTAMP_HEADER)
    if received is None or stamp is None or not signing_secret:
        return False
    text = stamp.strip().decode("latin-1")
    seconds = ascii_int(text) if len(text) <= 12 else None
    if seconds is None or seconds < 0 or abs(now - seconds) > SLACK_MAX_AGE_S:
        return False
    expected = slack_signature(body, text, signing_secret).encode("ascii")
    return hmac.compare_digest(received.strip().lower(), expected)


def line_signature(body: bytes, channel_secret: str) -> str:
    """The `X-Line-Signature` value: base64 of HMAC-SHA256(channel secret, raw body)."""
    digest = hmac.new(channel_secret.encode("utf-8"), body, hashlib.sha256).digest()
    return base64.b64encode(digest).decode("ascii")


def check_line_signature(body: bytes, headers: HeadersLike, channel_secret: str) -> bool:
    """True when `X-Line-Signature` is the base64 HMAC-SHA256 of the raw `body` under
    `channel_secret` (decoded and compared in constant time); False when the header is missing,
    not base64, or `channel_secret` is empty."""
    received = _header(headers, LINE_SIGNATURE_HEADER)
    if received is None or not channel_secret:
        return False
    try:
        digest = base64.b64decode(received.strip(), validate=True)
    except (binascii.Error, ValueError):
        return False
    expected = hmac.new(channel_secret.encode("utf-8"), body, hashlib.sha256).digest()
    return hmac.compare_digest(digest, expected)


@functools.lru_cache(maxsize=64)
def _ed25519_key(public_key_hex: str) -> Ed25519PublicKey:
    return Ed25519PublicKey.from_public_bytes(bytes.fromhex(public_key_hex))


def check_discord_signature(body: bytes, headers: HeadersLike, public_key_hex: str) -> bool:
    """True when `X-Signature-Ed25519` (hex) is a valid Ed25519 signature of
    `X-Signature-Timestamp` + raw `body` under the application's public key (64 hex digits);
    False when a header is missing or malformed, or the key is empty or malformed."""
    signature = _header(headers, DISCORD_SIGNATURE_HEADER)
    stamp = _header(headers, DISCORD_TIMESTAMP_HEADER)
    if signature is None or stamp is None or not public_key_hex:
        return False
    try:
        key = _ed25519_key(public_key_hex.strip().lower())
        key.verify(bytes.fromhex(signature.strip().decode("ascii")), stamp + body)
    except (ValueError, UnicodeDecodeError, InvalidSignature):
        return False
    return True
