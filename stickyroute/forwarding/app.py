"""The ASGI shell of the webhook listener: read the body once (capped), hand it over, send the reply.

    create_app(config, handle, lifespan, rejected) -> Starlette

Each configured channel path is a raw ASGI endpoint (`WebhookEndpoint`) mounted in the Starlette
application: it reads the body from `receive` once, capped at `server.max_body_bytes` (413
above it, checked against `Content-Length` before reading), builds an `Inbound` from the scope,
awaits `handle(channel, inbound)` (the dispatcher) and sends the `Reply` as is. Any other path
is 404: a channel path matches only itself (`ExactRoute`: no `{...}` parameters, no trailing
newline). No Request/Response objects on the webhook path: the scope already has what we need.

While the dispatcher runs, the platform's hang-up is watched (`hangup.Watching`: the connection's
own report under the proxy's listener, else `receive` read for `http.disconnect`): a
platform that hangs up cancels the upstream request (its pooled connection is freed at once), the
dispatcher releases the delivery (the platform's retry is forwarded again), and no reply is sent.
What the app answers itself (413 `too_large`, 400 `disconnected`, 404 `not_found`) is reported
to `rejected(channel or None, status, reason)` (the accounting), so every request is counted.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable

from starlette._utils import get_route_path
from starlette.applications import Starlette
from starlette.datastructures import URLPath
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import BaseRoute, Match, NoMatchFound, Route
from starlette.types import Lifespan, Message, Receive, Scope, Send

from stickyroute.config.model import Channel, Config
from stickyroute.forwarding.body import BodyTooLarge, declared_length, read_capped
from stickyroute.forwarding.hangup import Watching
from stickyroute.forwarding.inbound import Inbound
from stickyroute.reply import Reply

__all__ = ["ExactRoute", "WebhookApplication", "WebhookEndpoint", "create_app"]

log = logging.getLogger("stickyroute.dispatch")

Handle = Callable[[Channel, Inbound], Awaitable[Reply]]
Rejected = Callable[[Channel | None, int, str], None]
_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]
_ROUTED = frozenset(_METHODS)
_TEXT = [(b"content-type", b"text/plain; charset=utf-8")]


class _Disconnected(Exception):
    """The client went away before the whole body arrived."""


async def _chunks(receive: Receive) -> AsyncIterator[bytes]:
    while True:
        message: Message = await receive()
        if message["type"] == "http.disconnect":
            raise _Disconnected
        chunk = message.get("body", b"")
        if chunk:
            yield chunk
        if not message.get("more_body", False):
            return


async def _send(send: Send, reply: Reply) -> None:
    headers = [(b"content-length", str(len(reply.body)).encode()), *reply.headers]
    await send({"type": "http.response.start", "status": reply.status, "headers": headers})
    await send({"type": "http.response.body", "body": reply.body})


class WebhookEndpoint:
    """The raw ASGI endpoint of one channel's path(s)."""

    def __init__(self, channel: Channel, handle: Handle, max_body_bytes: int, rejected: Rejected | None = None) -> None:
        self.channel = channel
        self.handle = handle
        self.max_body_bytes = max_body_bytes
        self.rejected = rejected

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers: list[tuple[bytes, bytes]] = list(scope["headers"])
        declared = host = None
        for name, value in headers:
            if name == b"content-length":
                declared = declared_length(value)
            elif name == b"host":
                host = value
        try:
            body = await read_capped(_chunks(receive), self.max_body_bytes, declared)
        except BodyTooLarge as exc:
            if self.rejected is not None:
                self.rejected(self.channel, 413, "too_large")
            await _send(send, Reply(413, list(_TEXT), f"body larger than {exc.limit} bytes".encode()))
            return
        except _Disconnected:
            if self.rejected is not None:
                self.rejected(self.channel, 400, "disconnected")
            await _send(send, Reply(400))
            return
        client = scope.get("client")
        path: str = scope["path"]
        inbound = Inbound(
            method=scope["method"], path=path, raw_path=scope.get("raw_path") or path.encode(),
            query=scope.get("query_string", b""), headers=headers, body=body,
            client_ip=client[0] if client else "", scheme=scope.get("scheme", "http"),
            host=host.decode("latin-1") if host is not None else "",
        )
        async with Watching(receive, scope) as gone:
            reply = await self.handle(self.channel, inbound)
        if gone.done():
            log.warning("the platform hung up on %s %s before the answer (%d not sent)", inbound.method, path,
                        reply.status)
            return
        await _send(send, reply)


class ExactRoute(BaseRoute):
    """A channel path in Starlette's router, matched by equality (as the shortcut does): Starlette's
    `Route` compiles its path to a regex, reading `{...}` as a parameter, and its `$` also matches
    before a final newline (`/webhooks/telegram%0A`). A method outside `_METHODS` is 405."""

    def __init__(self, path: str, app: WebhookEndpoint) -> None:
        self.path = path
        self.app = app

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        if scope["type"] != "http" or get_route_path(scope) != self.path:
            return Match.NONE, {}
        return (Match.FULL if scope["method"] in _ROUTED else Match.PARTIAL), {"endpoint": self.app}

    def url_path_for(self, name: str, /, **path_params: object) -> URLPath:
        raise NoMatchFound(name, path_params)

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["method"] not in _ROUTED:
            raise HTTPException(status_code=405, headers={"Allow": ", ".join(_METHODS)})
        await self.app(scope, receive, send)


class WebhookApplication(Starlette):
    """The Starlette application of the webhook listener, with one shortcut: a request whose path
    is exactly a channel's path (and whose method Starlette would route) goes straight to its
    `WebhookEndpoint`, without the middleware stack and the route scan (the same endpoint
    Starlette's router would reach; measured in README "Performance"). Everything else (other
    paths, lifespan, websockets) goes through Starlette as usual."""

    def __init__(self, endpoints: dict[str, WebhookEndpoint], routes: list[BaseRoute],
                 lifespan: Lifespan[Starlette]) -> None:
        super().__init__(routes=routes, lifespan=lifespan)
        self.endpoints = endpoints

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not scope.get("root_path") and scope["method"] in _ROUTED:
            endpoint = self.endpoints.get(scope["path"])
            if endpoint is not None:
                await endpoint(scope, receive, send)
                return
        await super().__call__(scope, receive, send)


def create_app(config: Config, handle: Handle, lifespan: Lifespan[Starlette] | None = None,
               rejected: Rejected | None = None) -> Starlette:
    """The public webhook app: one `WebhookEndpoint` per channel path, 404 elsewhere."""
    limit = config.server.max_body_bytes
    endpoints = {path: WebhookEndpoint(channel, handle, limit, rejected)
                 for channel in config.channels.values() for path in channel.paths}
    routes: list[BaseRoute] = [ExactRoute(path, endpoint) for path, endpoint in endpoints.items()]

    async def not_found(_request: Request) -> Response:
        if rejected is not None:
            rejected(None, 404, "not_found")
        return PlainTextResponse("not found", status_code=404)

    routes.append(Route("/{path:path}", not_found, methods=_METHODS))
    return WebhookApplication(endpoints, routes, lifespan or _no_lifespan)


@contextlib.asynccontextmanager
async def _no_lifespan(_app: Starlette) -> AsyncIterator[None]:
    yield
