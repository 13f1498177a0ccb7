"""GroqClassifier against a strict respx mock of the Groq chat-completions endpoint."""

from __future__ import annotations

import asyncio
import json
import logging

import httpx
import pytest
import respx
from groq_fakes import CANDIDATES, CHAT_URL, completion, request

from stickyroute.classifier.base import (
    Candidate,
    Classification,
    ClassificationRequest,
    Outcome,
    parse_answer,
)
from stickyroute.classifier.groq import GroqClassifier
from stickyroute.classifier.stats import says_none
from stickyroute.clock import FakeClock
from stickyroute.config.model import ClassifierSettings

SYSTEM_PROMPT = (
    "You route a chat message to the agent that should answer it.\n"
    "Agents:\n"
    "- coder: Writes, reviews and fixes code\n"
    "- ops-agent: Deployments, servers and infrastructure\n"
    "- writer: Drafts articles and documentation\n"
    "- none: no agent above fits the message\n"
    "Answer with exactly one name from the list and nothing else."
)


class TickClock:
    """Returns the given instants in order (seconds): start and end of one call."""

    def __init__(self, *instants: float) -> None:
        self._instants = list(instants)

    def __call__(self) -> float:
        return self._instants.pop(0)


# ---------------------------------------------------------------- the request on the wire


async def test_request_carries_model_temperature_max_tokens_candidates_and_only_the_message(
    groq_api: respx.MockRouter, make_groq, settings: ClassifierSettings
) -> None:
    route = groq_api.post(CHAT_URL).mock(return_value=httpx.Response(200, json=completion("coder")))
    classifier = make_groq(settings)

    await classifier.classify(request("please refactor this function", context=("old", "older")))

    sent = route.calls.last.request
    assert sent.headers["authorization"] == "Bearer test-key"
    assert json.loads(sent.content) == {
        "model": "llama-3.1-8b-instant",
        "temperature": 0,
        "max_tokens": 8,
        "messages": [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": "please refactor this function"},
        ],
    }


async def test_configured_model_and_max_tokens_are_sent(
    groq_api: respx.MockRouter, make_groq
) -> None:
    route = groq_api.post(CHAT_URL).mock(return_value=httpx.Response(200, json=completion("none")))
    classifier = make_groq(ClassifierSettings(model="llama-3.3-70b-versatile", max_tokens=3))

    await classifier.classify(request())

    body = json.loads(route.calls.last.request.content)
    assert (body["model"], body["max_tokens"], body["temperature"]) == (
        "llama-3.3-70b-versatile", 3, 0,
    )


async def test_context_messages_adds_the_last_n_messages_marked_as_context(
    groq_api: respx.MockRouter, make_groq
) -> None:
    route = groq_api.post(CHAT_URL).mock(return_value=httpx.Response(200, json=completion("coder")))
    classifier = make_groq(ClassifierSettings(context_messages=2))

    context = ("hi", "my build fails", "in CI")
    await classifier.classify(request("and now the tests", context=context))

    messages = json.loads(route.calls.last.request.content)["messages"]
    assert messages[1] == {
        "role": "user",
        "content": (
            "Earlier messages from the same sender, oldest first (context only, do not route):\n"
            "1. my build fails\n"
            "2. in CI\n"
            "\n"
            "Message to route:\n"
            "and now the tests"
        ),
    }


async def test_context_messages_with_no_context_sends_only_the_message(
    groq_api: respx.MockRouter, make_groq
) -> None:
    route = groq_api.post(CHAT_URL).mock(return_value=httpx.Response(200, json=completion("coder")))
    classifier = make_groq(ClassifierSettings(context_messages=3))

    await classifier.classify(request("first message"))

    assert json.loads(route.calls.last.request.content)["messages"][1] == {
        "role": "user", "content": "first message",
    }


async def test_candidate_without_description_is_listed_by_name(
    groq_api: respx.MockRouter, make_groq, settings: ClassifierSettings
) -> None:
    route = groq_api.post(CHAT_URL).mock(return_value=httpx.Response(200, json=completion("a")))
    classifier = make_groq(settings)

    candidates = (Candidate("a"), Candidate("b", "B"))
    await classifier.classify(ClassificationRequest("c", "text here", candidates))

    assert json.loads(route.calls.last.request.content)["messages"][0]["content"] == (
        "You route a chat message to the agent that should answer it.\n"
        "Agents:\n- a\n- b: B\n- none: no agent above fits the message\n"
        "Answer with exactly one name from the list and nothing else."
    )


# ---------------------------------------------------------------- parsing the answer

PARSE_TABLE = [
    # (raw answer, expected agent, says none/empty)
    ("coder", "coder", False),
    (" CODER\n", "coder", False),
    ('"coder"', "coder", False),
    ("`coder`", "coder", False),
    ("coder.", "coder", False),
    ("'writer'.", "writer", False),
    ("I think coder", None, False),
    ("translator", None, False),
    ("code", None, False),
    ("coders", None, False),
    ("coder, writer", None, False),
    ("none", None, True),
    ("None.", None, True),
    ("", None, True),
    ("  \n", None, True),
    ("dev", "coder", False),
    ("OPS", "ops-agent", False),
    ("ops-agent", "ops-agent", False),
]


