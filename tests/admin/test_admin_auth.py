"""Who may use the admin listener: the probes and /metrics for everyone; every other route with
`Authorization: Bearer <[admin] token>` or the session cookie; without a configured token, 401
with a hint (issue #11)."""

from __future__ import annotations

import pytest

from stickyroute.admin import ENDPOINTS
from stickyroute.admin.auth import NO_TOKEN_HINT
from tests.admin.operated import TOKEN, Operated

OPEN = {"/healthz", "/readyz", "/metrics", "/v1/session"}
PROTECTED = sorted({(e.method, e.path) for e in ENDPOINTS if e.path not in OPEN})


def concrete(path: str) -> str:
    return (path.replace("{channel}", "telegram").replace("{chat}", "111").replace("{sender}", "111")
            .replace("{name}", "coder"))


async def test_without_a_configured_token_only_probes_and_metrics_answer(tmp_path, upstreams) -> None:
    async with Operated(tmp_path, upstreams, token=None) as op:
        probes = [(await op.api("GET", p, token=None)).status_code for p in ("/healthz", "/readyz", "/metrics")]
        refused = {(m, p): await op.api(m, concrete(p), token="anything") for m, p in PROTECTED}
    assert probes == [200, 200, 200]
    assert {key: r.status_code for key, r in refused.items()} == dict.fromkeys(refused, 401)
    body = refused[("GET", "/v1/stats")].json()
    assert body == {"error": "unauthorized", "detail": "no admin token is configured", "hint": NO_TOKEN_HINT}
    assert refused[("GET", "/v1/stats")].headers["www-authenticate"] == 'Bearer realm="stickyroute"'


@pytest.mark.parametrize(("token", "status", "detail"), [
    pytest.param(None, 401, "missing Authorization: Bearer <token>", id="missing"),
    pytest.param("wrong-token-0123456789", 401, "wrong token", id="wrong"),
    pytest.param(TOKEN[:-1], 401, "wrong token", id="prefix-of-the-token"),
    pytest.param(TOKEN, 200, None, id="right"),
])
async def test_every_protected_route_checks_the_bearer_token(tmp_path, upstreams, token, status, detail) -> None:
    async with Operated(tmp_path, upstreams) as op:
        answers = [await op.api("GET", p, token=token) for p in ("/stats", "/v1/stats", "/v1/openapi.json")]
    assert [a.status_code for a in answers] == [status] * 3
    if detail is not None:
        assert {a.json()["detail"] for a in answers} == {detail}


async def test_a_lowercase_bearer_scheme_is_accepted_and_basic_is_not(tmp_path, upstreams) -> None:
    async with Operated(tmp_path, upstreams) as op:
        assert op.admin is not None
        lower = await op.admin.get("/v1/status", headers={"authorization": f"bearer {TOKEN}"})
        basic = await op.admin.get("/v1/status", headers={"authorization": f"Basic {TOKEN}"})
    assert (lower.status_code, basic.status_code) == (200, 401)


async def test_a_browser_signs_in_with_the_token_and_uses_the_cookie(tmp_path, upstreams) -> None:
    async with Operated(tmp_path, upstreams) as op:
        assert op.admin is not None
        wrong = await op.api("POST", "/v1/session", token=None, json={"token": "nope"})
        before = await op.api("GET", "/v1/status", token=None)
        signed = await op.api("POST", "/v1/session", token=None, json={"token": TOKEN})
        after = await op.api("GET", "/v1/status", token=None)  # the client keeps the cookie
        out = await op.api("DELETE", "/v1/session", token=None)
        op.admin.cookies.clear()
        gone = await op.api("GET", "/v1/status", token=None)
    assert (wrong.status_code, before.status_code, signed.status_code, after.status_code, out.status_code,
            gone.status_code) == (401, 401, 204, 200, 204, 401)
    cookie = signed.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Path=/" in cookie
    assert 'stickyroute_admin=""' in out.headers["set-cookie"]


async def test_unknown_routes_and_methods_answer_json(tmp_path, upstreams) -> None:
    async with Operated(tmp_path, upstreams) as op:
        missing = await op.api("GET", "/v1/nothing-here")
        method = await op.api("POST", "/v1/stats")
    assert (missing.status_code, missing.json()["error"], method.status_code, method.json()["error"]) == (
        404, "not found", 405, "method not allowed")
