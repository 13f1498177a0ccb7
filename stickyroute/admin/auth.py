"""Who may use the admin listener: probes for everyone, the rest with the `[admin] token`.

    /healthz, /readyz, /metrics       open (probes and scrapers)
    POST/DELETE /v1/session           open (sign in / out: sets or clears the session cookie)
    GET /, /dashboard/*               open (the dashboard's page and files; its data comes from the API)
    POST /v1/hints                    the agent API: an agent's own token (proxy.admin.hints)
    everything else                   `Authorization: Bearer <token>`, or the session cookie

Without a configured token every other route answers 401 with a hint to set one (the API is
closed, not open). The token is read from the running config on each request (a reload that
changes it applies at once) and compared in constant time. The cookie (`stickyroute_admin`,
HttpOnly, SameSite=Strict, path /) lets a browser page use the API and its event stream, which
cannot send headers (`EventSource`); SameSite=Strict keeps other sites from using it, and a
request authenticated by the cookie that changes something (any method but GET, HEAD, OPTIONS)
must also carry `X-Stickyroute-Request` (the dashboard's fetch sets it; a form or a link on
another site cannot, and a cross-origin script would need a CORS pre-flight this app never
grants): without it, 403. The Bearer header needs no such proof (a browser never adds it).
"""

from __future__ import annotations

import hmac
from collections.abc import Callable

from starlette.requests import HTTPConnection
from starlette.types import ASGIApp, Receive, Scope, Send

from stickyroute.admin.errors import error_response

__all__ = ["COOKIE", "CSRF_HEADER", "OPEN_PATHS", "OPEN_PREFIXES", "BearerAuth", "token_matches"]

COOKIE = "stickyroute_admin"
CSRF_HEADER = "x-stickyroute-request"
OPEN_PATHS = frozenset({"/healthz", "/readyz", "/metrics", "/v1/session", "/v1/hints", "/"})
OPEN_PREFIXES = ("/dashboard/",)
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
CSRF_DETAIL = ("a change authenticated by the session cookie needs the X-Stickyroute-Request header (the dashboard "
               "sends it), or send Authorization: Bearer <token>")
NO_TOKEN_HINT = ('the admin API is off: set [admin] token in the config (e.g. token = "${STICKYROUTE_ADMIN_TOKEN}"), '
                 "reload or restart, and send Authorization: Bearer <token>; /healthz, /readyz and /metrics need none")
BAD_TOKEN_HINT = "send Authorization: Bearer <token> with the [admin] token of the running config"


def token_matches(given: str | None, token: str | None) -> bool:
    """True when `given` is the configured `token` (constant-time; never with no token)."""
    if not token or not given:
        return False
    return hmac.compare_digest(given.encode("utf-8", "surrogatepass"), token.encode("utf-8", "surrogatepass"))


class BearerAuth:
    """ASGI middleware in front of the admin app (see the module docstring)."""

    def __init__(self, app: ASGIApp, token: Callable[[], str | None]) -> None:
        self.app = app
        self.token = token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope["path"]
        if scope["type"] != "http" or path in OPEN_PATHS or path.startswith(OPEN_PREFIXES):
            await self.app(scope, receive, send)
            return
        token = self.token()
        connection = HTTPConnection(scope)
        given = None
        scheme, _, credentials = connection.headers.get("authorization", "").partition(" ")
        by_cookie = scheme.lower() != "bearer"
        if not by_cookie:
            given = credentials.strip()
        else:
            given = connection.cookies.get(COOKIE)
        if token_matches(given, token):
            if by_cookie and scope["method"] not in SAFE_METHODS and CSRF_HEADER not in connection.headers:
                await error_response(403, "forbidden", CSRF_DETAIL)(scope, receive, send)
                return
            await self.app(scope, receive, send)
            return
        hint = NO_TOKEN_HINT if not token else BAD_TOKEN_HINT
        detail = "no admin token is configured" if not token else (
            "wrong token" if given else "missing Authorization: Bearer <token>")
        challenge = {"www-authenticate": 'Bearer realm="stickyroute"'}
        response = error_response(401, "unauthorized", detail, headers=challenge, hint=hint)
        await response(scope, receive, send)
