"""The OpenAPI document lists exactly the routes the admin app serves, with their methods."""

from __future__ import annotations

from starlette.routing import Route

from stickyroute.admin import ENDPOINTS
from tests.admin.operated import Operated


async def test_every_served_route_is_in_the_document_and_nothing_else(tmp_path, upstreams) -> None:
    async with Operated(tmp_path, upstreams) as op:
        document = (await op.api("GET", "/v1/openapi.json")).json()
        app = op.service.admin_app()
    served: set[tuple[str, str]] = set()
    for route in app.routes:
        assert isinstance(route, Route)
        served.update((method, route.path) for method in (route.methods or ()) if method != "HEAD")
    documented = {(method.upper(), path) for path, ops in document["paths"].items() for method in ops}
    assert served == documented
    assert len(documented) == len(ENDPOINTS) == 25  # + GET /, GET /dashboard/{asset} (dashboard), POST /v1/hints (issue #12)


async def test_the_document_says_what_each_route_needs_and_answers(tmp_path, upstreams) -> None:
    async with Operated(tmp_path, upstreams) as op:
        document = (await op.api("GET", "/v1/openapi.json")).json()
    pin = document["paths"]["/v1/conversations/{channel}/{chat}/{sender}/route"]["put"]
    assert document["openapi"] == "3.1.0"
    assert [p["name"] for p in pin["parameters"]] == ["channel", "chat", "sender", "thread"]
    assert pin["requestBody"]["content"]["application/json"]["schema"]["required"] == ["agent"]
    assert sorted(pin["responses"]) == ["200", "401", "404", "409", "422", "503"]
    assert pin["security"] == [{"bearer": []}, {"cookie": []}]
    assert document["paths"]["/healthz"]["get"]["security"] == []
    assert document["paths"]["/v1/decisions/stream"]["get"]["responses"]["200"]["content"] == {
        "text/event-stream": {"schema": {"type": "string"}}}
    operation_ids = [op["operationId"] for ops in document["paths"].values() for op in ops.values()]
    assert len(operation_ids) == len(set(operation_ids))
