"""Layer 2: the auto-route strategies as a pure function of (envelope, route, rules, now).

`decide()` returns a `Decision` (agent, reason, what to write), a `NeedsClassification` (the
caller awaits the classifier and hands the answer to `conclude()`, which returns the `Decision`)
or a `NeedsPermit` (an explicit switch: the caller spends one of the sender's
`explicit_switches_per_minute` and takes `granted`, or `refused` when none is left).
No I/O, no clock: `now` is seconds on the caller's clock. The semantics are docs/routing.md's
(allow-lists: "Who may be chosen") and every branch names its reason ("Decision reasons").
A `Decision` says whether it `switched` the conversation to another agent: a live route moved
elsewhere, or an explicit switch (or `/agent auto`) away from where the conversation was.

Tasks, detours and desks (docs/routing.md): a message that keywords or the classifier send to a non-sticky agent
(`rules.detours`) goes there with reason `detour` while the route stays as it was (its divergence
counter untouched; `sticky_ttl` restarts the previous agent's window); a route a human desk holds
(`Route.held`, `rules.desks`) takes every text message (reason `held`) until the user switches
explicitly; an explicit switch to a desk starts its hold.
"""

from __future__ import annotations

from collections.abc import Mapping

from stickyroute.classifier.base import Classification, Outcome
from stickyroute.config.model import AgentHints, RoutingSettings, Strategy
from stickyroute.core.route import Route
from stickyroute.routing.decision import (
    DETOUR,
    HELD,
    STATE_UNAVAILABLE,
    Conversation,
    Decision,
    NeedsClassification,
    NeedsPermit,
    Purpose,
)
from stickyroute.routing.envelope import Envelope, MessageKind
from stickyroute.routing.explicit import ExplicitKind, parse_explicit
from stickyroute.routing.keywords import top_agent
from stickyroute.routing.rules import ChannelRules
from stickyroute.routing.signals import HANDOFF, NOT_MINE, hint_confirmation, hint_divergence
from stickyroute.routing.text import is_acknowledgement, is_short, opening_sentence

__all__ = ["Conversation", "Decision", "NeedsClassification", "NeedsPermit", "Purpose", "busy", "conclude", "decide",
           "unavailable"]


def decide(envelope: Envelope, route: Route | None, rules: ChannelRules, now: float
           ) -> Decision | NeedsClassification | NeedsPermit:
    """Layer-2 decision for an envelope whose Layer-1 result is the channel default.

    `route` is the conversation's live route at `now` (the store already dropped expired ones);
    a route to an agent the channel no longer reaches (`rules.reachable`) counts as none.
    """
    if route is not None and rules.reachable is not None and route.agent not in rules.reachable:
        route = None
    default = rules.default_agent
    current = route.agent if route is not None else default
    touched = route.touched(now) if route is not None else None
    kind = envelope.kind

    if kind is MessageKind.STATUS:
        return Decision(current, "status")
    if kind is MessageKind.USER_EVENT:
        return Decision(current, "user_event")
    if kind is MessageKind.HISTORY:
        return Decision(default, "history")
    if kind in (MessageKind.NON_TEXT, MessageKind.BUTTON, MessageKind.EDIT) or not envelope.text:
        return Decision(current, "non_text", store=touched)

    text = envelope.text
    explicit = parse_explicit(text, rules.names, rules.bot_username, rules.choosable)
    if explicit.kind is ExplicitKind.SWITCH:
        chosen = explicit.agent or default
        new = Route(chosen, chosen_at=now, last_active=now, explicit=True, hold_s=rules.hold_for(chosen))
        return NeedsPermit(Decision(new.agent, "explicit", store=new, switched=new.agent != current),
                           Decision(current, "explicit_limited", store=touched))
    if explicit.kind is ExplicitKind.AUTO:
        return Decision(default, "auto_reset", forget=route is not None, switched=default != current)
    if explicit.kind is ExplicitKind.LIST:
        listing = rules.lists_agents
        return Decision(current, "explicit" if listing else _stay_reason(route), store=touched, list_agents=listing)
    if explicit.kind is ExplicitKind.DENIED:
        return Decision(current, "explicit_denied", store=touched)
    settings = rules.settings
    if route is not None and route.hint == HANDOFF:  # the first message after an agent's handoff
        return Decision(current, HANDOFF, store=route.touched(now).hinted(None), switched=True)
    if settings.strategy is Strategy.OFF and route is None:
        return Decision(default, "default")
    if is_acknowledgement(text, rules.acknowledgements):
        return Decision(current, "ack")
    if route is not None and route.held(now) and route.agent in rules.desks:  # a human desk holds it
        return Decision(current, HELD, store=route.touched(now).holding(rules.hold_for(route.agent)))
    if explicit.kind is ExplicitKind.UNKNOWN or is_short(text, settings.short_message_chars):
        return Decision(current, "short" if explicit.kind is ExplicitKind.NONE else _stay_reason(route), store=touched)

    if route is None:
        return _first_message(text, rules, now)
    if route.explicit and (settings.explicit_pin or settings.strategy is Strategy.OFF):
        return Decision(current, "explicit_pin", store=touched)
    strategy = settings.strategy
    if route.hint == NOT_MINE and settings.agent_hints is AgentHints.CONFIRM and strategy is not Strategy.OFF:
        return hint_confirmation(text, route, now)
    if strategy is Strategy.STICKY_TTL and not route.explicit and now - route.chosen_at >= settings.ttl_s:
        return NeedsClassification(Purpose.RECLASSIFY, text, current, route, {})
    if strategy is not Strategy.STICKY_HEURISTIC:
        return Decision(current, "cache", store=touched)
    return _heuristic(text, route, rules, now)


