"""The recent decisions, as a list and as a live stream of server-sent events.

    GET /v1/decisions?limit=&channel=          newest first (the in-memory ring, last 1000)
    GET /v1/decisions/stream?channel=          text/event-stream: `id: N`, `event: decision`,
                                               `data: {...}` per decision; `: keep-alive` every 15 s

A reconnecting client sends `Last-Event-ID` (browsers' EventSource does) or `?after=N` and first
gets the kept decisions it missed. The stream ends when the proxy shuts down. Entries carry no
message text unless the channel's `log_text` is on.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from stickyroute.admin.endpoint import Endpoint, Param
from stickyroute.admin.errors import unprocessable
from stickyroute.admin.params import query_int
from stickyroute.admin.ports import AdminOps

__all__ = ["ENDPOINTS", "KEEP_ALIVE_S"]

KEEP_ALIVE_S = 15.0
RING = 1000


async def list_decisions(ops: AdminOps, request: Request) -> Response:
    limit = query_int(request, "limit", 100, 1, RING)
    found = ops.decisions(limit, request.query_params.get("channel") or None)
    return JSONResponse({"decisions": found, "count": len(found)})


def _event(entry: dict[str, object]) -> str:
    return f"id: {entry['id']}\nevent: decision\ndata: {json.dumps(entry, ensure_ascii=False)}\n\n"


async def stream_decisions(ops: AdminOps, request: Request) -> Response:
    raw = request.headers.get("last-event-id") or request.query_params.get("after") or ""
    try:
        after = int(raw) if raw else None
    except ValueError:
        raise unprocessable(f"after: expected a decision id (an integer), got {json.dumps(raw)}") from None
    channel = request.query_params.get("channel") or None
    subscription = ops.subscribe()  # before the backlog: nothing falls between the two
    backlog = ops.decisions_after(after) if after is not None else []

    async def events() -> AsyncIterator[str]:
        last: int = backlog[-1]["id"] if backlog else (after or 0)
        try:
            yield "retry: 2000\n\n"
            for kept in backlog:
                if channel is None or kept.get("channel") == channel:
                    yield _event(kept)
            while True:
                try:
                    entry = await subscription.next(KEEP_ALIVE_S)
                except EOFError:
                    return
                if entry is None:
                    yield ": keep-alive\n\n"
                elif entry["id"] > last and (channel is None or entry.get("channel") == channel):
                    yield _event(entry)
        finally:
            subscription.close()

    return StreamingResponse(events(), media_type="text/event-stream",
                             headers={"cache-control": "no-cache", "x-accel-buffering": "no"})


_ENTRY = {"type": "object", "description": "a decision line: channel, conversation, kind, agent, reason, status, "
          "switched, scores, text (log_text only), time, id"}
ENDPOINTS = (
    Endpoint("GET", "/v1/decisions", list_decisions, "The last decisions, newest first",
             params=(Param("limit", "query", f"at most this many (1-{RING}, default 100)",
                           {"type": "integer", "minimum": 1, "maximum": RING}),
                     Param("channel", "query", "only this channel")),
             responses={200: "the decisions", 422: "a bad limit"}, tag="decisions"),
    Endpoint("GET", "/v1/decisions/stream", stream_decisions, "Live decisions as server-sent events",
             params=(Param("channel", "query", "only this channel"),
                     Param("after", "query", "first send the kept decisions after this id (or Last-Event-ID)",
                           {"type": "integer"})),
             responses={200: "an event stream", 422: "a bad id"}, content="text/event-stream", tag="decisions"),
)
