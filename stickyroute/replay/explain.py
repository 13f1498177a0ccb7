"""`stickyroute explain`: why the engine routes one message the way it does, step by step.

    stickyroute explain --config C --channel telegram --text "..." \\
        [--current AGENT --candidate AGENT --counter N]
        [--hint "not-mine[; suggest=AGENT]" | --hint "done[; then=AGENT]" | --handoff | --held]

Prints the explanation of `stickyroute.routing.explain` (every agent's raw keyword score, the
sticky bonus, the threshold, the divergence counter before and after, the decision and its
reason). `--hint` gives the current agent's pending "not mine" or "done" (the
`X-Stickyroute-Hint` syntax; `done` shows the release: the message is then decided as a
session's first one, or goes to `then`), `--handoff` says the current agent was just handed the
conversation, `--held` that the current agent is a human desk holding it.
"""

from __future__ import annotations

import argparse
import sys

from stickyroute.channels import lists_agents
from stickyroute.config.model import Config
from stickyroute.routing.explain import NOW, explain_outcome
from stickyroute.routing.rules import build_rules
from stickyroute.routing.signals import Signal, SignalKind


def explain(config: Config, channel_name: str, text: str, current: str | None = None,
            candidate: str | None = None, counter: int = 0, now: float = NOW, hint: Signal | None = None,
            held: bool = False) -> str:
    """The explanation as text (lines joined by newlines). Raises KeyError for an unknown channel."""
    channel = config.channels[channel_name]
    rules = build_rules(config, channel, lists_agents=lists_agents(channel.type))
    return "\n".join(explain_outcome(rules, text, current, candidate, counter, now, hint, held)[0])


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The `explain` subcommand's options."""
    parser.add_argument("--config", required=True, help="config file (TOML)")
    parser.add_argument("--channel", required=True, help="channel name in the config")
    parser.add_argument("--text", required=True, help="the message text")
    parser.add_argument("--current", help="the conversation's current agent (omit: first message)")
    parser.add_argument("--candidate", help="pending divergence candidate")
    parser.add_argument("--counter", type=int, default=0, help="pending divergence counter")
    given = parser.add_mutually_exclusive_group()
    given.add_argument("--hint", help='the current agent\'s pending hint: "not-mine" or "not-mine; suggest=AGENT"')
    given.add_argument("--handoff", action="store_true", help="the current agent was just handed the conversation")
    given.add_argument("--held", action="store_true",
                       help="the current agent is a human desk holding the conversation (handed, switched or pinned)")


def run(args: argparse.Namespace) -> int:
    """Load the config, print the explanation; 0, or 2 for an invalid config (its errors on
    stderr, each naming the file and the key) or an unknown channel or agent."""
    from stickyroute.config.loader import load_config
    from stickyroute.errors import ConfigError
    from stickyroute.hints import parse_hint

    try:
        config = load_config(args.config, warn=False)  # warnings are `check`'s and `serve`'s business
    except ConfigError as exc:
        print(f"explain: {exc}", file=sys.stderr)
        return 2
    if args.channel not in config.channels:
        print(f"explain: no channel {args.channel!r} in {args.config}", file=sys.stderr)
        return 2
    for agent in (args.current, args.candidate):
        if agent is not None and agent not in config.agents:
            print(f"explain: no agent {agent!r} in {args.config}", file=sys.stderr)
            return 2
    hint: Signal | None = None
    if (args.hint or args.handoff or args.held) and args.current is None:
        print("explain: --hint, --handoff and --held need --current AGENT", file=sys.stderr)
        return 2
    if args.handoff:
        hint = Signal(SignalKind.HANDOFF, args.current, args.current)
    elif args.hint:
        parsed = parse_hint(args.hint, args.current)
        if isinstance(parsed, str):
            print(f"explain: --hint: {parsed}", file=sys.stderr)
            return 2
        hint = parsed
    print(explain(config, args.channel, args.text, args.current, args.candidate, args.counter, hint=hint,
                  held=args.held))
    return 0
