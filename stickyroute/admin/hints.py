"""The agent API (issues #12, #22): agents that answer asynchronously send their hints, handoffs
and `done`.

    POST /v1/hints   Authorization: Bearer <the agent's [agents.NAME] token>
                     {"conversation": "<X-Stickyroute-Conversation>", "hint": "not-mine" | "handoff",
                      "agent": "<suggested or target agent>"}
                     {"conversation": "...", "hint": "done", "then": "<agent handed to (optional)>"}

Authenticated by agent tokens, not the admin token (`stickyroute.admin.auth.OPEN_PATHS` lets it
through); the answers are `stickyroute.hints.service.AgentSignals.from_api`'s. A wrong agent token
counts against the client address's throttle (proxy.admin.throttle), a right one resets it.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from stickyroute.admin.auth import throttle_check, throttle_record
from stickyroute.admin.endpoint import Endpoint
from stickyroute.admin.ports import AdminOps

__all__ = ["ENDPOINTS", "HINTS_PATH"]

HINTS_PATH = "/v1/hints"


async def post_hint(ops: AdminOps, request: Request) -> Response:
    address, refusal = throttle_check(ops, request.scope)
    if refusal is not None:
        return refusal
    authorization = request.headers.get("authorization")
    status, answer = await ops.agent_hint(authorization, await request.body())
    if status != 401:  # the agent's token was right
        throttle_record(ops, address, True)
    elif authorization and authorization.partition(" ")[2].strip():  # a token, and a wrong one
        throttle_record(ops, address, False)
    return JSONResponse(answer, status_code=status)


ENDPOINTS = (
    Endpoint("POST", HINTS_PATH, post_hint,
             "An agent's hint (not-mine), handoff or done (its task is over: release the route, or hand it "
             "on with then) for the conversation of a token it was forwarded (Authorization: Bearer <the "
             "agent's token>, not the admin token)", auth=False,
             body={"type": "object", "required": ["conversation", "hint"], "additionalProperties": False,
                   "properties": {
                       "conversation": {"type": "string",
                                        "description": "the X-Stickyroute-Conversation header of the forwarded "
                                                       "request"},
                       "hint": {"type": "string", "enum": ["not-mine", "handoff", "done"]},
                       "agent": {"type": "string",
                                 "description": "not-mine: the suggested agent (optional); handoff: the agent "
                                                "that takes over (required)"},
                       "then": {"type": "string",
                                "description": "done: the agent the conversation is handed to (optional; "
                                               "without it the next message is decided afresh)"}}},
             responses={200: "{accepted: true, agent, pending} ({accepted: true, released: true, agent, pending} "
                             "for done; agent null when released without then) or {accepted: false, reason} "
                             "(valid but ignored)",
                        401: "a missing or unknown agent token", 403: "the token's agent is not the conversation's "
                        "current agent", 404: "an expired, forged or malformed conversation token, or no live route",
                        413: "a body over [admin] max_body_bytes", 422: "a bad body (`field: reason`)",
                        429: "over [hints] rate_per_s for this agent, or too many failed authentications from this "
                             "address (Retry-After)"},
             tag="agents"),
)
