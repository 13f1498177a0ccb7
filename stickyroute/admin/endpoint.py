"""The admin API's route table as data: each `Endpoint` is served (stickyroute/admin/app.py) and
documented (stickyroute/admin/openapi.py) from the same entry, so the OpenAPI document lists exactly the
routes there are."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from stickyroute.admin.ports import AdminOps

__all__ = ["Endpoint", "Handler", "Param"]

Handler = Callable[[AdminOps, Request], Awaitable[Response]]
Json = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Param:
    """A path or query parameter: `where` is "path" or "query"; `schema` a JSON schema."""

    name: str
    where: str
    description: str
    schema: Json = field(default_factory=lambda: {"type": "string"})
    required: bool = False


@dataclass(frozen=True, slots=True)
class Endpoint:
    """One route: method, path (`{name}` placeholders), handler, and what the document says."""

    method: str
    path: str
    handler: Handler
    summary: str
    auth: bool = True
    params: tuple[Param, ...] = ()
    body: Json | None = None
    """JSON schema of the request body (None: no body)."""
    responses: Mapping[int, str] = field(default_factory=lambda: {200: "OK"})
    content: str = "application/json"
    """Media type of the 2xx answer."""
    tag: str = "admin"
