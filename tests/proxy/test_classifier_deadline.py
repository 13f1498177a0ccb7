"""The classifier wait is bounded per request, not per message, on a real uvicorn at 127.0.0.1:
a WhatsApp POST of 6 first messages from 4 senders behind a hung Groq (respx; every call hangs
until the proxy gives up; provider auto: Groq, its key set) is answered after one
`classifier.timeout_s`, not six: the four conversations are classified at the same time, the two
second messages are past the request's deadline and go where their routes point (the default:
reason `classifier_timeout`)."""

from __future__ import annotations

import asyncio
import json
import time

import httpx
import respx

from stickyroute.server.service import Service
from tests.proxy.harness import upstream_set, whatsapp_text, write_config
from tests.server.listeners import HANG_GUARD_S, serving

CHAT_URL = "https://api.groq.com/openai/v1/chat/completions"
TIMEOUT_S = 1.5
TOKEN = "deadline-admin-token-0123456789"
SENDERS = ["15550000001", "15550000002", "15550000003", "15550000004"]


class HungGroq:
    """A Groq endpoint whose calls never answer (the proxy's timeout cancels them); counts them."""

    def __init__(self) -> None:
        self.calls = 0
        self.in_flight = 0
        self.most_at_once = 0

    async def __call__(self, _request: httpx.Request) -> httpx.Response:
        self.calls += 1
        self.in_flight += 1
        self.most_at_once = max(self.most_at_once, self.in_flight)
        try:
            await asyncio.sleep(3600)
        finally:
            self.in_flight -= 1
        raise AssertionError("a hung call answered")


def test_a_whatsapp_batch_of_6_first_messages_from_4_senders_waits_one_classifier_timeout(tmp_path) -> None:
    hung = HungGroq()
    messages = [(SENDERS[0], "wamid.D1", "I need help with the garden shed"),
                (SENDERS[1], "wamid.D2", "what about the weather tomorrow"),
                (SENDERS[2], "wamid.D3", "tell me something about trains"),
                (SENDERS[3], "wamid.D4", "how do I cook rice properly"),
                (SENDERS[0], "wamid.D5", "and also the fence around it"),
                (SENDERS[1], "wamid.D6", "and the day after tomorrow")]
    body = whatsapp_text(messages)
    with respx.mock(assert_all_mocked=True, assert_all_called=False) as groq:
        groq.route(host="127.0.0.1").pass_through()
        groq.post(CHAT_URL).mock(side_effect=hung)
        with upstream_set("general", "billing") as ups:
            config = write_config(
                tmp_path, ups, agents={"billing": 'keywords = ["invoice", "refund"]'},
                whatsapp='[channels.whatsapp.overrides]\nauto_route = "sticky_heuristic"\n',
                top=f'[classifier]\ntimeout_s = {TIMEOUT_S}\n[admin]\ntoken = "{TOKEN}"\n')
            service = Service(config, env={"GROQ_API_KEY": "gsk-test"}, groq_http_client=httpx.AsyncClient())
            with serving(service) as (public, admin), httpx.Client(timeout=HANG_GUARD_S * 2) as client:
                started = time.monotonic()
                response = client.post(f"http://{public.address[0]}:{public.address[1]}/webhooks/whatsapp",
                                       content=body, headers={"content-type": "application/json"})
                elapsed = time.monotonic() - started
                stats = client.get(f"http://{admin.address[0]}:{admin.address[1]}/v1/stats",
                                   headers={"authorization": f"Bearer {TOKEN}"}).json()
            forwarded = [json.loads(r.body) == json.loads(body) for r in ups["general"].requests]
    assert response.status_code == 200
    assert forwarded == [True]  # all six to the default, the body whole
    assert (hung.calls, hung.most_at_once) == (4, 4)  # one per conversation, all at once
    assert stats["decisions"]["whatsapp"] == {"classifier_error": 4, "classifier_timeout": 2}
    assert elapsed < 3 * TIMEOUT_S, f"{elapsed:.2f} s (one classifier wait per message would be {6 * TIMEOUT_S} s)"
