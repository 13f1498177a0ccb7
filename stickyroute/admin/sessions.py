"""Browser sessions of the admin listener: `POST /v1/session` trades the admin token for a
random session id in an HttpOnly cookie; the token itself never goes into a cookie.

    session = sessions.open(token, now, max_age_s)     a new id (256 random bits, URL-safe)
    sessions.valid(session, token, now)                 live, and opened with the token running now
    sessions.close(session)                             revoked (DELETE /v1/session)

Kept in this process (per worker with `serve --workers N`: a browser signs in again when the
admin listener moves to another worker, see docs/security.md). Only a digest of each id is
kept, with its expiry and a digest of the admin token it was opened with: a reload that changes
the token ends every session. At most `max_sessions` are kept (the least recently used is
dropped first). Time is an argument (seconds, the service's clock).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

from cachetools import LRUCache

__all__ = ["MAX_SESSIONS", "Sessions"]

MAX_SESSIONS = 1024
"""Sessions kept at most; a browser whose session was dropped signs in again."""


def _digest(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


class Sessions:
    """The live sessions of this process (see the module docstring)."""

    def __init__(self, max_sessions: int = MAX_SESSIONS) -> None:
        self._live: LRUCache[bytes, tuple[float, bytes]] = LRUCache(maxsize=max_sessions)
        """digest of the id -> (expires at, digest of the admin token it was opened with)"""

    def __len__(self) -> int:
        return len(self._live)

    def open(self, token: str, now: float, max_age_s: float) -> str:
        """A new session for the admin `token`, valid `max_age_s` seconds from `now`."""
        session = secrets.token_urlsafe(32)
        self._live[_digest(session)] = (now + max_age_s, _digest(token))
        return session

    def valid(self, session: str | None, token: str | None, now: float) -> bool:
        """True when `session` is live at `now` and was opened with `token` (the running one)."""
        if not session or not token:
            return False
        key = _digest(session)
        found = self._live.get(key)
        if found is None:
            return False
        expires_at, opened_with = found
        if now >= expires_at:
            self._live.pop(key, None)
            return False
        return hmac.compare_digest(opened_with, _digest(token))

    def close(self, session: str | None) -> bool:
        """Revoke `session`; False when it was not live."""
        if not session:
            return False
        return self._live.pop(_digest(session), None) is not None
