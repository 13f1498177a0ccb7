"""Agent signals (issue #12): an agent says a message was "not mine" (a hint, maybe suggesting
another agent) or hands the conversation to another agent. Pure, like the engine.

    apply_signal(signal, route, version, rules, now) -> Route | Ignored   the route to write
    hint_confirmation(text, route, now) -> NeedsClassification             auto_route_agent_hints = confirm
    hint_divergence(route, scores, best, diverging, settings, now) -> (route, counter, target) | None

A signal is accepted only for a live Layer-2 route whose agent is the signal's sender and whose
version (`Route.chosen_at`) is the one the agent was forwarded (a later message moved it: stale).
Per strategy (README "Auto-route strategies"):

    strategy           handoff   not-mine (divergence)   not-mine (confirm)
    off                ignored   ignored                 ignored
    explicit_only      yes       ignored                 yes
    sticky_ttl         yes       ignored                 yes
    sticky_heuristic   yes       yes                     yes

A handoff writes a new route to its target at once (not explicit: auto-routing goes on from
there), marked `hint = "handoff"` so the next message is decided with reason `handoff`; it never
replaces a user's explicit pin (`explicit` with `auto_route_explicit_pin`). A hint is kept on the
route (`hint = "not-mine"`, `hint_agent` = the suggestion) until the next non-short message.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass

from stickyroute.config.model import AgentHints, RoutingSettings, Strategy
from stickyroute.core.route import Route
from stickyroute.routing.decision import NeedsClassification, Purpose
from stickyroute.routing.rules import ChannelRules

__all__ = ["HANDOFF", "NOT_MINE", "Ignored", "Signal", "SignalKind", "apply_signal", "hint_confirmation",
           "hint_divergence"]


class SignalKind(enum.Enum):
    """What the agent says: `not-mine` (a hint) or `handoff`."""

    NOT_MINE = "not-mine"
    HANDOFF = "handoff"


NOT_MINE = SignalKind.NOT_MINE.value
HANDOFF = SignalKind.HANDOFF.value


@dataclass(frozen=True, slots=True)
class Signal:
    """One agent signal: `sender` is the agent that sent it; `target` the suggested agent of a
    hint (None: no suggestion) or the agent a handoff names (required)."""

    kind: SignalKind
    sender: str
    target: str | None = None


@dataclass(frozen=True, slots=True)
class Ignored:
    """The signal changes nothing; `why` is the log line's reason (e.g. `stale`)."""

    why: str


def apply_signal(signal: Signal, route: Route | None, version: float | None, rules: ChannelRules,
                 now: float) -> Route | Ignored:
    """The route to write for `signal` on the conversation's live `route` (read at `now`), or why
    it is ignored. `version` is the route version the sender was forwarded (None: unknown)."""
    settings = rules.settings
    if settings.strategy is Strategy.OFF:
        return Ignored("auto_route is off")
    if route is None:
        return Ignored("no live route")
    if route.agent != signal.sender or (version is not None and route.chosen_at != version):
        return Ignored(f"stale: the conversation is now with {route.agent}" if route.agent != signal.sender
                       else "stale: the route changed since")
    target = signal.target
    if target is not None and target not in rules.agents:
        return Ignored(f"unknown or hidden agent {target!r} on channel {rules.channel}")
    pinned = route.explicit and settings.explicit_pin
    if signal.kind is SignalKind.HANDOFF:
        if not settings.agent_handoffs:
            return Ignored("auto_route_agent_handoffs is false")
        if target is None or target == route.agent:
            return Ignored("a handoff names another agent")
        if pinned:
            return Ignored("the user pinned the conversation explicitly")
        return Route(target, chosen_at=now, last_active=now, reason=HANDOFF, hint=HANDOFF)
    mode = settings.agent_hints
    if mode is AgentHints.OFF:
        return Ignored("auto_route_agent_hints is off")
    if mode is AgentHints.DIVERGENCE and settings.strategy is not Strategy.STICKY_HEURISTIC:
        return Ignored(f"divergence hints need sticky_heuristic (channel uses {settings.strategy.value})")
    if pinned:
        return Ignored("the user pinned the conversation explicitly")
    if target == route.agent:
        target = None
    return route.hinted(NOT_MINE, target)


def hint_confirmation(text: str, route: Route, now: float) -> NeedsClassification:
    """confirm mode: a pending hint sends this non-short message to the classifier at once."""
    return NeedsClassification(Purpose.HINT, text, route.agent, route.hinted(None).touched(now), {},
                               candidate=route.hint_agent, hinted=True)


def hint_divergence(route: Route, scores: Mapping[str, int], best: str | None, diverging: bool,
                    settings: RoutingSettings, now: float) -> tuple[Route, int, str] | None:
    """divergence mode (sticky_heuristic): the pending hint as one divergence increment.

    Its target is the suggestion, else the message's keyword candidate: the other agent with the
    highest raw score (at least `confidence_threshold`; the current agent said "not mine", so its
    sticky bonus no longer holds the message; a tie for the top is no candidate). None when there
    is neither (the hint waits on the route). The message's own increment counts too when its
    keywords diverge (`best`, `diverging`: the engine's usual test) to the same target. Returns
    (route with the hint consumed and the counter updated, the counter, the target).
    """
    if route.hint != NOT_MINE or settings.agent_hints is not AgentHints.DIVERGENCE:
        return None
    target = route.hint_agent or _candidate(scores, route.agent, settings.confidence_threshold)
    if target is None:
        return None
    counter = (route.counter if route.candidate == target else 0) + 1 + (1 if diverging and best == target else 0)
    return route.hinted(None).diverging(now, target, counter), counter, target


def _candidate(scores: Mapping[str, int], current: str, threshold: int) -> str | None:
    """The other agent with the single highest raw score >= `threshold`, or None."""
    others = sorted(((score, agent) for agent, score in scores.items() if agent != current and score >= threshold),
                    reverse=True)
    if not others or (len(others) > 1 and others[1][0] == others[0][0]):
        return None
    return others[0][1]
