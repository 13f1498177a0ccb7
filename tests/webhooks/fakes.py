"""Fake platform APIs on 127.0.0.1 (real Starlette apps on uvicorn, see tests/upstreams.py) for
`stickyroute webhook`: the Telegram Bot API's webhook methods and the Meta Graph API's app
subscriptions, each recording the calls it got.

    with fake_telegram(token) as bot: ...    bot.url (the --api-base), bot.calls, bot.webhook (WebhookInfo)
    with fake_graph(app_id, token) as graph: ...   graph.url (the --api-base), graph.calls, graph.subscriptions

The Graph fake does what Meta does while it handles a subscription POST: it sends the
verification request (GET callback_url?hub.mode=subscribe&hub.verify_token=...&hub.challenge=...)
and refuses the subscription (code 2200) unless the answer is the challenge.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from tests.upstreams import serve_app

GRAPH_VERSION = "v21.0"


@dataclass
class FakeTelegram:
    token: str
    url: str = ""
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    webhook: dict[str, Any] = field(default_factory=lambda: {"url": "", "has_custom_certificate": False,
                                                             "pending_update_count": 0})

    async def method(self, request: Request) -> JSONResponse:
        if request.path_params["token"] != self.token:
            return JSONResponse({"ok": False, "error_code": 401, "description": "Unauthorized"}, status_code=401)
        name = request.path_params["method"]
        body = await request.json() if await request.body() else {}
        self.calls.append((name, body))
        if name == "setWebhook":
            if not str(body.get("url", "")).startswith("https://"):
                return JSONResponse({"ok": False, "error_code": 400,
                                     "description": "Bad Request: bad webhook: An HTTPS URL must be provided for webhook"},
                                    status_code=400)
            self.webhook.update(url=body["url"], max_connections=body.get("max_connections", 40),
                                allowed_updates=body.get("allowed_updates"))
            if body.get("drop_pending_updates"):
                self.webhook["pending_update_count"] = 0
            return JSONResponse({"ok": True, "result": True, "description": "Webhook was set"})
        if name == "getWebhookInfo":
            return JSONResponse({"ok": True, "result": self.webhook})
        if name == "deleteWebhook":
            self.webhook.update(url="")
            if body.get("drop_pending_updates"):
                self.webhook["pending_update_count"] = 0
            return JSONResponse({"ok": True, "result": True, "description": "Webhook was deleted"})
        return JSONResponse({"ok": False, "error_code": 404, "description": "Not Found: method not found"}, 404)


@contextmanager
def fake_telegram(token: str) -> Iterator[FakeTelegram]:
    fake = FakeTelegram(token)
    app = Starlette(routes=[Route("/bot{token}/{method}", fake.method, methods=["POST"])])
    with serve_app(app, lifespan="off") as url:
        fake.url = url
        yield fake


@dataclass
class FakeGraph:
    app_id: str
    access_token: str
    url: str = ""
    calls: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    subscriptions: dict[str, dict[str, Any]] = field(default_factory=dict)
    verifications: list[tuple[int, str]] = field(default_factory=list)
    """(status, body) of every verification request the fake sent."""

    async def subscriptions_edge(self, request: Request) -> JSONResponse:
        if request.method == "POST":  # application/x-www-form-urlencoded (no multipart parser needed)
            form = {k: v[0] for k, v in parse_qs((await request.body()).decode(), keep_blank_values=True).items()}
        else:
            form = dict(request.query_params)
        self.calls.append((request.method, {k: str(v) for k, v in form.items()}))
        if request.path_params["app_id"] != self.app_id or form.get("access_token") != self.access_token:
            return JSONResponse({"error": {"message": "Invalid OAuth access token - Cannot parse access token",
                                           "type": "OAuthException", "code": 190}}, status_code=400)
        if request.method == "GET":
            return JSONResponse({"data": list(self.subscriptions.values())})
        if request.method == "DELETE":
            self.subscriptions.pop(str(form.get("object")), None)
            return JSONResponse({"success": True})
        challenge = secrets.token_hex(8)
        async with httpx.AsyncClient(timeout=10.0) as client:
            try:
                answer = await client.get(str(form["callback_url"]), params={
                    "hub.mode": "subscribe", "hub.verify_token": str(form["verify_token"]), "hub.challenge": challenge})
                self.verifications.append((answer.status_code, answer.text))
                verified = answer.status_code == 200 and answer.text == challenge
            except httpx.HTTPError as exc:
                self.verifications.append((0, str(exc)))
                verified = False
        if not verified:
            return JSONResponse({"error": {"message": "(#2200) Callback verification failed with the following errors: "
                                           "HTTP Status Code = 403", "type": "OAuthException", "code": 2200}},
                                status_code=400)
        self.subscriptions[str(form["object"])] = {
            "object": form["object"], "callback_url": form["callback_url"], "active": True,
            "fields": [{"name": name, "version": GRAPH_VERSION} for name in str(form["fields"]).split(",")]}
        return JSONResponse({"success": True})


@contextmanager
def fake_graph(app_id: str, access_token: str) -> Iterator[FakeGraph]:
    fake = FakeGraph(app_id, access_token)
    app = Starlette(routes=[Route(f"/{GRAPH_VERSION}/{{app_id}}/subscriptions", fake.subscriptions_edge,
                                  methods=["GET", "POST", "DELETE"])])
    with serve_app(app, lifespan="off") as url:
        fake.url = f"{url}/{GRAPH_VERSION}"
        yield fake
