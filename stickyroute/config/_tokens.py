"""Tokens that callers send as `Authorization: Bearer <token>` (the admin API, the agent API)."""

from __future__ import annotations


def bearer_token_problem(token: str) -> str | None:
    """Why `token` cannot be a bearer token (None: it can): it travels in an `Authorization`
    header (read as Latin-1) and in the dashboard's cookie, so only printable ASCII without
    spaces matches reliably (RFC 6750 b64token is narrower still)."""
    if token and token.isascii() and token.isprintable() and " " not in token:
        return None
    return "expected printable ASCII without spaces (it is sent in an Authorization header)"
