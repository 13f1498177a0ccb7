"""Agent signals (issue #12): an agent says a message was "not mine" (a hint, maybe suggesting
another agent), hands the conversation to another agent, or says its task is `done` (issue #22:
the route is released, or handed on to `then`). Pure, like the engine.

    apply_signal(signal, route, version, rules, now) -> Route | Released | Ignored   what to write
    hint_confirmation(text, route, now) -> NeedsClassification             auto_route_agent_hints = confirm
    hint_divergence(route, scores, best, diverging, settings, now) -> (route, counter, target) | None

A signal is accepted only for a live Layer-2 route whose agent is the signal's sender and whose
version (`Route.chosen_at`) is the one the agent was forwarded (a later message moved it: stale).
Per strategy (docs/routing.md "The four strategies"):

    strategy           handoff   not-mine (divergence)   not-mine (confirm)   done            done + then
    off                ignored   ignored                 ignored              a desk's only   ignored
    explicit_only      yes       ignored                 yes                  yes             yes
    sticky_ttl         yes       ignored                 yes                  yes             yes
    sticky_heuristic   yes       yes                     yes                  yes             yes

A handoff writes a new route to its target at once (not explicit: auto-routing goes on from
there), marked `hint = "handoff"` so the next message is decided with reason `handoff`; it never
replaces a user's explicit pin (`explicit` with `auto_route_explicit_pin`). A hint is kept on the
route (`hint = "not-mine"`, `hint_agent` = the suggestion) until the next non-short message.

`done` releases the route: it is dropped, so the conversation's next message is decided as the
first message of a session (`Released(None)`); with `then` it is a handoff to that agent
(`Released(route)`); `auto_route_agent_releases = false` ignores it (not a desk's). Like a
handoff it never undoes a user's explicit pin. A human desk (`rules.desks`) holding the
conversation (`Route.held`) is the exception: its `done` and its handoffs end its hold however it
was taken (a handoff, the user's explicit switch, an admin pin), and its `not-mine` is ignored. A
handoff (or `then`) to a desk starts the desk's hold.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass

from stickyroute.config.model import AgentHints, RoutingSettings, Strategy
from stickyroute.core.route import Route
from stickyroute.routing.decision import NeedsClassification, Purpose
from stickyroute.routing.rules import ChannelRules

__all__ = ["DONE", "HANDOFF", "NOT_MINE", "Ignored", "Released", "Signal", "SignalKind", "apply_signal",
           "hint_confirmation", "hint_divergence"]


class SignalKind(enum.Enum):
    """What the agent says: `not-mine` (a hint) or `handoff`."""

    NOT_MINE = "not-mine"
    HANDOFF = "handoff"
    DONE = "done"


NOT_MINE = SignalKind.NOT_MINE.value
HANDOFF = SignalKind.HANDOFF.value
DONE = SignalKind.DONE.value


@dataclass(frozen=True, slots=True)
class Signal:
    """One agent signal: `sender` is the agent that sent it; `target` the suggested agent of a
    hint (None: no suggestion), the agent a handoff names (required), or `done`'s `then` (None:
    released without a handoff)."""

    kind: SignalKind
    sender: str
    target: str | None = None


@dataclass(frozen=True, slots=True)
class Released:
    """An agent's `done` was accepted: `route` is what replaces the conversation's route (None:
    dropped, the next message starts a session; else the handoff route to `then`)."""

    route: Route | None


@dataclass(frozen=True, slots=True)
class Ignored:
    """The signal changes nothing; `why` is the log line's reason (e.g. `stale`)."""

    why: str


def apply_signal(signal: Signal, route: Route | None, version: float | None, rules: ChannelRules,
                 now: float) -> Route | Released | Ignored:
    """The route to write for `signal` on the conversation's live `route` (read at `now`), the
    release of a `done`, or why it is ignored. `version` is the route version the sender was
    forwarded (None: unknown)."""
    settings = rules.settings
    desk_done = signal.kind is SignalKind.DONE and signal.sender in rules.desks
    if settings.strategy is Strategy.OFF and not (desk_done and signal.target is None):
        return Ignored("auto_route is off" + (" (done with then is a handoff)" if desk_done else ""))
    if route is None:
        return Ignored("no live route")
    if route.agent != signal.sender or (version is not None and route.chosen_at != version):
        return Ignored(f"stale: the conversation is now with {route.agent}" if route.agent != signal.sender
                       else "stale: the route changed since")
    target = signal.target
    if target is not None and target not in rules.agents:
        return Ignored(f"unknown or hidden agent {target!r} on channel {rules.channel}")
    held = route.held(now) and route.agent in rules.desks
    pinned = route.explicit and settings.explicit_pin and not held  # a desk ends its own hold
    if signal.kind is SignalKind.DONE:
        if not settings.agent_releases and not held:
            return Ignored("auto_route_agent_releases is false")
        if pinned:
            return Ignored("the user pinned the conversation explicitly")
        if target is None:
            return Released(None)
        handed = _handoff(target, route, pinned, rules, now)
        return handed if isinstance(handed, Ignored) else Released(handed)
    if signal.kind is SignalKind.HANDOFF:
        return _handoff(target, route, pinned, rules, now)
    if held:
        return Ignored("a human desk holds the conversation: it releases it with done or hands it off")
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


def _handoff(target: str | None, route: Route, pinned: bool, rules: ChannelRules, now: float) -> Route | Ignored:
    """The route a handoff (or `done` with `then`) to `target` writes, or why it is ignored."""
    if not rules.settings.agent_handoffs:
        return Ignored("auto_route_agent_handoffs is false")
    if target is None or target == route.agent:
        return Ignored("a handoff names another agent")
    if pinned:
        return Ignored("the user pinned the conversation explicitly")
    return Route(target, chosen_at=now, last_active=now, reason=HANDOFF, hint=HANDOFF, hold_s=rules.hold_for(target))


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
