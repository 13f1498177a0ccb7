"""Agent hints and handoffs end to end (issue #12), on both state backends: real agents on
127.0.0.1 set `X-Stickyroute-Hint` / `X-Stickyroute-Handoff` in their webhook replies (never
relayed to the platform), forwards carry `X-Stickyroute-Conversation` to agents with a token, and
the agent API `POST /v1/hints` answers good, bad, expired and forged tokens and rate-limits."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from tests.admin.operated import ROSTER, TOKEN, Operated
from tests.proxy.harness import telegram_text

TG = "/webhooks/telegram"
AUTO = '[channels.telegram.overrides]\nauto_route = "sticky_heuristic"\nauto_route_first_message_margin = 0'
CODER_TOKEN = "coder-agent-token-0123456789"
BILLING_TOKEN = "billing-agent-token-0123456789"
AGENTS = {**ROSTER, "coder": ROSTER["coder"] + f'\ntoken = "{CODER_TOKEN}"',
          "billing": ROSTER["billing"] + f'\ntoken = "{BILLING_TOKEN}"'}
HINTS = '[hints]\nsecret = "a-shared-hint-secret-0123456789"\nrate_per_s = 2\n'
CODING = "please refactor this python code"
HINT = b"x-stickyroute-hint"
HANDOFF = b"x-stickyroute-handoff"
CONVERSATION = b"x-stickyroute-conversation"


def operated(tmp_path: Any, upstreams: Any, backend: str = "memory", telegram: str = AUTO) -> Operated:
    return Operated(tmp_path, upstreams, backend=backend, telegram=telegram, agents=AGENTS, top=HINTS)


def reply_with(*headers: tuple[bytes, bytes]) -> dict[str, Any]:
    return {"headers": [(b"content-type", b"application/json"), *headers]}


def reasons(upstream: Any) -> list[str]:
    return [r.header_values(b"x-stickyroute-reason")[0].decode() for r in upstream.requests]


async def hint(op: Operated, token: str | None, body: Any) -> tuple[int, Any]:
    answer = await op.api("POST", "/v1/hints", token=token, json=body)
    return answer.status_code, answer.json()


async def first_forward_token(op: Operated, upstreams: Any) -> str:
    """User 111 to coder by keywords; the conversation token coder was forwarded."""
    assert (await op.webhook(TG, telegram_text(1, CODING))).status_code == 200
    return upstreams["coder"].requests[-1].header_values(CONVERSATION)[0].decode()


# --- signals in the webhook reply --------------------------------------------------------------


async def test_a_handoff_header_moves_the_next_message_and_never_reaches_the_platform(
        tmp_path, upstreams, backend) -> None:
    upstreams["coder"].respond(**reply_with((b"X-Stickyroute-Handoff", b"billing")))
    async with operated(tmp_path, upstreams, backend) as op:
        first = await op.webhook(TG, telegram_text(1, CODING))
        op.clock.advance(5)
        second = await op.webhook(TG, telegram_text(2, "thanks"))
    assert (first.status_code, [n for n in first.headers if n.lower().startswith("x-stickyroute-h")],
            reasons(upstreams["coder"]), reasons(upstreams["billing"]), second.status_code) == (
        200, [], ["keywords"], ["handoff"], 200)


@pytest.mark.parametrize("mode", ["divergence", "confirm"])
async def test_a_hint_header_moves_a_diverging_next_message(tmp_path, upstreams, backend, mode) -> None:
    upstreams["coder"].respond(**reply_with((b"X-Stickyroute-Hint", b"not-mine; suggest=billing")))
    async with operated(tmp_path, upstreams, backend, AUTO + f'\nauto_route_agent_hints = "{mode}"') as op:
        first = await op.webhook(TG, telegram_text(1, CODING))
        op.clock.advance(5)
        await op.webhook(TG, telegram_text(2, "my invoice shows a wrong refund"))
    assert (HINT.decode() in {n.lower() for n in first.headers}, reasons(upstreams["coder"]),
            reasons(upstreams["billing"])) == (False, ["keywords"], ["agent_hint"])


@pytest.mark.parametrize(
    ("header", "logged"),
    [
        pytest.param((b"X-Stickyroute-Hint", b"maybe"), "agent coder on telegram: unknown X-Stickyroute-Hint value "
                     "'maybe': ignored", id="unknown-value"),
        pytest.param((b"X-Stickyroute-Handoff", b"translator"), "agent signal on telegram, conversation {c}: handoff "
                     "translator from coder ignored: unknown or hidden agent 'translator' on channel telegram",
                     id="unknown-agent"),
        pytest.param((b"X-Stickyroute-Handoff", b"internal"), "agent signal on telegram, conversation {c}: handoff "
                     "internal from coder ignored: unknown or hidden agent 'internal' on channel telegram",
                     id="hidden-agent"),
    ],
)
async def test_a_signal_not_understood_is_stripped_logged_and_ignored(tmp_path, upstreams, caplog, header,
                                                                      logged) -> None:
    caplog.set_level(logging.INFO, logger="stickyroute.hints")
    upstreams["coder"].respond(**reply_with(header))
    async with operated(tmp_path, upstreams) as op:
        first = await op.webhook(TG, telegram_text(1, CODING))
        await op.webhook(TG, telegram_text(2, "thanks"))
        conversation = (await op.api("GET", "/v1/decisions")).json()["decisions"][0]["conversation"]
    lines = [r.getMessage() for r in caplog.records if r.name == "stickyroute.hints"]
    assert ({n.lower() for n in first.headers} & {"x-stickyroute-hint", "x-stickyroute-handoff"},
            reasons(upstreams["coder"]), lines[0]) == (set(), ["keywords", "ack"], logged.format(c=conversation))


async def test_a_signal_on_a_layer1_conversation_is_ignored_with_a_log_line(tmp_path, upstreams, caplog) -> None:
    caplog.set_level(logging.INFO, logger="stickyroute.hints")
    upstreams["coder"].respond(**reply_with((b"X-Stickyroute-Handoff", b"billing")))
    bound = AUTO.replace("[channels.telegram.overrides]", '[[channels.telegram.bindings]]\nuser = "111"\n'
                         'agent = "coder"\n[channels.telegram.overrides]')
    async with operated(tmp_path, upstreams, telegram=bound) as op:
        await op.webhook(TG, telegram_text(1, "thanks"))
        await op.webhook(TG, telegram_text(2, "my invoice shows a wrong refund"))
    lines = [r.getMessage() for r in caplog.records if r.name == "stickyroute.hints"]
    assert (reasons(upstreams["coder"]), upstreams["billing"].requests, lines[0]) == (
        ["binding", "binding"], [], "agent signal on telegram, a conversation: handoff billing from coder ignored: "
        "no Layer-2 route (routed by Layer 1, or no sender)")


async def test_a_hint_from_an_agent_no_longer_current_is_ignored(tmp_path, upstreams, caplog) -> None:
    caplog.set_level(logging.INFO, logger="stickyroute.hints")
    upstreams["coder"].respond(**reply_with((b"X-Stickyroute-Handoff", b"billing"),
                                            (b"X-Stickyroute-Hint", b"not-mine")))
    async with operated(tmp_path, upstreams) as op:
        await op.webhook(TG, telegram_text(1, CODING))
    lines = [r.getMessage() for r in caplog.records if r.name == "stickyroute.hints"]
    assert [line.split(": ", 1)[1] for line in lines] == [
        "handoff billing from coder accepted",
        "not-mine from coder ignored: stale: the conversation is now with billing"]


# --- the conversation token on forwards ---------------------------------------------------------


async def test_only_agents_with_a_token_get_a_conversation_token_and_a_client_cannot_forge_one(
        tmp_path, upstreams) -> None:
    async with operated(tmp_path, upstreams) as op:
        await op.webhook(TG, telegram_text(1, "tell me something interesting", user=222),
                         headers={"X-Stickyroute-Conversation": "forged.by-the-client"})
        await op.webhook(TG, telegram_text(2, CODING), headers={"X-Stickyroute-Conversation": "forged.by-the-client"})
    general, coder = upstreams["general"].requests[0], upstreams["coder"].requests[0]
    token = coder.header_values(CONVERSATION)
    assert (general.header_values(CONVERSATION), len(token), b"111" in token[0], token[0] != b"forged.by-the-client"
            ) == ([], 1, False, True)


# --- the agent API -----------------------------------------------------------------------------


async def test_the_api_hands_the_conversation_over(tmp_path, upstreams, backend) -> None:
    async with operated(tmp_path, upstreams, backend) as op:
        token = await first_forward_token(op, upstreams)
        answer = await hint(op, CODER_TOKEN, {"conversation": token, "hint": "handoff", "agent": "billing"})
        op.clock.advance(5)
        await op.webhook(TG, telegram_text(2, "thanks"))
    assert (answer, reasons(upstreams["billing"])) == (
        (200, {"accepted": True, "agent": "billing", "pending": "handoff"}), ["handoff"])


async def test_the_api_takes_a_not_mine_hint(tmp_path, upstreams, backend) -> None:
    async with operated(tmp_path, upstreams, backend) as op:
        token = await first_forward_token(op, upstreams)
        answer = await hint(op, CODER_TOKEN, {"conversation": token, "hint": "not-mine"})
        await op.webhook(TG, telegram_text(2, "my invoice shows a wrong refund"))
    assert (answer, reasons(upstreams["billing"])) == (
        (200, {"accepted": True, "agent": "coder", "pending": "not-mine"}), ["agent_hint"])


@pytest.mark.parametrize(
    ("token", "status", "error"),
    [
        pytest.param(None, 401, "unauthorized", id="no-token"),
        pytest.param("not-a-known-token-at-all", 401, "unauthorized", id="unknown-token"),
        pytest.param(TOKEN, 401, "unauthorized", id="the-admin-token-is-not-an-agent-token"),
        pytest.param(BILLING_TOKEN, 403, "forbidden", id="another-agents-token"),
    ],
)
async def test_the_api_refuses_bad_agent_tokens(tmp_path, upstreams, token, status, error) -> None:
    async with operated(tmp_path, upstreams) as op:
        conversation = await first_forward_token(op, upstreams)
        answer = await hint(op, token, {"conversation": conversation, "hint": "not-mine"})
    assert (answer[0], answer[1]["error"]) == (status, error)


async def test_the_api_answers_404_for_expired_forged_and_malformed_conversation_tokens(tmp_path, upstreams) -> None:
    async with operated(tmp_path, upstreams) as op:
        token = await first_forward_token(op, upstreams)
        head, mac = token.split(".")
        forged = f"{head}.{'A' if mac[0] != 'A' else 'B'}{mac[1:]}"
        answers = []
        for bad in (forged, "no-dot-here", head):
            op.clock.advance(0.5)  # within [hints] rate_per_s = 2
            answers.append(await hint(op, CODER_TOKEN, {"conversation": bad, "hint": "not-mine"}))
        op.clock.advance(1800)
        answers.append(await hint(op, CODER_TOKEN, {"conversation": token, "hint": "not-mine"}))
    assert answers == [
        (404, {"error": "not found", "detail": "conversation: forged token"}),
        (404, {"error": "not found", "detail": "conversation: malformed token"}),
        (404, {"error": "not found", "detail": "conversation: malformed token"}),
        (404, {"error": "not found", "detail": "conversation: expired token"}),
    ]


async def test_a_token_of_another_secret_is_forged(tmp_path, upstreams) -> None:
    from stickyroute.hints import ConversationTokens
    other = ConversationTokens("some-other-secret-0123456789").mint("telegram", "0" * 32, 1.0, 2e9)
    async with operated(tmp_path, upstreams) as op:
        answer = await hint(op, CODER_TOKEN, {"conversation": other, "hint": "not-mine"})
    assert answer == (404, {"error": "not found", "detail": "conversation: forged token"})


@pytest.mark.parametrize(
    ("body", "detail"),
    [
        pytest.param(b"not json", "body: not JSON (Expecting value: line 1 column 1 (char 0))", id="not-json"),
        pytest.param(b"[1]", "body: expected a JSON object", id="not-an-object"),
        pytest.param(b'{"hint": "not-mine"}',
                     "conversation: expected the X-Stickyroute-Conversation token (a non-empty string)",
                     id="no-conversation"),
        pytest.param(b'{"conversation": "x", "hint": "maybe"}', 'hint: expected one of not-mine, handoff, done, got "maybe"',
                     id="unknown-hint"),
        pytest.param(b'{"conversation": "x", "hint": "handoff"}', "agent: is required with hint handoff",
                     id="handoff-without-agent"),
        pytest.param(b'{"conversation": "x", "hint": "not-mine", "agent": 7}', "agent: expected an agent name, got 7",
                     id="agent-not-a-string"),
        pytest.param(b'{"conversation": "x", "hint": "not-mine", "why": "?"}',
                     "why: unknown key (expected conversation, hint, agent, then)", id="unknown-key"),
    ],
)
async def test_the_api_answers_422_for_a_bad_body(tmp_path, upstreams, body, detail) -> None:
    async with operated(tmp_path, upstreams) as op:
        answer = await op.api("POST", "/v1/hints", token=CODER_TOKEN, content=body)
    assert (answer.status_code, answer.json()) == (422, {"error": "unprocessable", "detail": detail})


async def test_the_api_is_rate_limited_per_agent(tmp_path, upstreams) -> None:
    body = {"conversation": "x", "hint": "not-mine"}
    async with operated(tmp_path, upstreams) as op:
        burst = [(await hint(op, CODER_TOKEN, body))[0] for _ in range(3)]
        other = (await hint(op, BILLING_TOKEN, body))[0]
        op.clock.advance(0.5)
        later = [(await hint(op, CODER_TOKEN, body))[0] for _ in range(2)]
    assert (burst, other, later) == ([404, 404, 429], 404, [404, 429])


async def test_the_api_reports_a_valid_but_ignored_signal(tmp_path, upstreams) -> None:
    async with operated(tmp_path, upstreams) as op:
        token = await first_forward_token(op, upstreams)
        answer = await hint(op, CODER_TOKEN, {"conversation": token, "hint": "handoff", "agent": "internal"})
    assert answer == (200, {"accepted": False, "reason": "unknown or hidden agent 'internal' on channel telegram"})


async def test_an_older_token_of_the_same_agent_is_stale(tmp_path, upstreams) -> None:
    async with operated(tmp_path, upstreams) as op:
        old = await first_forward_token(op, upstreams)
        away = await hint(op, CODER_TOKEN, {"conversation": old, "hint": "handoff", "agent": "billing"})
        op.clock.advance(1)
        await op.webhook(TG, telegram_text(2, "thanks"))
        billing = upstreams["billing"].requests[-1].header_values(CONVERSATION)[0].decode()
        back = await hint(op, BILLING_TOKEN, {"conversation": billing, "hint": "handoff", "agent": "coder"})
        op.clock.advance(1)
        stale = await hint(op, CODER_TOKEN, {"conversation": old, "hint": "not-mine"})
    assert (away[0], back[0], stale) == (200, 200, (200, {"accepted": False,
                                                         "reason": "stale: the route changed since"}))


async def test_the_openapi_document_lists_the_agent_api(tmp_path, upstreams) -> None:
    async with operated(tmp_path, upstreams) as op:
        document = (await op.api("GET", "/v1/openapi.json")).json()
    post = document["paths"]["/v1/hints"]["post"]
    assert (sorted(post["responses"]), post["requestBody"]["content"]["application/json"]["schema"]["required"]) == (
        ["200", "401", "403", "404", "413", "422", "429"], ["conversation", "hint"])
