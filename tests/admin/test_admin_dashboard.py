"""The dashboard's page and files on the admin listener (issue #11 "Dashboard"), in-process: served
without a token (its data comes from the API), self-contained (nothing loaded from elsewhere, a
CSP that says so), 401 with the hint when no token is configured, and the API's guard against
cross-site changes made with the session cookie. The page in a real browser:
tests/admin/test_dashboard_browser.py."""

from __future__ import annotations

import re
from importlib.resources import files

import pytest

from stickyroute.admin.auth import CSRF_DETAIL, NO_TOKEN_HINT
from stickyroute.admin.dashboard import ASSETS, SECURITY_HEADERS
from tests.admin.operated import TOKEN, Operated
from tests.proxy.harness import telegram_text

STATIC = files("stickyroute.admin") / "static"
PIN = "/v1/conversations/telegram/111/111/route"
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; "
       "form-action 'none'; frame-ancestors 'none'; base-uri 'none'")


async def test_the_page_and_its_files_are_served_without_a_token(tmp_path, upstreams) -> None:
    async with Operated(tmp_path, upstreams) as op:
        page = await op.api("GET", "/", token=None)
        script = await op.api("GET", "/dashboard/dashboard.js", token=None)
        style = await op.api("GET", "/dashboard/dashboard.css", token=None)
        missing = await op.api("GET", "/dashboard/secrets.txt", token=None)
        data = await op.api("GET", "/v1/series", token=None)
    assert (page.status_code, page.headers["content-type"]) == (200, "text/html; charset=utf-8")
    assert (script.status_code, script.headers["content-type"]) == (200, "text/javascript; charset=utf-8")
    assert (style.status_code, style.headers["content-type"]) == (200, "text/css; charset=utf-8")
    assert page.content == (STATIC / "dashboard.html").read_bytes()
    assert script.content == (STATIC / "dashboard.js").read_bytes()
    assert (missing.status_code, missing.json()["detail"]) == (
        404, "no dashboard file 'secrets.txt' (there are dashboard.css, dashboard.js)")
    assert data.status_code == 401
    for answer in (page, script, style):
        assert {k: answer.headers[k] for k in SECURITY_HEADERS} == SECURITY_HEADERS
    assert page.headers["content-security-policy"] == CSP


async def test_without_a_configured_token_the_page_answers_401_with_the_hint(tmp_path, upstreams) -> None:
    async with Operated(tmp_path, upstreams, token=None) as op:
        page = await op.api("GET", "/", token=None)
        script = await op.api("GET", "/dashboard/dashboard.js", token=None)
    assert (page.status_code, page.headers["content-type"]) == (401, "text/html; charset=utf-8")
    assert (script.status_code, script.json()) == (401, {"error": "unauthorized", "detail": "no admin token is configured",
                                                         "hint": NO_TOKEN_HINT})
    hint = re.search(r'<p id="hint">(.*)</p>', page.text)
    assert hint is not None
    assert hint.group(1) == NO_TOKEN_HINT.replace("<", "&lt;").replace(">", "&gt;")


def test_the_page_loads_only_its_own_files() -> None:
    html = (STATIC / "dashboard.html").read_text()
    loaded = re.findall(r'(?:src|href)="([^"]*)"', html)
    assert sorted(loaded) == ["/dashboard/dashboard.css", "/dashboard/dashboard.js"]
    assert sorted(ASSETS) == ["dashboard.css", "dashboard.js"]
    texts = {name: (STATIC / name).read_text() for name in ("dashboard.html", *ASSETS)}
    for name, text in texts.items():
        assert "https://" not in text, name
        assert re.findall(r"http://[^\"' ]*", text) == (["http://www.w3.org/2000/svg"] if name == "dashboard.js" else []), name
        assert "@import" not in text and "url(" not in text, name
    assert "<script>" not in html and "style=" not in html  # nothing inline: the CSP forbids it


async def test_a_change_made_with_the_cookie_needs_the_dashboard_header(tmp_path, upstreams) -> None:
    async with Operated(tmp_path, upstreams) as op:
        assert op.admin is not None
        assert (await op.webhook("/webhooks/telegram", telegram_text(1, "hello"))).status_code == 200
        assert (await op.api("POST", "/v1/session", token=None, json={"token": TOKEN})).status_code == 204
        read = await op.api("GET", "/v1/decisions", token=None)
        forged = await op.admin.put(PIN, json={"agent": "billing"})
        reload = await op.admin.post("/v1/reload")
        allowed = await op.admin.put(PIN, json={"agent": "billing"}, headers={"x-stickyroute-request": "dashboard"})
        op.admin.cookies.clear()
        bearer = await op.api("DELETE", PIN)
    assert read.status_code == 200
    assert (forged.status_code, forged.json()) == (403, {"error": "forbidden", "detail": CSRF_DETAIL})
    assert reload.status_code == 403
    assert (allowed.status_code, allowed.json()["route"]["agent"]) == (200, "billing")
    assert (bearer.status_code, bearer.json()["previous"]["agent"]) == (200, "billing")


@pytest.mark.parametrize("cookie", ["wrong-token", ""])
async def test_a_wrong_cookie_is_401_even_with_the_dashboard_header(tmp_path, upstreams, cookie) -> None:
    async with Operated(tmp_path, upstreams) as op:
        assert op.admin is not None
        op.admin.cookies.set("stickyroute_admin", cookie)
        answer = await op.admin.put(PIN, json={"agent": "billing"}, headers={"x-stickyroute-request": "dashboard"})
    assert answer.status_code == 401


async def test_the_document_lists_the_dashboard(tmp_path, upstreams) -> None:
    async with Operated(tmp_path, upstreams) as op:
        document = (await op.api("GET", "/v1/openapi.json")).json()
    page = document["paths"]["/"]["get"]
    assert page["security"] == []
    assert page["responses"]["200"]["content"] == {"text/html": {"schema": {"type": "string"}}}
    assert page["responses"]["401"]["content"] == {"text/html": {"schema": {"type": "string"}}}
    asset = document["paths"]["/dashboard/{asset}"]["get"]
    assert asset["parameters"][0]["schema"] == {"enum": ["dashboard.css", "dashboard.js"]}
