"""Every request accounted for (issue #11), end to end against real upstream agents: each kind of
answer (handshake, 401, 413, non-POST, unparsed, redelivery, an agent down, an unknown path)
gives exactly one decision line with its reason and status and one count in /stats."""

from __future__ import annotations

import json
import logging

from tests.admin.operated import Operated
from tests.proxy.harness import telegram_text, upstream_set, whatsapp_text
from tests.redis_server import free_port

TG, WA = "/webhooks/telegram", "/webhooks/whatsapp"
SECRET = {"x-telegram-bot-api-secret-token": "s3cret"}


async def test_every_request_gets_one_line_and_one_count(tmp_path, caplog) -> None:
    caplog.set_level(logging.INFO, logger="stickyroute.decision")
    with upstream_set("general") as ups:
        async with Operated(tmp_path, {**ups, "down": _Closed()}, agents={},
                            telegram='secret_token = "s3cret"\n[[channels.telegram.bindings]]\nuser = "7"\n'
                                     'agent = "down"', whatsapp='verify_token = "vt"') as op:
            assert op.public is not None
            answers = [
                (await op.webhook(TG, telegram_text(1, "hello there, friend", user=111), SECRET)).status_code,
                (await op.webhook(TG, telegram_text(1, "hello there, friend", user=111), SECRET)).status_code,
                (await op.webhook(TG, telegram_text(2, "no secret header", user=111))).status_code,
                (await op.webhook(TG, b"not json", SECRET)).status_code,
                (await op.public.get(TG, headers=SECRET)).status_code,
                (await op.webhook(TG, telegram_text(3, "to the agent that is down", user=7), SECRET)).status_code,
                (await op.public.get(WA + "?hub.mode=subscribe&hub.verify_token=vt&hub.challenge=42")).status_code,
                (await op.webhook(WA, whatsapp_text([("15550001", "wamid.A", "hello from whatsapp")]))).status_code,
                (await op.webhook(WA, b"x" * (6 * 1024 * 1024))).status_code,
                (await op.public.get("/nowhere")).status_code,
            ]
            stats = (await op.api("GET", "/v1/stats")).json()
    lines = [json.loads(r.getMessage()) for r in caplog.records if r.name == "stickyroute.decision"]
    assert answers == [200, 200, 401, 200, 200, 502, 200, 200, 413, 404]
    assert [(line["channel"], line["agent"], line["reason"], line["status"]) for line in lines] == [
        ("telegram", "general", "default", 200),
        ("telegram", "general", "redelivery", 200),
        ("telegram", None, "unauthorized", 401),
        ("telegram", "general", "unparsed", 200),
        ("telegram", "general", "default", 200),
        ("telegram", "down", "binding", 502),
        ("whatsapp", None, "handshake", 200),
        ("whatsapp", "general", "default", 200),
        ("whatsapp", None, "too_large", 413),
    ]
    assert (lines[4]["method"], "method" in lines[3]) == ("GET", False)
    assert {name: view["total"] for name, view in stats["requests"].items()} == {"": 1, "telegram": 6, "whatsapp": 3}
    assert stats["requests"]["telegram"]["by_status"] == {"2xx": 4, "4xx": 1, "5xx": 1}
    assert stats["decisions"] == {
        "telegram": {"binding": 1, "default": 2, "redelivery": 1, "unauthorized": 1, "unparsed": 1},
        "whatsapp": {"default": 1, "handshake": 1, "too_large": 1}}
    assert stats["upstream"]["down"]["failures"] == {"refused": 1}
    assert stats["upstream"]["general"]["forwards"] == 4
    stored_bytes = stats["delivery_log"]["stored_bytes"]
    assert stats["delivery_log"] == {"size": 2, "hits": {"telegram": 1}, "stored_bytes": stored_bytes,
                                     "max_bytes": 64 * 1024 * 1024, "ttl_s": 86400.0}
    assert 2 * 256 < stored_bytes < 64 * 1024  # two small answers (`Reply.size` each)


async def test_metrics_export_the_request_series_and_refresh_the_gauges(tmp_path) -> None:
    with upstream_set("general") as ups:
        async with Operated(tmp_path, ups, agents={}) as op:
            await op.webhook(TG, telegram_text(1, "hello there, friend", user=111))
            metrics = (await op.api("GET", "/metrics", token=None)).text
    for line in ('stickyroute_requests_total{agent="general",channel="telegram",reason="default",status="2xx"} 1.0',
                 'stickyroute_decisions_total{channel="telegram",reason="default"} 1.0',
                 'stickyroute_upstream_latency_seconds_count{agent="general"} 1.0',
                 'stickyroute_conversations_live{channel="telegram"} 0.0',
                 "stickyroute_delivery_log_size 1.0",
                 'stickyroute_state_backend_up{backend="memory"} 1.0'):
        assert line in metrics
    assert f'stickyroute_config_info{{hash="{op.service.runtime.digest}"' in metrics


class _Closed:
    """An agent address nobody listens on."""

    def __init__(self) -> None:
        self.url = f"http://127.0.0.1:{free_port()}"