@pytest.mark.parametrize(("answer", "agent", "none"), PARSE_TABLE)
def test_parse_answer_table(answer: str, agent: str | None, none: bool) -> None:
    assert parse_answer(answer, CANDIDATES) == agent


@pytest.mark.parametrize(("answer", "agent", "none"), PARSE_TABLE)
def test_says_none_agrees_with_parse_answer_trimming(
    answer: str, agent: str | None, none: bool
) -> None:
    assert says_none(answer) is none


@pytest.mark.parametrize(("answer", "agent", "none"), PARSE_TABLE)
async def test_classify_parses_the_answer_strictly(
    groq_api: respx.MockRouter, make_groq, settings: ClassifierSettings,
    answer: str, agent: str | None, none: bool,
) -> None:
    reply = httpx.Response(200, json=completion(answer, 117, 3))
    groq_api.post(CHAT_URL).mock(return_value=reply)
    classifier = make_groq(settings, clock=TickClock(50.0, 50.125))

    result = await classifier.classify(request())

    assert result == Classification(
        outcome=Outcome.AGENT if agent else Outcome.NONE,
        agent=agent,
        latency_s=0.125,
        prompt_tokens=117,
        completion_tokens=3,
        raw_answer=answer,
    )


def test_translator_is_none_when_no_such_agent_but_an_agent_when_it_exists() -> None:
    assert parse_answer("translator", CANDIDATES) is None
    assert parse_answer("translator", CANDIDATES + (Candidate("translator"),)) == "translator"


# ---------------------------------------------------------------- failures

ERROR_TABLE = [
    (httpx.ReadTimeout("read timed out"), "timeout"),
    (httpx.ConnectTimeout("connect timed out"), "timeout"),
    (httpx.ConnectError("connection refused"), "server_error"),
    (httpx.RemoteProtocolError("server disconnected"), "server_error"),
    (httpx.Response(429, json={"error": {"message": "rate limit"}}), "rate_limit"),
    (httpx.Response(500, json={"error": {"message": "boom"}}), "server_error"),
    (httpx.Response(503, text="unavailable"), "server_error"),
    (httpx.Response(401, json={"error": {"message": "invalid api key"}}), "auth"),
    (httpx.Response(403, json={"error": {"message": "key not allowed for this model"}}), "auth"),
    (httpx.Response(400, json={"error": {"message": "bad model"}}), "server_error"),
    (httpx.Response(200, text="not json at all"), "unparseable"),
    (httpx.Response(200, json={}), "unparseable"),
    (httpx.Response(200, json={"choices": []}), "unparseable"),
    (httpx.Response(200, json=[1, 2]), "unparseable"),
    (httpx.Response(200, json={"choices": [{"message": {"content": None}}]}), "unparseable"),
]


@pytest.mark.parametrize(("reply", "kind"), ERROR_TABLE, ids=lambda v: repr(v)[:40])
async def test_failures_come_back_as_error_outcomes_with_their_kind(
    groq_api: respx.MockRouter, make_groq, settings: ClassifierSettings,
    reply: httpx.Response | Exception, kind: str,
) -> None:
    route = groq_api.post(CHAT_URL)
    if isinstance(reply, Exception):
        route.mock(side_effect=reply)
    else:
        route.mock(return_value=reply)
    classifier = make_groq(settings, clock=TickClock(7.0, 7.5))

    result = await classifier.classify(request())

    assert result == Classification(outcome=Outcome.ERROR, latency_s=0.5, error_kind=kind)
    assert route.call_count == 1  # max_retries=0: never retried


async def test_unparseable_response_still_counts_reported_tokens(
    groq_api: respx.MockRouter, make_groq, settings: ClassifierSettings
) -> None:
    body = {"choices": [], "usage": {"prompt_tokens": 90, "completion_tokens": 0}}
    groq_api.post(CHAT_URL).mock(return_value=httpx.Response(200, json=body))
    classifier = make_groq(settings, clock=TickClock(0.0, 0.0))

    result = await classifier.classify(request())

    assert result == Classification(
        outcome=Outcome.ERROR, error_kind="unparseable", prompt_tokens=90
    )


async def test_slow_provider_is_cut_at_timeout_s(make_groq) -> None:
    reached, never = asyncio.Event(), asyncio.Event()

    async def hang(req: httpx.Request) -> httpx.Response:
        reached.set()
        await never.wait()
        return httpx.Response(200, json=completion("coder"))  # pragma: no cover

    # respx records a call only when its handler returns, so "all called" is proven by `reached`;
    # an unmocked request still fails the test.
    with respx.mock(assert_all_called=False, assert_all_mocked=True) as groq_api:
        groq_api.post(CHAT_URL).mock(side_effect=hang)
        classifier = make_groq(ClassifierSettings(timeout_s=0.05), clock=TickClock(3.0, 3.25))

        result = await asyncio.wait_for(classifier.classify(request()), timeout=10)

    assert reached.is_set()
    assert result == Classification(outcome=Outcome.ERROR, latency_s=0.25, error_kind="timeout")