def busy(route: Route | None, rules: ChannelRules) -> Decision:
    """Another decision of the conversation (its classifier call) still held it after the
    classifier's `timeout_s`: stay on the route read without the lease (or the default), write
    nothing, reason `busy`. Bounds a webhook's wait to one classifier timeout instead of one per
    message queued ahead of it (issue #10: the 12th of 12 messages waited 12 x timeout_s)."""
    return Decision(route.agent if route is not None else rules.default_agent, "busy")


def unavailable(route: Route | None, rules: ChannelRules) -> Decision:
    """The shared state did not answer in time while it is up: the route this process last saw
    (or the default), nothing written, reason `state_unavailable` (never a decision on a
    per-process state that the other replicas do not share)."""
    return Decision(route.agent if route is not None else rules.default_agent, STATE_UNAVAILABLE)


def _stay_reason(route: Route | None) -> str:
    return "cache" if route is not None else "default"


def _first_message(text: str, rules: ChannelRules, now: float) -> Decision | NeedsClassification:
    settings = rules.settings
    margin = settings.first_message_margin
    scores = rules.scorer.scores(text) if margin is not None else {}
    if margin is not None:
        best, top, second = top_agent(scores)
        if (best is not None and top >= settings.confidence_threshold and top - second >= margin
                and _decisive(text, rules, best, None, margin)):
            if best in rules.detours:  # answered by the detour agent, nothing cached
                return Decision(best, DETOUR, scores=scores)
            new = Route(best, chosen_at=now, last_active=now)
            return Decision(best, "keywords", store=new, scores=scores)
    return NeedsClassification(Purpose.FIRST, text, None, None, scores)


def _heuristic(text: str, route: Route, rules: ChannelRules, now: float) -> Decision | NeedsClassification:
    """sticky_heuristic steps 1-4 (issue #3) for a non-short text with a live route."""
    settings = rules.settings
    current = route.agent
    scores = rules.scorer.scores(text)
    own = scores.get(current, 0)
    bonus = rules.sticky_bonus(current)
    effective = dict(scores)
    effective[current] = own + bonus
    best, top, second = top_agent(effective)
    diverging = best is not None and best != current and scores.get(best, 0) >= settings.confidence_threshold
    switch = settings.keyword_switch_margin
    if (diverging and switch is not None and top - second >= switch and _decisive(text, rules, best, current, switch)
            and not _second_topic(text, rules, best, current)):
        if best in rules.detours:  # a detour: the route and its counter stay as they were
            return Decision(best, DETOUR, store=route.touched(now), scores=scores)
        new = Route(best or current, chosen_at=now, last_active=now)
        return Decision(new.agent, "keywords", store=new, scores=scores, switched=True)
    hinted = hint_divergence(route, scores, best, diverging, settings, now)
    if hinted is not None or diverging:
        if hinted is not None:
            pending, counter, candidate = hinted
        else:
            candidate = best or current
            counter = route.counter + 1 if route.candidate == candidate else 1
            pending = route.diverging(now, candidate, counter)
        early = settings.early_confirm_margin
        strong = diverging and early is not None and top - (own + bonus) >= early
        if counter >= settings.divergence_count or strong:
            kept = route.hinted(None).touched(now)  # a detour leaves the counter as it was (the hint is spent)
            return NeedsClassification(Purpose.CONFIRM, text, current, pending, scores, candidate=candidate,
                                       hinted=hinted is not None, detour_route=kept)
        return Decision(current, "divergence_pending", store=pending, scores=scores)
    tied_with_current = best is None and own + bonus == top
    if settings.contest_confirm and tied_with_current and _contested(scores, current, top, settings):
        reset = route.diverging(now, None, 0)
        return NeedsClassification(Purpose.CONFIRM, text, current, reset, scores, detour_route=route.touched(now))
    if own > 0:
        agreed = route.diverging(now, None, 0)
        return Decision(current, "agreement", store=agreed, scores=scores)
    return Decision(current, "neutral", store=route.touched(now), scores=scores)


