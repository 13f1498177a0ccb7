"""Why the engine routes one message the way it does, step by step (`stickyroute explain`, and
`POST /v1/explain` on the admin API: both call `explain_outcome`).

    lines, outcome = explain_outcome(rules, text, current=None, candidate=None, counter=0, now=NOW, hint=None,
                                     held=False)

Lists every agent's raw keyword score, the sticky bonus on the current agent, the threshold
comparison of the top scorer, the divergence counter before and after, and the decision with its
reason. The decision is `stickyroute.routing.engine.decide` on a synthetic TEXT envelope and a
synthetic live Route (the current agent, chosen a minute ago, with the pending candidate and
counter): nothing here re-implements the rules. When the engine asks the classifier, the two
possible outcomes are listed instead of calling one. A `hint` (the current agent's pending "not
mine" or "done", or a handoff to it) is applied to the synthetic route with
`routing.signals.apply_signal` first, so an ignored one says why; `held` says the current agent
is a human desk that holds the conversation; a decision that lands on a non-sticky agent is shown
as a detour. Pure: no I/O, `now` is an argument.
"""

from __future__ import annotations

from stickyroute.core.route import Route
from stickyroute.routing.decision import DETOUR
from stickyroute.routing.engine import Decision, NeedsClassification, NeedsPermit, Purpose, decide
from stickyroute.routing.envelope import Envelope, MessageKind
from stickyroute.routing.rules import ChannelRules
from stickyroute.routing.signals import Ignored, Released, Signal, SignalKind, apply_signal
from stickyroute.routing.text import opening_sentence

__all__ = ["NOW", "Outcome", "explain_outcome"]

NOW = 1_700_000_000.0
SENDER = "1"


Outcome = Decision | NeedsClassification | NeedsPermit


def explain_outcome(rules: ChannelRules, text: str, current: str | None = None, candidate: str | None = None,
                    counter: int = 0, now: float = NOW, hint: Signal | None = None,
                    held: bool = False) -> tuple[list[str], Outcome]:
    """The explanation's lines and the engine's outcome on the channel of `rules` (`stickyroute
    explain` and the admin API show both); `hint` is a signal of the current agent applied to the
    route first (a handoff: from another agent to the current one); `held`: the current agent, a
    human desk, holds the conversation (it was handed, switched or pinned to it). `now` in seconds."""
    channel_name = rules.channel
    settings = rules.settings
    route: Route | None = None
    signal_lines: list[str] = []
    if current is not None:
        hold = rules.hold_for(current) if held else None
        route = Route(current, chosen_at=now - 60.0, last_active=now - 60.0, candidate=candidate, counter=counter,
                      hold_s=hold)
        if held:
            signal_lines = [f"held: {current} is a human desk holding the conversation for {hold / 60:g} minutes of "
                            "inactivity" if hold is not None else f"held: ignored ({current} is not a human desk)"]
        if hint is not None:
            route, signal_lines = _signalled(route, hint, rules, now)
    envelope = Envelope(channel_name, MessageKind.TEXT, delivery_id="1", sender_id=SENDER, chat_id=SENDER, text=text)
    outcome = decide(envelope, route, rules, now)
    scores = rules.scorer.scores(text)
    holder = route.agent if route is not None else None  # after the signal: None once released
    bonus = rules.sticky_bonus(holder) if holder is not None else 0
    lines = [f"channel {channel_name}: strategy {settings.strategy.value}, threshold {settings.confidence_threshold},"
             f" sticky bonus {settings.sticky_bonus}, divergence count {settings.divergence_count}",
             f"message: {text!r}",
             f"route: {_route_text(route)}", *signal_lines,
             "scores (raw keyword points; effective = raw + bonus for the current agent):"]
    width = max((len(a) for a in rules.agents), default=0)
    effective = {}
    for agent in rules.agents:
        raw = scores.get(agent, 0)
        extra = bonus if agent == holder else 0
        effective[agent] = raw + extra
        tail = f" + bonus {extra} = {raw + extra}  (current)" if agent == holder else ""
        lines.append(f"  {agent:<{width}}  {raw:3d}{tail}")
    ranked = sorted(effective.items(), key=lambda kv: -kv[1])
    top_agent, top = ranked[0]
    unique = len(ranked) == 1 or ranked[1][1] < top
    if top <= 0:
        lines.append("top scorer: none (no keywords)")
    else:
        leader = top_agent if unique else "tie"
        verdict = ">=" if scores.get(top_agent, 0) >= settings.confidence_threshold else "<"
        lines.append(f"top effective score: {leader} {top}; raw {scores.get(top_agent, 0)} {verdict} threshold"
                     f" {settings.confidence_threshold}")
    if holder is not None and holder in rules.two_topic:
        first = opening_sentence(text, rules.acknowledgements, settings.short_message_chars)
        if first is not None:
            lines.append(f"two topics: {holder} has two_topic_confirm and the message opens with {first!r}: a switch "
                         "by keywords needs its winner at the threshold there, else the classifier confirms")
    lines += _outcome_lines(outcome, route, settings.explicit_switches_per_minute)
    lines += _detour_lines(outcome, route, rules)
    return lines, outcome