async def test_a_refused_key_is_kind_auth_with_a_hint_not_a_server_error(
    groq_api: respx.MockRouter, make_groq, settings: ClassifierSettings,
    caplog: pytest.LogCaptureFixture,
) -> None:
    reply = httpx.Response(401, json={"error": {"message": "Invalid API Key"}})
    groq_api.post(CHAT_URL).mock(return_value=reply)
    caplog.set_level(logging.WARNING, logger="stickyroute.classifier")

    result = await make_groq(settings).classify(request())

    assert result.error_kind == "auth"
    assert [r.getMessage() for r in caplog.records] == [
        "groq refused the API key: provider said 401: Error code: 401 - {'error': {'message': 'Invalid API Key'}}; "
        "check the key in the environment variable GROQ_API_KEY (classifier.api_key_env): the provider refused it; "
        "until it is fixed every switch that needs the classifier stays on the current route"
    ]


async def test_a_refused_request_warns_about_the_model(
    groq_api: respx.MockRouter, make_groq, settings: ClassifierSettings,
    caplog: pytest.LogCaptureFixture,
) -> None:
    reply = httpx.Response(404, json={"error": {"message": "model not found"}})
    groq_api.post(CHAT_URL).mock(return_value=reply)
    caplog.set_level(logging.WARNING, logger="stickyroute.classifier")

    result = await make_groq(settings).classify(request())

    assert result.error_kind == "server_error"
    assert [r.getMessage() for r in caplog.records] == [
        "groq refused the request (check the model and the request): provider said 404: "
        "Error code: 404 - {'error': {'message': 'model not found'}}"
    ]


async def test_a_server_error_does_not_warn(
    groq_api: respx.MockRouter, make_groq, settings: ClassifierSettings,
    caplog: pytest.LogCaptureFixture,
) -> None:
    groq_api.post(CHAT_URL).mock(return_value=httpx.Response(503))
    caplog.set_level(logging.WARNING, logger="stickyroute.classifier")

    await make_groq(settings).classify(request())

    assert caplog.records == []


# ---------------------------------------------------------------- base URL and client


async def test_base_url_setting_sends_to_the_compatible_server(
    groq_api: respx.MockRouter, make_groq
) -> None:
    route = groq_api.post("http://llm.internal:8000/openai/v1/chat/completions").mock(
        return_value=httpx.Response(200, json=completion("writer"))
    )
    classifier = make_groq(ClassifierSettings(base_url="http://llm.internal:8000"))

    result = await classifier.classify(request())

    assert (result.outcome, result.agent, route.call_count) == (Outcome.AGENT, "writer", 1)
    assert classifier.base_url == "http://llm.internal:8000"


async def test_base_url_argument_wins_over_the_setting(
    groq_api: respx.MockRouter, make_groq
) -> None:
    route = groq_api.post("http://other.test/openai/v1/chat/completions").mock(
        return_value=httpx.Response(200, json=completion("writer"))
    )
    classifier = make_groq(ClassifierSettings(base_url="http://llm.internal:8000"),
                           base_url="http://other.test")

    await classifier.classify(request())

    assert route.call_count == 1


async def test_groq_base_url_environment_variable_is_honoured(
    groq_api: respx.MockRouter, make_groq, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GROQ_BASE_URL", "http://stand-in.test:9999")
    route = groq_api.post("http://stand-in.test:9999/openai/v1/chat/completions").mock(
        return_value=httpx.Response(200, json=completion("coder"))
    )
    classifier = make_groq(ClassifierSettings())

    await classifier.classify(request())

    assert route.call_count == 1


async def test_default_base_url_is_groq(make_groq, settings: ClassifierSettings) -> None:
    assert make_groq(settings).base_url == "https://api.groq.com"


async def test_owned_http_client_is_used_and_closed(
    groq_api: respx.MockRouter, settings: ClassifierSettings
) -> None:
    route = groq_api.post(CHAT_URL).mock(return_value=httpx.Response(200, json=completion("coder")))
    classifier = GroqClassifier(settings, "secret-key", clock=FakeClock())

    result = await classifier.classify(request())
    await classifier.aclose()

    assert (result.agent, route.call_count) == ("coder", 1)
    assert classifier._http.is_closed


async def test_borrowed_http_client_is_left_open(
    make_groq, http_client: httpx.AsyncClient, settings: ClassifierSettings
) -> None:
    classifier = make_groq(settings)

    await classifier.aclose()

    assert not http_client.is_closed


def test_api_key_is_not_in_repr(make_groq, settings: ClassifierSettings) -> None:
    assert repr(make_groq(settings)) == (
        "GroqClassifier(model='llama-3.1-8b-instant', base_url='https://api.groq.com')"
    )
    assert "test-key" not in repr(make_groq(settings))


