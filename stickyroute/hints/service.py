"""AgentSignals: where agent hints, handoffs and `done` enter (issues #12, #22), one per running config.

    request_headers(channel, agent, conversation, now)   X-Stickyroute-Conversation for the forward
    await from_reply(channel, agent, conversation, reply, now) -> the reply without signal headers
    await from_api(authorization, body, now) -> (status, JSON answer)     POST /v1/hints

Only agents with a `token` get a conversation token (only they can call the API); it expires
after the channel's route TTL, or a human desk's hold when that is longer (a desk answers late).
Every signal is applied through `Router.signal` (the pure `routing.signals.apply_signal`); one
that changes nothing is logged with why (`stickyroute.hints`), one that is accepted too; an
accepted `done` is also a decision line with reason `released` (`released`, the accounting's). The
API answers:

    200  {"accepted": true, ...} or {"accepted": false, "reason": "..."} (valid, but ignored)
    401  a missing or unknown agent token          403  the token's agent is not the conversation's
    404  an expired, forged or malformed token     422  a bad body          429  over `rate_per_s`
"""

from __future__ import annotations

import functools
import hmac
import json
import logging
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from typing import Any

from stickyroute.config.model import Agent, Config
from stickyroute.hints.ratelimit import AgentRateLimit
from stickyroute.hints.reply import take_signals
from stickyroute.hints.token import ConversationTokens, TokenRejected
from stickyroute.reply import RawHeaders, Reply
from stickyroute.routing.decision import Conversation
from stickyroute.routing.router import Router
from stickyroute.routing.signals import Ignored, Released, Signal, SignalKind

__all__ = ["CONVERSATION_HEADER", "AgentSignals"]

log = logging.getLogger("stickyroute.hints")
DEFERRED: ContextVar[list[Callable[[], Awaitable[None]]] | None] = ContextVar("stickyroute_deferred_signals",
                                                                              default=None)
"""Set by a forward that holds its conversation until the update ends (`forwarding.single`): the
signals of its reply are collected there and applied after the decision is written."""
CONVERSATION_HEADER = b"x-stickyroute-conversation"
Json = dict[str, Any]
_KINDS = {k.value: k for k in SignalKind}
_BODY_KEYS = ("conversation", "hint", "agent", "then")
ReleaseHook = Callable[[str, str, str, str | None, float], object]
"""Called with (channel, conversation digest, the releasing agent, `then` or None, now) for every
accepted `done` (`stickyroute.observe.Accounting.released`: the `released` decision line)."""


