"""The drain deadline in-process (issue #11; the real SIGTERM: test_shutdown.py): `PublicApp.cut()`
answers 503 with Retry-After to a request still running, accounts it as a 503, releases its
delivery claim so the platform's retry is forwarded again; a request that already finished keeps
its answer."""

from __future__ import annotations

import asyncio

from tests.admin.operated import Operated
from tests.proxy.harness import telegram_text, upstream_set

TG = "/webhooks/telegram"
GUARD_S = 10.0


async def test_a_request_cut_at_the_deadline_gets_503_and_its_retry_is_forwarded_again(tmp_path) -> None:
    with upstream_set("general") as ups:
        async with Operated(tmp_path, ups, agents={}) as op:
            done = await op.webhook(TG, telegram_text(1, "this one finishes in time", user=5))
            ups["general"].respond(hang=True)
            running = asyncio.create_task(op.webhook(TG, telegram_text(2, "this one is still running", user=5)))
            await ups["general"].until_requests(2)
            app = op.service.public_app()
            in_flight = app.in_flight
            cut = app.cut()
            reply = await asyncio.wait_for(running, GUARD_S)
            ups["general"].release()
            ups["general"].respond()
            retried = await op.webhook(TG, telegram_text(2, "this one is still running", user=5))
            decisions = (await op.api("GET", "/v1/decisions?limit=3")).json()["decisions"]
    assert (done.status_code, in_flight, cut, reply.status_code, reply.headers["retry-after"]) == (200, 1, 1, 503, "1")
    assert reply.text == "stickyroute is shutting down; retry (nothing was lost)\n"
    assert (retried.status_code, len(ups["general"].requests)) == (200, 3)
    assert [(d["reason"], d["status"]) for d in decisions] == [("default", 200), ("default", 503), ("default", 200)]