def _decisive(text: str, rules: ChannelRules, best: str | None, current: str | None, margin: int) -> bool:
    """True when `best`, the keywords' winner by `margin`, wins by it without `confirm_keywords`
    too (issue #22: they may ask the classifier, never decide alone); `current` gets the sticky
    bonus. Always true when no agent has confirm keywords."""
    if not rules.scorer.confirming:
        return True
    decisive = rules.scorer.decisive(text)
    if current is not None:
        decisive[current] = decisive.get(current, 0) + rules.sticky_bonus(current)
    winner, top, second = top_agent(decisive)
    own = 0 if best is None else decisive.get(best, 0)
    return winner == best and own >= rules.settings.confidence_threshold and top - second >= margin


def _second_topic(text: str, rules: ChannelRules, best: str | None, current: str) -> bool:
    """`two_topic_confirm` on the holder `current`: True when `text` has several sentences, the
    first is no courtesy (not an acknowledgement, not short) and the keywords' winner `best` does
    not reach `confidence_threshold` in it (decisive points): the message opens with the holder's
    business and brings up `best`'s later, so the switch is confirmed, not made by keywords."""
    if current not in rules.two_topic or best is None:
        return False
    settings = rules.settings
    first = opening_sentence(text, rules.acknowledgements, settings.short_message_chars)
    return first is not None and rules.scorer.decisive(first).get(best, 0) < settings.confidence_threshold


def _contested(scores: Mapping[str, int], current: str, top: int, settings: RoutingSettings) -> bool:
    """Opt-in `contest_confirm`: another agent ties the current one's effective score at the top
    with at least `confidence_threshold` raw points ("a taxi from the hotel" while on hotel)."""
    return any(agent != current and score == top and score >= settings.confidence_threshold
               for agent, score in scores.items())


_UNAVAILABLE = {Outcome.ERROR: "classifier_error", Outcome.BUDGET: "classifier_budget", Outcome.OPEN: "classifier_open",
                Outcome.DEADLINE: "classifier_timeout"}


def conclude(need: NeedsClassification, answer: Classification, rules: ChannelRules, now: float) -> Decision:
    """Turn the classifier's answer to `need` into a Decision (errors, none: stay)."""
    default = rules.default_agent
    chosen = answer.agent if answer.outcome is Outcome.AGENT and answer.agent in rules.agents else None
    failed = _UNAVAILABLE.get(answer.outcome)
    scores = need.scores or None
    if need.purpose is Purpose.FIRST:
        if failed is not None:
            return Decision(default, failed, scores=scores, classification=answer)
        if chosen in rules.detours:  # answered by the detour agent, nothing cached
            return Decision(chosen, DETOUR, scores=scores, classification=answer)
        agent = chosen or default
        new = Route(agent, chosen_at=now, last_active=now)
        reason = "classified" if chosen else "classified_default"
        return Decision(agent, reason, store=new, scores=scores, classification=answer)
    route = need.route
    assert route is not None
    if need.purpose is Purpose.RECLASSIFY:
        if failed is not None:
            return Decision(route.agent, failed, store=route.touched(now), classification=answer)
        if chosen is not None and chosen != route.agent and chosen in rules.detours:
            again = Route(route.agent, now, now, route.explicit, route.candidate, route.counter, route.reason,
                          None, None, route.hold_s)  # the previous agent's TTL window starts again
            return Decision(chosen, DETOUR, store=again, classification=answer)
        agent = chosen or default
        new = Route(agent, chosen_at=now, last_active=now)
        return Decision(agent, "reclassified" if chosen else "classified_default", store=new, classification=answer,
                        switched=agent != route.agent)
    reset = route.diverging(now, None, 0)
    if failed is not None:
        return Decision(route.agent, failed, store=reset, scores=scores, classification=answer)
    if chosen is None or chosen == route.agent:
        rejected = "hint_rejected" if need.purpose is Purpose.HINT else "llm_rejected"
        return Decision(route.agent, rejected, store=reset, scores=scores, classification=answer)
    if chosen in rules.detours:
        kept = need.detour_route if need.detour_route is not None else route
        return Decision(chosen, DETOUR, store=kept, scores=scores, classification=answer)
    new = Route(chosen, chosen_at=now, last_active=now)
    confirmed = "agent_hint" if need.hinted else "llm_confirmed"
    return Decision(chosen, confirmed, store=new, scores=scores, classification=answer, switched=True)