def _detour_lines(outcome: Outcome, route: Route | None, rules: ChannelRules) -> list[str]:
    """What a detour does: the agent answers, the route stays (issue #22)."""
    if isinstance(outcome, Decision) and outcome.reason == DETOUR:
        stays = f"the route stays with {route.agent}" if route is not None else "no route is cached"
        return [f"detour: {outcome.agent} is not sticky: it answers this message, {stays}"]
    if isinstance(outcome, NeedsClassification) and rules.detours:
        stays = f"the route stays with {route.agent}" if route is not None else "nothing is cached"
        return [f"  a non-sticky agent ({', '.join(sorted(rules.detours))}): it answers, {stays} (detour)"]
    return []


def _signalled(route: Route, hint: Signal, rules: ChannelRules, now: float) -> tuple[Route | None, list[str]]:
    """The route after the agent's signal (None: released), and what it did (a handoff comes from
    a previous agent)."""
    before = route
    if hint.kind is SignalKind.HANDOFF:
        hint = Signal(SignalKind.HANDOFF, "(previous agent)", route.agent)
        before = Route(hint.sender, route.chosen_at, route.last_active)
    result = apply_signal(hint, before, None, rules, now - 30.0)
    extra = f" (suggest {hint.target})" if hint.target and hint.kind is SignalKind.NOT_MINE else ""
    extra = f"; then {hint.target}" if hint.target and hint.kind is SignalKind.DONE else extra
    what = f"{hint.kind.value}{extra}"
    if isinstance(result, Ignored):
        return route, [f"agent signal: {what}: ignored ({result.why})"]
    if isinstance(result, Released):
        if result.route is None:
            return None, [f"agent signal: {what}: the route is released: the message is decided as the first of a "
                          "session (the release is logged with reason released)"]
        return result.route, [f"agent signal: {what}: released and handed to {result.route.agent} (reason handoff)"]
    if hint.kind is SignalKind.HANDOFF:
        return result, [f"agent signal: handoff to {route.agent}: the next message goes there (reason handoff)"]
    return result, [f"agent signal: {what}: pending ({rules.settings.agent_hints.value})"]


def _route_text(route: Route | None) -> str:
    if route is None:
        return "none (first message of a session)"
    pending = f", candidate {route.candidate} counter {route.counter}" if route.candidate else ", no pending divergence"
    held = ", held by a human desk" if route.hold_s is not None else ""
    return f"{route.agent}{pending}{held}"


def _counter_text(before: Route | None, after: Route | None) -> str:
    def show(r: Route | None) -> str:
        if r is None or r.candidate is None:
            return "0"
        return f"{r.counter} ({r.candidate})"

    return f"counter: {show(before)} -> {show(after)}"


def _outcome_lines(outcome: Outcome, route: Route | None,
                   switches_per_minute: float) -> list[str]:
    if isinstance(outcome, NeedsPermit):
        granted, refused = outcome.granted, outcome.refused
        return [_counter_text(route, granted.store),
                f"decision: {granted.agent} ({granted.reason}) while the sender has explicit switches left "
                f"(explicit_switches_per_minute {switches_per_minute:g}),",
                f"  else stay on {refused.agent} ({refused.reason})"]
    if isinstance(outcome, NeedsClassification):
        head = [_counter_text(route, outcome.route),
                f"decision: ask the classifier ({outcome.purpose.value})"
                + (f", candidate {outcome.candidate}" if outcome.candidate else "")]
        if outcome.purpose in (Purpose.CONFIRM, Purpose.HINT):
            switched = "agent_hint" if outcome.hinted else "llm_confirmed"
            stayed = "hint_rejected" if outcome.purpose is Purpose.HINT else "llm_rejected"
            return head + [f"  an agent other than {outcome.current}: switch to it ({switched})",
                           f"  {outcome.current}, none or an error: stay on {outcome.current} ({stayed})"]
        if outcome.purpose is Purpose.RECLASSIFY:
            return head + ["  an agent: route to it (reclassified)",
                           "  none: the default (classified_default)"]
        return head + ["  an agent: route to it and cache it (classified)",
                       "  none: the default, cached (classified_default)"]
    after = outcome.store if outcome.store is not None else (None if outcome.forget else route)
    return [_counter_text(route, after), f"decision: {outcome.agent} ({outcome.reason})"]