class AgentSignals:
    """Agent signals of one config (see the module docstring); `tokens` may outlive a reload."""

    def __init__(self, config: Config, router: Router, tokens: ConversationTokens | None = None,
                 released: ReleaseHook | None = None) -> None:
        self.router = router
        self.tokens = tokens if tokens is not None else ConversationTokens(config.hints.secret)
        self.limit = AgentRateLimit(config.hints.rate_per_s)
        self.released = released
        self._ttl_s = {name: ch.routing.ttl_s for name, ch in config.channels.items()}
        self._callers = tuple((a.token.encode("utf-8", "surrogatepass"), a.name) for a in config.agents.values()
                              if a.token)

    def request_headers(self, channel: str, agent: Agent, conversation: Conversation | None,
                        now: float) -> RawHeaders:
        """`X-Stickyroute-Conversation` for a forward to `agent` (none for an agent without a
        token, or a request with no Layer-2 route)."""
        if agent.token is None or conversation is None or conversation.version is None:
            return []
        lifetime = self._ttl_s[channel]
        if agent.human:  # a desk may answer (and release) long after the TTL: its hold keeps the route
            lifetime = max(lifetime, agent.hold_s)
        token = self.tokens.mint(channel, conversation.key.digest(), conversation.version, now + lifetime)
        return [(CONVERSATION_HEADER, token.encode("ascii"))]

    async def from_reply(self, channel: str, agent: str, conversation: Conversation | None, reply: Reply,
                         now: float) -> Reply:
        """`reply` without its signal headers, after applying the signals `agent` gave in it."""
        relayed, signals, problems = take_signals(reply, agent)
        for problem in problems:
            log.warning("agent %s on %s: %s: ignored", agent, channel, problem)
        for signal in signals:
            if conversation is None or conversation.version is None:
                why = "no Layer-2 route (routed by Layer 1, or no sender)" if conversation is None else "no live route"
                self._log(channel, None, signal, Ignored(why), now)
                continue
            digest = conversation.key.digest()
            later = DEFERRED.get()
            if later is not None:  # the forward still holds the conversation: applied once it ends
                later.append(functools.partial(self._apply, channel, digest, conversation.version, signal, now))
                continue
            await self._apply(channel, digest, conversation.version, signal, now)
        return relayed

    async def _apply(self, channel: str, digest: str, version: float, signal: Signal, now: float) -> None:
        self._log(channel, digest, signal, await self.router.signal(channel, digest, version, signal, now), now)

    async def from_api(self, authorization: str | None, body: bytes, now: float) -> tuple[int, Json]:
        """Answer `POST /v1/hints` (see the module docstring)."""
        caller = self._caller(authorization)
        if caller is None:
            return 401, _error("unauthorized", "send Authorization: Bearer <token> with the agent's [agents.NAME] "
                                               "token")
        if not self.limit.take(caller, now):
            return 429, _error("too many requests", f"agent {caller}: over {self.limit.rate_per_s:g} hints per "
                                                    "second ([hints] rate_per_s)")
        parsed = _parse(body)
        if isinstance(parsed, str):
            return 422, _error("unprocessable", parsed)
        token, kind, target = parsed
        try:
            claims = self.tokens.read(token, now)
        except TokenRejected as exc:
            return 404, _error("not found", f"conversation: {exc.reason} token")
        if claims.channel not in self._ttl_s:
            return 404, _error("not found", f"conversation: channel {claims.channel} is not in the running config")
        route = await self.router.state.read(claims.channel, claims.digest, now)
        if route is None:
            return 404, _error("not found", "conversation: no live route")
        if route.agent != caller:
            return 403, _error("forbidden", f"agent {caller} is not the conversation's current agent")
        signal = Signal(kind, caller, target)
        result = await self.router.signal(claims.channel, claims.digest, claims.version, signal, now)
        self._log(claims.channel, claims.digest, signal, result, now)
        if isinstance(result, Ignored):
            return 200, {"accepted": False, "reason": result.why}
        if isinstance(result, Released):
            handed = result.route
            return 200, {"accepted": True, "released": True, "agent": handed.agent if handed else None,
                         "pending": handed.hint if handed else None}
        return 200, {"accepted": True, "agent": result.agent, "pending": result.hint}

    def _caller(self, authorization: str | None) -> str | None:
        scheme, _sep, credentials = (authorization or "").partition(" ")
        given = credentials.strip().encode("utf-8", "surrogatepass")
        if scheme.lower() != "bearer" or not given:
            return None
        found = None
        for token, name in self._callers:  # every one compared: constant time in the match
            if hmac.compare_digest(given, token):
                found = name
        return found

    def _log(self, channel: str, digest: str | None, signal: Signal, result: object, now: float) -> None:
        where = f"conversation {digest[:12]}" if digest else "a conversation"
        what = f"{signal.kind.value}{' ' + signal.target if signal.target else ''} from {signal.sender}"
        if isinstance(result, Ignored):
            log.info("agent signal on %s, %s: %s ignored: %s", channel, where, what, result.why)
            return
        log.info("agent signal on %s, %s: %s accepted", channel, where, what)
        if isinstance(result, Released) and self.released is not None and digest is not None:
            self.released(channel, digest, signal.sender, signal.target, now)


def _error(error: str, detail: str) -> Json:
    return {"error": error, "detail": detail}


def _parse(body: bytes) -> tuple[str, SignalKind, str | None] | str:
    """(token, kind, target) from the JSON body, or what is wrong (`field: reason`): `agent` is a
    hint's suggestion or a handoff's agent, `then` the agent a `done` hands to."""
    try:
        data = json.loads(body) if body.strip() else None
    except ValueError as exc:
        return f"body: not JSON ({exc})"
    if not isinstance(data, dict):
        return "body: expected a JSON object"
    unknown = [key for key in data if key not in _BODY_KEYS]
    if unknown:
        return f"{unknown[0]}: unknown key (expected {', '.join(_BODY_KEYS)})"
    token, hint = data.get("conversation"), data.get("hint")
    if not isinstance(token, str) or not token:
        return "conversation: expected the X-Stickyroute-Conversation token (a non-empty string)"
    if hint not in _KINDS:
        return f"hint: expected one of not-mine, handoff, done, got {json.dumps(hint)}"
    kind = _KINDS[hint]
    field = "then" if kind is SignalKind.DONE else "agent"
    if kind is SignalKind.DONE and "agent" in data:
        return "agent: not with hint done (it names the next agent with then)"
    if kind is not SignalKind.DONE and "then" in data:
        return f"then: only with hint done, not {hint}"
    agent = data.get(field)
    if agent is not None and (not isinstance(agent, str) or not agent.strip()):
        return f"{field}: expected an agent name, got {json.dumps(agent)}"
    if kind is SignalKind.HANDOFF and agent is None:
        return "agent: is required with hint handoff"
    return token, kind, agent.strip() if agent else None
