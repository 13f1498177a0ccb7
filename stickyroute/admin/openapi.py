"""The OpenAPI 3.1 document of the admin listener, written from the route table itself
(`stickyroute.admin.endpoint.Endpoint`), so every route served is documented and nothing else is.

    GET /v1/openapi.json
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from stickyroute import __version__
from stickyroute.admin.auth import COOKIE
from stickyroute.admin.endpoint import Endpoint

__all__ = ["openapi_document"]

ERROR = {"type": "object", "required": ["error", "detail"], "properties": {
    "error": {"type": "string", "description": "short: unauthorized, not found, unprocessable, conflict..."},
    "detail": {"type": "string", "description": "what is wrong (422: `field: reason`)"},
    "hint": {"type": "string", "description": "401: how to authenticate"}}}


def _operation(endpoint: Endpoint) -> dict[str, Any]:
    op: dict[str, Any] = {
        "summary": endpoint.summary,
        "operationId": endpoint.method.lower() + re.sub(r"[^A-Za-z0-9]+", "_", endpoint.path).rstrip("_"),
        "tags": [endpoint.tag],
        "security": [{"bearer": []}, {"cookie": []}] if endpoint.auth else [],
        "responses": {},
    }
    if endpoint.params:
        op["parameters"] = [{"name": p.name, "in": p.where, "required": p.required or p.where == "path",
                             "description": p.description, "schema": p.schema} for p in endpoint.params]
    if endpoint.body is not None:
        op["requestBody"] = {"required": True, "content": {"application/json": {"schema": endpoint.body}}}
    responses = dict(endpoint.responses)
    if endpoint.auth:
        responses.setdefault(401, "no token, a wrong token, or none configured (with a hint)")
    for code, description in sorted(responses.items()):
        answer: dict[str, Any] = {"description": description}
        if code == 204:
            pass
        elif code < 300:
            answer["content"] = {endpoint.content: {"schema": {"type": "object"} if endpoint.content ==
                                                    "application/json" else {"type": "string"}}}
        elif endpoint.content == "text/html":
            answer["content"] = {"text/html": {"schema": {"type": "string"}}}
        elif endpoint.tag != "probes":
            answer["content"] = {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
        op["responses"][str(code)] = answer
    return op


def openapi_document(endpoints: Sequence[Endpoint]) -> dict[str, Any]:
    """The document for `endpoints` (see the module docstring)."""
    paths: dict[str, dict[str, Any]] = {}
    for endpoint in endpoints:
        paths.setdefault(endpoint.path, {})[endpoint.method.lower()] = _operation(endpoint)
    return {
        "openapi": "3.1.0",
        "info": {"title": "stickyroute admin API", "version": __version__,
                 "description": "The admin listener of stickyroute: probes, metrics, stats, conversations, "
                                "decisions, explain, reload, demo agents, the dashboard. Every route but the "
                                "probes, /metrics, /v1/session and the dashboard's page and files needs the [admin] "
                                "token (Authorization: Bearer, or the session cookie; a change made with the cookie "
                                "also needs the X-Stickyroute-Request header)."},
        "paths": paths,
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"},
                                "cookie": {"type": "apiKey", "in": "cookie", "name": COOKIE}},
            "schemas": {"Error": ERROR},
        },
    }
