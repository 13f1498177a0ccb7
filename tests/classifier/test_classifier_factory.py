"""build_classifier: provider auto | groq | keywords (alias heuristic), and the one startup log line."""

from __future__ import annotations

import json

import httpx
import pytest
import respx
from groq_fakes import CHAT_URL, completion, request

from stickyroute.classifier.base import Outcome
from stickyroute.classifier.factory import build_classifier
from stickyroute.classifier.groq import GroqClassifier
from stickyroute.classifier.keywords import KeywordClassifier
from stickyroute.clock import FakeClock
from stickyroute.config.model import ClassifierSettings
from stickyroute.errors import ConfigError, ConfigProblem

CLOCK = FakeClock()


def score(text: str) -> dict[str, int]:
    return {"coder": 12} if "refactor" in text else {}


async def test_auto_with_the_key_is_groq_and_sends_the_key(
    groq_api: respx.MockRouter, http_client: httpx.AsyncClient
) -> None:
    reply = httpx.Response(200, json=completion("writer"))
    route = groq_api.post(CHAT_URL).mock(return_value=reply)

    classifier, line = build_classifier(
        ClassifierSettings(), score, 6, {"GROQ_API_KEY": "gsk_live"}, http_client, clock=CLOCK
    )
    result = await classifier.classify(request())

    assert isinstance(classifier, GroqClassifier)
    assert line == "classifier: groq (model llama-3.1-8b-instant, timeout 2.0 s)"
    assert (result.outcome, result.agent) == (Outcome.AGENT, "writer")
    assert route.calls.last.request.headers["authorization"] == "Bearer gsk_live"


@pytest.mark.parametrize("env", [{}, {"GROQ_API_KEY": ""}, {"GROQ_API_KEY": "  "}, {"OTHER": "x"}])
async def test_auto_without_the_key_is_the_keyword_classifier(env: dict[str, str]) -> None:
    classifier, line = build_classifier(ClassifierSettings(), score, 6, env, clock=CLOCK)

    assert isinstance(classifier, KeywordClassifier)
    assert line == "classifier: keyword gate (GROQ_API_KEY not set; no LLM calls)"
    result = await classifier.classify(request("please refactor this function"))
    assert (result.outcome, result.agent) == (Outcome.AGENT, "coder")


def test_auto_reads_the_configured_key_variable(http_client: httpx.AsyncClient) -> None:
    settings = ClassifierSettings(api_key_env="MY_LLM_KEY")

    groq_one, _ = build_classifier(settings, score, 6, {"MY_LLM_KEY": "k"}, http_client, clock=CLOCK)
    heuristic, line = build_classifier(settings, score, 6, {"GROQ_API_KEY": "k"}, http_client, clock=CLOCK)

    assert isinstance(groq_one, GroqClassifier)
    assert isinstance(heuristic, KeywordClassifier)
    assert line == "classifier: keyword gate (MY_LLM_KEY not set; no LLM calls)"


@pytest.mark.parametrize("provider", ["keywords", "heuristic"])
def test_keywords_provider_and_its_old_name_ignore_the_key(provider: str) -> None:
    classifier, line = build_classifier(
        ClassifierSettings(provider=provider), score, 6, {"GROQ_API_KEY": "k"}, clock=CLOCK
    )

    assert (isinstance(classifier, KeywordClassifier), classifier.name) == (True, "keywords")
    assert line == f"classifier: keyword gate (provider = {provider}; no LLM calls)"


def test_groq_provider_without_the_key_is_a_config_error() -> None:
    with pytest.raises(ConfigError) as info:
        build_classifier(
            ClassifierSettings(provider="groq"), score, 6, {}, config_path="proxy.toml", clock=CLOCK
        )

    assert info.value.problems == [ConfigProblem(
        "proxy.toml", "classifier.provider",
        '"groq" needs an API key in the environment variable GROQ_API_KEY '
        "(classifier.api_key_env), which is not set",
    )]


def test_unknown_provider_is_a_config_error() -> None:
    with pytest.raises(ConfigError) as info:
        build_classifier(ClassifierSettings(provider="openai"), score, 6, {"GROQ_API_KEY": "k"}, clock=CLOCK)

    assert [(p.key, p.message) for p in info.value.problems] == [
        ("classifier.provider", "expected one of auto, groq, keywords, heuristic, got 'openai'"),
    ]


async def test_groq_base_url_from_the_environment_mapping(
    groq_api: respx.MockRouter, http_client: httpx.AsyncClient
) -> None:
    route = groq_api.post("http://127.0.0.1:8999/openai/v1/chat/completions").mock(
        return_value=httpx.Response(200, json=completion("none"))
    )
    env = {"GROQ_API_KEY": "k", "GROQ_BASE_URL": "http://127.0.0.1:8999"}

    settings = ClassifierSettings(provider="groq")
    classifier, line = build_classifier(settings, score, 6, env, http_client, clock=CLOCK)
    result = await classifier.classify(request())

    assert result.outcome is Outcome.NONE
    assert route.call_count == 1
    assert line == (
        "classifier: groq (model llama-3.1-8b-instant, timeout 2.0 s, "
        "base_url http://127.0.0.1:8999)"
    )


async def test_base_url_setting_wins_over_the_environment(
    groq_api: respx.MockRouter, http_client: httpx.AsyncClient
) -> None:
    route = groq_api.post("https://llm.example/openai/v1/chat/completions").mock(
        return_value=httpx.Response(200, json=completion("coder"))
    )
    settings = ClassifierSettings(base_url="https://llm.example", model="m", timeout_s=1.5)
    env = {"GROQ_API_KEY": "k", "GROQ_BASE_URL": "http://127.0.0.1:8999"}

    classifier, line = build_classifier(settings, score, 6, env, http_client, clock=CLOCK)
    await classifier.classify(request())

    assert json.loads(route.calls.last.request.content)["model"] == "m"
    assert line == "classifier: groq (model m, timeout 1.5 s, base_url https://llm.example)"


async def test_groq_without_a_client_builds_its_own_and_closes_it(
    groq_api: respx.MockRouter,
) -> None:
    groq_api.post(CHAT_URL).mock(return_value=httpx.Response(200, json=completion("coder")))

    classifier, _ = build_classifier(ClassifierSettings(), score, 6, {"GROQ_API_KEY": "k"}, clock=CLOCK)
    result = await classifier.classify(request())
    await classifier.aclose()  # type: ignore[attr-defined]

    assert result.agent == "coder"
