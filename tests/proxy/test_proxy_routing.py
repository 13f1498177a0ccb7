"""End to end through the HTTP proxy: each strategy with real upstreams and Groq mocked by respx."""

from __future__ import annotations

import json

import httpx
import pytest
import respx

from stickyroute.clock import FakeClock
from tests.proxy.harness import Proxy, telegram_text, upstream_set, write_config

CHAT_URL = "https://api.groq.com/openai/v1/chat/completions"
AGENTS = {
    "coder": 'keywords = ["python", "refactor", "function", "pull request"]',
    "ops": 'keywords = ["kubernetes", "k8s", "pods", "deploy"]',
    "billing": 'keywords = ["invoice", "refund"]',
}


def answer(content: str) -> httpx.Response:
    return httpx.Response(200, json={
        "id": "c", "object": "chat.completion", "created": 1, "model": "llama-3.1-8b-instant",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 90, "completion_tokens": 2, "total_tokens": 92},
    })


def overrides(strategy: str, extra: str = "") -> str:
    return f'[channels.telegram.overrides]\nauto_route = "{strategy}"\nauto_route_ttl_minutes = 30\n{extra}'


@pytest.fixture
def groq():
    with respx.mock(assert_all_called=False, assert_all_mocked=True) as router:
        yield router


async def play(tmp_path, strategy, answers, steps, groq, extra=""):
    """Send (advance_s, text) steps; return the agents that received each update and the Groq requests."""
    route = groq.post(CHAT_URL).mock(side_effect=[answer(a) for a in answers])
    clock = FakeClock()
    with upstream_set("general", "coder", "ops", "billing") as ups:
        config = write_config(tmp_path, ups, telegram=overrides(strategy, extra), agents=AGENTS)
        async with httpx.AsyncClient() as groq_client:
            async with Proxy(config, env={"GROQ_API_KEY": "gsk-test"}, groq_http_client=groq_client, clock=clock) as proxy:
                for n, (advance, text) in enumerate(steps, start=1):
                    clock.advance(advance)
                    response = await proxy.post("/webhooks/telegram", telegram_text(n, text))
                    assert response.status_code == 200
                stats = await proxy.service.stats_snapshot()
        received = {}
        for name, up in ups.items():
            for r in up.requests:
                received[json.loads(r.body)["update_id"]] = (name, r.header_values(b"x-stickyroute-reason")[0].decode())
    return [received[n] for n in range(1, len(steps) + 1)], route.calls, stats


async def test_sticky_heuristic_diverges_twice_calls_groq_once_and_switches(tmp_path, groq):
    steps = [(0, "/agent coder"), (60, "the kubernetes pods keep crashing after deploy"),
             (60, "kubernetes pods are still crashing, any idea?"), (60, "and the k8s deploy logs say what")]
    got, calls, stats = await play(tmp_path, "sticky_heuristic", ["ops"], steps, groq,
                                   extra="auto_route_explicit_pin = false\n")
    assert got == [("coder", "explicit"), ("coder", "divergence_pending"), ("ops", "llm_confirmed"), ("ops", "agreement")]
    assert len(calls) == 1
    sent = json.loads(calls[0].request.content)
    assert sent["model"] == "llama-3.1-8b-instant" and sent["temperature"] == 0
    assert sent["messages"][-1]["content"].endswith("kubernetes pods are still crashing, any idea?")
    assert stats["classifier"]["total"]["calls"] == 1
    assert stats["classifier"]["total"]["prompt_tokens"] == 90
    assert stats["decisions"]["telegram"]["llm_confirmed"] == 1


async def test_sticky_heuristic_llm_rejects_switch(tmp_path, groq):
    steps = [(0, "please refactor this python function"), (60, "the kubernetes pods keep crashing after deploy"),
             (60, "kubernetes pods are still crashing, any idea?")]
    got, calls, _ = await play(tmp_path, "sticky_heuristic", ["coder", "none"], steps, groq)
    assert got == [("coder", "classified"), ("coder", "divergence_pending"), ("coder", "llm_rejected")]
    assert len(calls) == 2


async def test_off_never_classifies_but_explicit_switch_works(tmp_path, groq):
    """T21: auto_route off keeps the default for keyword-heavy text; explicit switches still work."""
    steps = [(0, "please refactor this python function"), (10, "/agent billing"), (10, "the kubernetes pods crash again")]
    got, calls, _ = await play(tmp_path, "off", [], steps, groq)
    assert got == [("general", "default"), ("billing", "explicit"), ("billing", "explicit_pin")]
    assert len(calls) == 0


async def test_explicit_only_classifies_once_per_session(tmp_path, groq):
    steps = [(0, "please refactor this python function"), (600, "the kubernetes pods keep crashing after deploy"),
             (600, "kubernetes pods are still crashing, any idea?"), (31 * 60, "kubernetes pods are still crashing, any idea?")]
    got, calls, _ = await play(tmp_path, "explicit_only", ["coder", "ops"], steps, groq)
    assert got == [("coder", "classified"), ("coder", "cache"), ("coder", "cache"), ("ops", "classified")]
    assert len(calls) == 2


async def test_sticky_ttl_reclassifies_after_ttl_even_when_active(tmp_path, groq):
    steps = [(0, "please refactor this python function"), (15 * 60, "one more python question for you"),
             (10 * 60, "ok"), (6 * 60, "the kubernetes pods keep crashing after deploy"),
             (60, "and another thing about the pods")]
    got, calls, _ = await play(tmp_path, "sticky_ttl", ["coder", "ops"], steps, groq)
    assert got == [("coder", "classified"), ("coder", "cache"), ("coder", "ack"), ("ops", "reclassified"), ("ops", "cache")]
    assert len(calls) == 2


async def test_groq_failure_routes_first_message_to_default_without_caching(tmp_path, groq):
    groq.post(CHAT_URL).mock(side_effect=[httpx.Response(500), answer("coder")])
    clock = FakeClock()
    with upstream_set("general", "coder", "ops", "billing") as ups:
        config = write_config(tmp_path, ups, telegram=overrides("sticky_heuristic"), agents=AGENTS)
        async with httpx.AsyncClient() as groq_client:
            async with Proxy(config, env={"GROQ_API_KEY": "gsk-test"}, groq_http_client=groq_client, clock=clock) as proxy:
                first = await proxy.post("/webhooks/telegram", telegram_text(1, "please refactor this python function"))
                clock.advance(5)
                second = await proxy.post("/webhooks/telegram", telegram_text(2, "please refactor this python function"))
                stats = await proxy.service.stats_snapshot()
        assert (first.status_code, second.status_code) == (200, 200)
        assert [r.header_values(b"x-stickyroute-reason") for r in ups["general"].requests] == [[b"classifier_error"]]
        assert [r.header_values(b"x-stickyroute-reason") for r in ups["coder"].requests] == [[b"classified"]]
        assert stats["classifier"]["total"]["failures"]["server_error"] == 1


async def test_readme_sticky_heuristic_worked_example(tmp_path, groq):
    """The README's sticky_heuristic table, row by row."""
    steps = [(0, "please refactor this python function"), (60, "can you also add a docstring to it"),
             (60, "the kubernetes pods keep crashing after deploy"), (60, "kubernetes pods are still crashing, any idea?"),
             (60, "and the k8s deploy logs say what")]
    got, calls, _ = await play(tmp_path, "sticky_heuristic", ["coder", "ops"], steps, groq)
    assert got == [("coder", "classified"), ("coder", "neutral"), ("coder", "divergence_pending"),
                   ("ops", "llm_confirmed"), ("ops", "agreement")]
    assert len(calls) == 2
