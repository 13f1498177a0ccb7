"""`stickyroute explain`: why the engine routes one message the way it does, step by step.

    stickyroute explain --config C --channel telegram --text "..." \\
        [--current AGENT --candidate AGENT --counter N]

Prints every agent's raw keyword score, the sticky bonus on the current agent, the threshold
comparison of the top scorer, the divergence counter before and after, and the decision with
its reason. The decision is `proxy.routing.engine.decide` on a synthetic TEXT envelope and a synthetic
live Route (the current agent, chosen a minute ago, with the pending candidate and counter):
nothing here re-implements the rules. When the engine asks the classifier, the two possible
outcomes are printed instead of calling one.
"""

from __future__ import annotations

import argparse
import sys

from proxy.channels import lists_agents
from proxy.config.model import Config
from proxy.routing.engine import Decision, NeedsClassification, NeedsPermit, Purpose, decide
from proxy.routing.envelope import Envelope, MessageKind
from proxy.routing.rules import build_rules
from proxy.state.route import Route

NOW = 1_700_000_000.0
SENDER = "1"


Outcome = Decision | NeedsClassification | NeedsPermit


def explain(config: Config, channel_name: str, text: str, current: str | None = None,
            candidate: str | None = None, counter: int = 0, now: float = NOW) -> str:
    """The explanation as text (lines joined by newlines). Raises KeyError for an unknown channel."""
    return "\n".join(explain_outcome(config, channel_name, text, current, candidate, counter, now)[0])


def explain_outcome(config: Config, channel_name: str, text: str, current: str | None = None,
                    candidate: str | None = None, counter: int = 0, now: float = NOW) -> tuple[list[str], Outcome]:
    """The explanation's lines and the engine's outcome (the admin API shows both). Raises
    KeyError for an unknown channel."""
    channel = config.channels[channel_name]
    rules = build_rules(config, channel, lists_agents=lists_agents(channel.type))
    settings = rules.settings
    route = None
    if current is not None:
        route = Route(current, chosen_at=now - 60.0, last_active=now - 60.0, candidate=candidate, counter=counter)
    envelope = Envelope(channel_name, MessageKind.TEXT, delivery_id="1", sender_id=SENDER, chat_id=SENDER, text=text)
    outcome = decide(envelope, route, rules, now)
    scores = rules.scorer.scores(text)
    bonus = settings.sticky_bonus if current is not None else 0
    lines = [f"channel {channel_name}: strategy {settings.strategy.value}, threshold {settings.confidence_threshold},"
             f" sticky bonus {settings.sticky_bonus}, divergence count {settings.divergence_count}",
             f"message: {text!r}",
             f"route: {_route_text(route)}",
             "scores (raw keyword points; effective = raw + bonus for the current agent):"]
    width = max((len(a) for a in rules.agents), default=0)
    effective = {}
    for agent in rules.agents:
        raw = scores.get(agent, 0)
        extra = bonus if agent == current else 0
        effective[agent] = raw + extra
        tail = f" + bonus {extra} = {raw + extra}  (current)" if agent == current else ""
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
    lines += _outcome_lines(outcome, route, settings.explicit_switches_per_minute)
    return lines, outcome


def _route_text(route: Route | None) -> str:
    if route is None:
        return "none (first message of a session)"
    pending = f", candidate {route.candidate} counter {route.counter}" if route.candidate else ", no pending divergence"
    return f"{route.agent}{pending}"


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
        if outcome.purpose is Purpose.CONFIRM:
            return head + [f"  an agent other than {outcome.current}: switch to it (llm_confirmed)",
                           f"  {outcome.current}, none or an error: stay on {outcome.current} (llm_rejected)"]
        if outcome.purpose is Purpose.RECLASSIFY:
            return head + ["  an agent: route to it (reclassified)",
                           "  none: the default (classified_default)"]
        return head + ["  an agent: route to it and cache it (classified)",
                       "  none: the default, cached (classified_default)"]
    after = outcome.store if outcome.store is not None else (None if outcome.forget else route)
    return [_counter_text(route, after), f"decision: {outcome.agent} ({outcome.reason})"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The `explain` subcommand's options."""
    parser.add_argument("--config", required=True, help="config file (TOML)")
    parser.add_argument("--channel", required=True, help="channel name in the config")
    parser.add_argument("--text", required=True, help="the message text")
    parser.add_argument("--current", help="the conversation's current agent (omit: first message)")
    parser.add_argument("--candidate", help="pending divergence candidate")
    parser.add_argument("--counter", type=int, default=0, help="pending divergence counter")


def run(args: argparse.Namespace) -> int:
    """Load the config, print the explanation; 0, or 2 for an unknown channel or agent."""
    from proxy.config.loader import load_config

    config = load_config(args.config, warn=False)  # warnings are `check`'s and `serve`'s business
    if args.channel not in config.channels:
        print(f"explain: no channel {args.channel!r} in {args.config}", file=sys.stderr)
        return 2
    for agent in (args.current, args.candidate):
        if agent is not None and agent not in config.agents:
            print(f"explain: no agent {agent!r} in {args.config}", file=sys.stderr)
            return 2
    print(explain(config, args.channel, args.text, args.current, args.candidate, args.counter))
    return 0
