"""Who may use the admin listener: probes for everyone, the rest with the `[admin] token`.

    /healthz, /readyz, /metrics       open (probes and scrapers)
    POST/DELETE /v1/session           open (sign in / out: sets or clears the session cookie)
    GET /, /dashboard/*               open (the dashboard's page and files; its data comes from the API)
    POST /v1/hints                    the agent API: an agent's own token (proxy.admin.hints)
    everything else                   `Authorization: Bearer <token>`, or the session cookie

Without a configured token every other route answers 401 with a hint to set one (the API is
closed, not open). The token is read from the running config on each request (a reload that
changes it applies at once) and compared in constant time. The cookie (`stickyroute_admin`,
HttpOnly, SameSite=Strict, path /, Max-Age `[admin] session_max_age_s`, Secure with `[admin]
behind_tls`) holds a random session id (proxy.admin.sessions), never the token; it lets a
browser page use the API and its event stream, which cannot send headers (`EventSource`);
SameSite=Strict keeps other sites from using it, and a request authenticated by the cookie that
changes something (any method but GET, HEAD, OPTIONS) must also carry `X-Stickyroute-Request`
(the dashboard's fetch sets it; a form or a link on another site cannot, and a cross-origin
script would need a CORS pre-flight this app never grants): without it, 403. The Bearer header
needs no such proof (a browser never adds it).

Every route that checks a guessable credential (the Bearer token here, the token of `POST
/v1/session`, an agent's token on `POST /v1/hints`) goes through `throttle_check` first and
reports wrong ones to the client address's throttle (proxy.admin.throttle): past `[admin]
auth_failures` in `auth_window_s`, 429 with Retry-After. A session cookie is not guessable (256
random bits): a signed-in browser keeps working from a throttled address.
"""

from __future__ import annotations

import hmac

from starlette.requests import HTTPConnection
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from stickyroute.admin.errors import error_response
from stickyroute.admin.ports import AdminOps
from stickyroute.admin.throttle import client_address, too_many

__all__ = ["COOKIE", "CSRF_HEADER", "OPEN_PATHS", "OPEN_PREFIXES", "BearerAuth", "throttle_check",
           "throttle_record", "token_matches"]

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
SESSION_DETAIL = "the session expired or was signed out: sign in again"


def token_matches(given: str | None, token: str | None) -> bool:
    """True when `given` is the configured `token` (constant-time; never with no token)."""
    if not token or not given:
        return False
    return hmac.compare_digest(given.encode("utf-8", "surrogatepass"), token.encode("utf-8", "surrogatepass"))


def throttle_check(ops: AdminOps, scope: Scope) -> tuple[str, Response | None]:
    """The client address the throttle counts, and the 429 to answer when it is throttled now."""
    settings = ops.admin()
    address = client_address(scope, settings.trusted_proxies)
    wait = ops.throttle.retry_after(address, ops.now(), settings.auth_failures, settings.auth_window_s)
    return address, None if wait is None else too_many(wait)


def throttle_record(ops: AdminOps, address: str, ok: bool) -> None:
    """Report presented credentials of `address`: right (`ok`) or wrong."""
    if ok:
        ops.throttle.succeeded(address)
        return
    settings = ops.admin()
    ops.throttle.failed(address, ops.now(), settings.auth_failures, settings.auth_window_s)


class BearerAuth:
    """ASGI middleware in front of the admin app (see the module docstring)."""

    def __init__(self, app: ASGIApp, ops: AdminOps) -> None:
        self.app = app
        self.ops = ops

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope["path"]
        if scope["type"] != "http" or path in OPEN_PATHS or path.startswith(OPEN_PREFIXES):
            await self.app(scope, receive, send)
            return
        ops = self.ops
        token = ops.token()
        connection = HTTPConnection(scope)
        scheme, _, credentials = connection.headers.get("authorization", "").partition(" ")
        if scheme.lower() == "bearer":
            address, refusal = throttle_check(ops, scope)
            if refusal is not None and token:
                await refusal(scope, receive, send)
                return
            given = credentials.strip()
            if token_matches(given, token):
                throttle_record(ops, address, True)
                await self.app(scope, receive, send)
                return
            if given and token:
                throttle_record(ops, address, False)
            detail = "wrong token" if given else "missing Authorization: Bearer <token>"
        else:
            session = connection.cookies.get(COOKIE)
            if ops.sessions.valid(session, token, ops.now()):
                if scope["method"] not in SAFE_METHODS and CSRF_HEADER not in connection.headers:
                    await error_response(403, "forbidden", CSRF_DETAIL)(scope, receive, send)
                    return
                await self.app(scope, receive, send)
                return
            detail = SESSION_DETAIL if session else "missing Authorization: Bearer <token>"
        if not token:
            detail = "no admin token is configured"
        challenge = {"www-authenticate": 'Bearer realm="stickyroute"'}
        response = error_response(401, "unauthorized", detail, headers=challenge,
                                  hint=NO_TOKEN_HINT if not token else BAD_TOKEN_HINT)
        await response(scope, receive, send)
