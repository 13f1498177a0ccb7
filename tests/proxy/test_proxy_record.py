"""`serve --record`: the dispatcher hands each request's decisions to a real Recorder.

One `decisions` object per envelope of the body, in body order; a redelivery records the first
decision; a GET or an unparsed body records none. The header names the config absolutely.
"""

from __future__ import annotations

import json

from stickyroute.clock import FakeClock
from stickyroute.forwarding.recording import Recorder
from tests.proxy.harness import Proxy, telegram_text, upstream_set, whatsapp_text, write_config

AGENTS = {"billing": 'keywords = ["invoice", "refund"]', "ops": 'keywords = ["kubernetes", "outage"]'}
HEURISTIC = '[channels.telegram.overrides]\nauto_route = "sticky_heuristic"\n'
WHATSAPP = '[channels.whatsapp.overrides]\nauto_route = "sticky_heuristic"\n'


def lines(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


async def test_each_request_is_recorded_with_its_decisions_in_body_order(tmp_path) -> None:
    out = tmp_path / "traffic.jsonl"
    clock = FakeClock(1000.0)
    with upstream_set("general", "billing", "ops") as ups:
        config = write_config(tmp_path, ups, telegram=HEURISTIC, whatsapp=WHATSAPP, agents=AGENTS)
        recorder = Recorder(str(out), config)
        async with Proxy(config, clock=clock, recorder=recorder) as proxy:
            await proxy.post("/webhooks/telegram", telegram_text(1, "my invoice for March looks wrong"))
            clock.advance(30)
            await proxy.post("/webhooks/telegram", telegram_text(2, "/agent ops"))
            clock.advance(30)
            await proxy.post("/webhooks/telegram", telegram_text(1, "my invoice for March looks wrong"))
            clock.advance(30)
            batch = whatsapp_text([("15550001", "wamid.A", "the kubernetes outage again"),
                                   ("15550002", "wamid.B", "a refund for my invoice please")])
            await proxy.post("/webhooks/whatsapp", batch)
            await proxy.post("/webhooks/whatsapp", b"not json")
            await proxy.get("/webhooks/telegram")
        recorder.close()
    header, *records = lines(out)
    assert header == {"recording": "stickyroute", "version": 2, "config": str((tmp_path / "proxy.toml").resolve())}
    assert [(r["time"], r["method"], r["decisions"]) for r in records] == [
        (1000.0, "POST", [{"agent": "billing", "reason": "classified"}]),
        (1030.0, "POST", [{"agent": "ops", "reason": "explicit"}]),
        (1060.0, "POST", [{"agent": "billing", "reason": "classified"}]),  # redelivery of update 1
        (1090.0, "POST", [{"agent": "ops", "reason": "classified"}, {"agent": "billing", "reason": "classified"}]),
        (1090.0, "POST", []),  # unparsed: forwarded to the default, no envelope
        (1090.0, "GET", []),
    ]
