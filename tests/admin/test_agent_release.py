"""Task-scoped routes, detours and human desks end to end (issue #22), on both state backends:
real agents on 127.0.0.1 set `X-Stickyroute-Hint: done` (`; then=<agent>`) in their webhook replies
or call `POST /v1/hints` with `"hint": "done"`; a non-sticky agent answers a detour and the next
message goes back; a human desk keeps a conversation it was handed or pinned until it releases
it or an operator resets it, and the admin API lists it as held."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from typing import Any

import pytest

from tests.admin.operated import ROSTER, Operated
from tests.proxy.harness import telegram_text
from tests.upstreams import RecordingUpstream

TG = "/webhooks/telegram"
AUTO = '[channels.telegram.overrides]\nauto_route = "sticky_heuristic"\nauto_route_first_message_margin = 0'
DETOURS = AUTO + "\nauto_route_keyword_switch_margin = 6"
CODER_TOKEN = "coder-agent-token-0123456789"
DESK_TOKEN = "humans-desk-token-0123456789"
AGENTS = {**ROSTER, "coder": ROSTER["coder"] + f'\ntoken = "{CODER_TOKEN}"',
          "weather": 'keywords = ["weather", "rain", "umbrella"]\nsticky = false',
          "humans": f'keywords = ["complaint"]\nhuman = true\nhold_minutes = 240\ntoken = "{DESK_TOKEN}"'}
HINTS = '[hints]\nsecret = "a-shared-hint-secret-0123456789"\n'
CODING = "please refactor this python code"
MORE_CODING = "one more python refactor"
INVOICE = "my invoice shows a wrong refund"
NOTHING = "tell me something interesting"
RAIN = "will it rain, do I need an umbrella"
HINT = b"X-Stickyroute-Hint"
HANDOFF = b"X-Stickyroute-Handoff"
CONVERSATION = b"x-stickyroute-conversation"


@pytest.fixture
async def upstreams() -> AsyncIterator[dict[str, RecordingUpstream]]:
    from tests.proxy.harness import upstream_set

    with upstream_set("general", "coder", "billing", "internal", "weather", "humans") as ups:
        yield ups


def operated(tmp_path: Any, upstreams: Any, backend: str = "memory", telegram: str = AUTO) -> Operated:
    return Operated(tmp_path, upstreams, backend=backend, telegram=telegram, agents=AGENTS, top=HINTS)


def reply_with(*headers: tuple[bytes, bytes]) -> dict[str, Any]:
    return {"headers": [(b"content-type", b"application/json"), *headers]}


def reasons(upstream: Any) -> list[str]:
    return [r.header_values(b"x-stickyroute-reason")[0].decode() for r in upstream.requests]


async def send(op: Operated, *texts: str, first_id: int = 1, gap_s: float = 5.0) -> list[int]:
    statuses = []
    for n, text in enumerate(texts):
        statuses.append((await op.webhook(TG, telegram_text(first_id + n, text))).status_code)
        op.clock.advance(gap_s)
    return statuses


async def hint(op: Operated, token: str, body: Any) -> tuple[int, Any]:
    answer = await op.api("POST", "/v1/hints", token=token, json=body)
    return answer.status_code, answer.json()


async def lines(op: Operated, reason: str) -> list[dict[str, Any]]:
    decisions = (await op.api("GET", "/v1/decisions")).json()["decisions"]
    return [{k: d.get(k) for k in ("agent", "reason", "then")} for d in decisions if d["reason"] == reason]


# --- done in the webhook reply ------------------------------------------------------------------


async def test_a_done_header_releases_the_route_and_is_logged(tmp_path, upstreams, backend) -> None:
    upstreams["coder"].respond(**reply_with((HINT, b"done")))
    async with operated(tmp_path, upstreams, backend) as op:
        first = await op.webhook(TG, telegram_text(1, CODING))
        op.clock.advance(5)
        assert await send(op, NOTHING, first_id=2) == [200]
        released = await lines(op, "released")
        route = (await op.api("GET", "/v1/conversations/telegram/111/111")).json()
    assert ({n.lower() for n in first.headers} & {"x-stickyroute-hint"}, reasons(upstreams["coder"]),
            reasons(upstreams["general"]), released, route["reason"]) == (
        set(), ["keywords"], ["classified_default"], [{"agent": "coder", "reason": "released", "then": None}],
        "classified_default")


async def test_done_then_hands_the_conversation_on(tmp_path, upstreams, backend) -> None:
    upstreams["coder"].respond(**reply_with((HINT, b"done; then=billing")))
    async with operated(tmp_path, upstreams, backend) as op:
        assert await send(op, CODING, MORE_CODING) == [200, 200]
        released = await lines(op, "released")
    assert (reasons(upstreams["coder"]), reasons(upstreams["billing"]), released) == (
        ["keywords"], ["handoff"], [{"agent": "coder", "reason": "released", "then": "billing"}])


async def test_done_never_releases_the_users_explicit_choice(tmp_path, upstreams, caplog) -> None:
    caplog.set_level(logging.INFO, logger="stickyroute.hints")
    upstreams["coder"].respond(**reply_with((HINT, b"done")))
    async with operated(tmp_path, upstreams) as op:
        assert await send(op, "/agent coder", INVOICE) == [200, 200]
        released = await lines(op, "released")
    said = [r.getMessage().split(": ", 1)[1] for r in caplog.records if r.name == "stickyroute.hints"]
    assert (reasons(upstreams["coder"]), released, said[0]) == (
        ["explicit", "explicit_pin"], [], "done from coder ignored: the user pinned the conversation explicitly")


# --- done through the agent API ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "answer", "next_agent", "next_reason"),
    [
        pytest.param({"hint": "done"}, {"accepted": True, "released": True, "agent": None, "pending": None},
                     "general", "classified_default", id="released"),
        pytest.param({"hint": "done", "then": "billing"},
                     {"accepted": True, "released": True, "agent": "billing", "pending": "handoff"},
                     "billing", "handoff", id="released-then-billing"),
    ],
)
async def test_the_api_takes_done(tmp_path, upstreams, backend, body, answer, next_agent, next_reason) -> None:
    async with operated(tmp_path, upstreams, backend) as op:
        assert await send(op, CODING) == [200]
        token = upstreams["coder"].requests[-1].header_values(CONVERSATION)[0].decode()
        got = await hint(op, CODER_TOKEN, {"conversation": token, **body})
        again = await hint(op, CODER_TOKEN, {"conversation": token, **body})
        assert await send(op, NOTHING, first_id=2) == [200]
    assert (got, again[0], reasons(upstreams[next_agent])[-1]) == ((200, answer), 404 if "then" not in body else 403,
                                                                   next_reason)


@pytest.mark.parametrize(
    ("body", "detail"),
    [
        pytest.param({"conversation": "x", "hint": "done", "agent": "billing"},
                     "agent: not with hint done (it names the next agent with then)", id="done-with-agent"),
        pytest.param({"conversation": "x", "hint": "not-mine", "then": "billing"},
                     "then: only with hint done, not not-mine", id="then-without-done"),
        pytest.param({"conversation": "x", "hint": "done", "then": ""}, 'then: expected an agent name, got ""',
                     id="then-empty"),
    ],
)
async def test_the_api_answers_422_for_a_bad_done(tmp_path, upstreams, body, detail) -> None:
    async with operated(tmp_path, upstreams) as op:
        answer = await op.api("POST", "/v1/hints", token=CODER_TOKEN, json=body)
    assert (answer.status_code, answer.json()) == (422, {"error": "unprocessable", "detail": detail})


# --- detours -----------------------------------------------------------------------------------


async def test_a_detour_answers_once_and_the_next_message_goes_back(tmp_path, upstreams, backend) -> None:
    upstreams["weather"].respond(**reply_with((HINT, b"done")))  # a detour agent's signals are not its to give
    async with operated(tmp_path, upstreams, backend, DETOURS) as op:
        assert await send(op, CODING, RAIN, MORE_CODING) == [200, 200, 200]
        route = (await op.api("GET", "/v1/conversations/telegram/111/111")).json()
        released = await lines(op, "released")
    assert (reasons(upstreams["coder"]), reasons(upstreams["weather"]), route["agent"], route["reason"], released) == (
        ["keywords", "agreement"], ["detour"], "coder", "keywords", [])


async def test_an_explicit_switch_pins_a_non_sticky_agent(tmp_path, upstreams) -> None:
    async with operated(tmp_path, upstreams, "memory", DETOURS) as op:
        assert await send(op, CODING, "/agent weather", MORE_CODING) == [200, 200, 200]
    assert (reasons(upstreams["coder"]), reasons(upstreams["weather"])) == (
        ["keywords"], ["explicit", "explicit_pin"])


# --- human desks -------------------------------------------------------------------------------


async def test_a_desk_handed_the_conversation_holds_it_past_the_ttl_then_releases_it(
        tmp_path, upstreams, backend) -> None:
    upstreams["coder"].respond(**reply_with((HANDOFF, b"humans")))
    async with operated(tmp_path, upstreams, backend, DETOURS) as op:
        assert await send(op, CODING, MORE_CODING, RAIN) == [200, 200, 200]
        op.clock.advance(31 * 60)  # past the route TTL (30 min): the hold (240 min) keeps it
        assert await send(op, INVOICE, first_id=4) == [200]
        token = upstreams["humans"].requests[-1].header_values(CONVERSATION)[0].decode()
        held = (await op.api("GET", "/v1/conversations?held=true")).json()
        op.clock.advance(60 * 60)  # the desk answers an hour later: its token outlives the TTL
        done = await hint(op, DESK_TOKEN, {"conversation": token, "hint": "done"})
        assert await send(op, MORE_CODING, first_id=5) == [200]
    assert (reasons(upstreams["humans"]), [c["agent"] for c in held["conversations"]], held["conversations"][0]["held"],
            done[1]["released"], reasons(upstreams["coder"])) == (
        ["handoff", "held", "held"], ["humans"], True, True, ["keywords", "keywords"])


async def test_an_admin_pin_to_a_desk_holds_until_an_operator_resets_it(tmp_path, upstreams, backend) -> None:
    async with operated(tmp_path, upstreams, backend, DETOURS) as op:
        assert await send(op, CODING) == [200]
        pinned = await op.api("PUT", "/v1/conversations/telegram/111/111/route", json={"agent": "humans",
                                                                                        "explicit": False})
        assert await send(op, MORE_CODING, RAIN, first_id=2) == [200, 200]
        listed = (await op.api("GET", "/v1/conversations?held=true")).json()
        others = (await op.api("GET", "/v1/conversations?held=false")).json()
        reset = await op.api("DELETE", "/v1/conversations/telegram/111/111/route")
        assert await send(op, MORE_CODING, first_id=4) == [200]
    route = pinned.json()["route"]
    assert (route["held"], route["held_until"] - route["last_active"], route["expires_at"] - route["last_active"],
            listed["count"], others["count"], reset.status_code, reasons(upstreams["humans"]),
            reasons(upstreams["coder"])) == (
        True, 240 * 60, 240 * 60, 1, 0, 200, ["held", "held"], ["keywords", "keywords"])


async def test_a_bots_hint_cannot_move_a_held_conversation(tmp_path, upstreams, caplog) -> None:
    caplog.set_level(logging.INFO, logger="stickyroute.hints")
    async with operated(tmp_path, upstreams, "memory", DETOURS) as op:
        assert await send(op, CODING) == [200]
        token = upstreams["coder"].requests[-1].header_values(CONVERSATION)[0].decode()
        assert await send(op, "/agent humans", first_id=2) == [200]
        answer = await hint(op, CODER_TOKEN, {"conversation": token, "hint": "handoff", "agent": "billing"})
        assert await send(op, INVOICE, first_id=3) == [200]
    assert (answer[0], reasons(upstreams["humans"]), upstreams["billing"].requests) == (
        403, ["explicit", "held"], [])
