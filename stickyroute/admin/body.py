"""The admin listener's body cap: no request body over `[admin] max_body_bytes` is read, on any
route (the open `POST /v1/session` and `POST /v1/hints` too), before any handler or check runs.

A `Content-Length` over the cap is answered 413 at once; a body without one (chunked) is
counted as it is received and answered 413 the moment it passes the cap. Both answers carry
`Connection: close`, so uvicorn closes the connection and reads none of the rest.

Any other answer that a handler sends before reading the whole body (a 401, the throttle's 429, a
404) first reads the rest of it (at most the cap, within the listener's `body_timeout_s`): the
listener's `EdgeProtocol` closes a connection whose answer went out before its request's body
arrived, and a client still sending that body then sees the connection reset, maybe before it
reads the answer.
"""

from __future__ import annotations

from collections.abc import Callable

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from stickyroute.admin.errors import error_response
from stickyroute.forwarding.body import BodyTooLarge, declared_length

__all__ = ["BodyCap"]


class BodyCap:
    """ASGI middleware: 413 for a body over `limit()` bytes (read live: a reload applies at once)."""

    def __init__(self, app: ASGIApp, limit: Callable[[], int]) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.limit()
        declared = next((declared_length(v) for n, v in scope["headers"] if n == b"content-length"), None)
        if declared is not None and declared > limit:
            await _too_large(limit)(scope, receive, send)
            return
        received = 0
        started = False
        finished = False

        async def capped() -> Message:
            nonlocal received, finished
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    raise BodyTooLarge(limit)
                finished = not message.get("more_body", False)
            else:  # http.disconnect
                finished = True
            return message

        async def tracked(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start" and not finished:
                while not finished:  # an early answer (401, 429, 404) waits for the rest of the body
                    await capped()
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, capped, tracked)
        except BodyTooLarge:
            if started:
                raise
            await _too_large(limit)(scope, receive, send)


def _too_large(limit: int) -> JSONResponse:
    return error_response(413, "too large", f"request body larger than {limit} bytes ([admin] max_body_bytes)",
                          headers={"connection": "close"})
