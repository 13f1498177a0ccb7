"""The demo agents of `make run` (issue #11 "small things"): a normal request is logged at INFO
(ordinary traffic must not look like trouble); pausing one stops its listener and resuming serves
it again (the proxy's 502 and the platform's retry: tests/admin/test_admin_operations.py)."""

from __future__ import annotations

import logging

import httpx

from stickyroute.server.demo import demo_agent_app


async def test_a_normal_request_is_logged_at_info(caplog) -> None:
    caplog.set_level(logging.DEBUG, logger="stickyroute.demo")
    transport = httpx.ASGITransport(app=demo_agent_app("support"))
    async with httpx.AsyncClient(transport=transport, base_url="http://agent.test") as client:
        answer = await client.post("/telegram?x=1", content=b'{"message": {"text": "hello"}}',
                                   headers={"x-stickyroute-reason": "keywords"})
    assert (answer.status_code, answer.json()) == (200, {"ok": True, "agent": "support"})
    assert [(r.levelname, r.getMessage()) for r in caplog.records] == [
        ("INFO", "[demo agent support] POST /telegram?x=1 reason=keywords sha256=352165b1740eec35 text='hello'")]
