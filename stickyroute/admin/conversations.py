"""Conversations: list live routes, look one up by platform ids, pin it, reset it.

    GET    /v1/conversations?channel=&agent=&limit=&held=   (held=true: those a human desk holds)
    GET    /v1/conversations/{channel}/{chat}/{sender}[?thread=]
    PUT    /v1/conversations/{channel}/{chat}/{sender}/route[?thread=]   {"agent": "...", "explicit": true}
    DELETE /v1/conversations/{channel}/{chat}/{sender}/route[?thread=]

A conversation is (channel, chat id, forum topic id, sender id) as the platform sends them; its
key is hashed like the decision log's `conversation`. Pins and resets are logged as decision
lines with reason `admin`.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from stickyroute.admin.endpoint import Endpoint, Param
from stickyroute.admin.params import json_object, optional_bool, query_bool, query_int, required_string
from stickyroute.admin.ports import AdminOps

__all__ = ["ENDPOINTS", "MAX_LIMIT"]

MAX_LIMIT = 1000


def _ids(request: Request) -> tuple[str, str, str, str | None]:
    path = request.path_params
    return path["channel"], path["chat"], path["sender"], request.query_params.get("thread") or None


async def list_conversations(ops: AdminOps, request: Request) -> Response:
    limit = query_int(request, "limit", 100, 1, MAX_LIMIT)
    query = request.query_params
    held = query_bool(request, "held")
    found = await ops.conversations(query.get("channel") or None, query.get("agent") or None, limit, held)
    return JSONResponse({"conversations": found, "count": len(found)})


async def get_conversation(ops: AdminOps, request: Request) -> Response:
    return JSONResponse(await ops.conversation(*_ids(request)))


async def pin_route(ops: AdminOps, request: Request) -> Response:
    body = await json_object(request, ("agent", "explicit"))
    agent = required_string(body, "agent")
    explicit = optional_bool(body, "explicit", True)
    return JSONResponse(await ops.pin(*_ids(request), agent, explicit))


async def reset_route(ops: AdminOps, request: Request) -> Response:
    return JSONResponse(await ops.reset(*_ids(request)))


ROUTE_SCHEMA = {
    "type": "object",
    "properties": {
        "conversation": {"type": "string", "description": "12 hex characters, the decision log's key"},
        "channel": {"type": "string"}, "agent": {"type": "string"},
        "reason": {"type": ["string", "null"], "description": "the reason of the decision that chose the agent"},
        "explicit": {"type": "boolean"}, "counter": {"type": "integer"},
        "candidate": {"type": ["string", "null"]}, "chosen_at": {"type": "number"},
        "last_active": {"type": "number"}, "expires_at": {"type": "number"},
        "held": {"type": "boolean", "description": "a human desk holds the conversation"},
        "held_until": {"type": ["number", "null"], "description": "when the desk's hold ends without activity"},
    },
}
_IDS = (Param("channel", "path", "channel name in the config", required=True),
        Param("chat", "path", "chat id as the platform sends it (WhatsApp, Messenger, Instagram: the person; "
              "Slack: the channel id; Discord: the channel, a thread's parent; LINE: group, room or user)",
              required=True),
        Param("sender", "path", "sender id (Telegram from.id, WhatsApp wa_id, Slack user, Discord user, LINE userId, "
              "Meta PSID / IGSID)", required=True),
        Param("thread", "query", "thread id (Telegram forum topic, Slack thread_ts of a channel thread, Discord "
              "thread channel id)"))
_LOOKUP = {200: "the conversation and its live route", 404: "unknown channel, or no live route"}
ENDPOINTS = (
    Endpoint("GET", "/v1/conversations", list_conversations, "List live routes, most recently active first",
             params=(Param("channel", "query", "only this channel"),
                     Param("agent", "query", "only routes to this agent"),
                     Param("limit", "query", f"at most this many (1-{MAX_LIMIT}, default 100)",
                           {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT}),
                     Param("held", "query", "true: only conversations a human desk holds; false: only the others",
                           {"type": "boolean"})),
             responses={200: "the routes", 404: "unknown channel or agent", 422: "a bad limit or held"},
             tag="conversations"),
    Endpoint("GET", "/v1/conversations/{channel}/{chat}/{sender}", get_conversation,
             "Look up one conversation by platform ids (with its Layer-1 resolution)", params=_IDS,
             responses=_LOOKUP, tag="conversations"),
    Endpoint("PUT", "/v1/conversations/{channel}/{chat}/{sender}/route", pin_route,
             "Pin the conversation to an agent (logged with reason admin)", params=_IDS,
             body={"type": "object", "required": ["agent"], "additionalProperties": False,
                   "properties": {"agent": {"type": "string"}, "explicit": {"type": "boolean", "default": True}}},
             responses={200: "the new route", 404: "unknown channel", 409: "the conversation is being decided",
                        422: "a bad body, or an agent the channel does not reach",
                        503: "Redis did not answer in time (nothing written; retry)"}, tag="conversations"),
    Endpoint("DELETE", "/v1/conversations/{channel}/{chat}/{sender}/route", reset_route,
             "Reset the conversation to auto-routing (logged with reason admin)", params=_IDS,
             responses={200: "the route that was dropped", 404: "unknown channel, or no live route",
                        409: "the conversation is being decided",
                        503: "Redis did not answer in time (nothing written; retry)"}, tag="conversations"),
)
