"""`stickyroute replay`: evaluate strategies on a labelled corpus, or what-if a recorded traffic file.

    stickyroute replay CORPUS.jsonl --agents AGENTS.toml [--config CONFIG] [--strategy NAME|all]
        [--classifier oracle|noisy:P|keywords|groq] [--seed N] [--gap-s 30]
        [--format table|json] [--sweep] [--plot FILE.png] [--limit N] [--rules DIR [--rules-only]]
        [--agent-hints P,R] [--hints-mode off|divergence|confirm] [--agent-done P,R] [--non-sticky A,B]
    stickyroute replay RECORDING.jsonl --config NEW [--baseline OLD] [--classifier keywords|groq]

The file's first line decides the mode: a recording (`serve --record`) has a header or "body".
Corpus rows: the two baselines, the four strategies with the seed settings, `recommended`
(RECOMMENDED below) and, with --config, `config` (its first Telegram channel's routing).
`--agent-hints P,R` adds simulated agents that say "not mine" (issue #12, `runner.play`);
`--hints-mode` sets every row's `auto_route_agent_hints`. `--agent-done P,R` adds simulated
agents that say `done` at the end of their gold segments (issue #22); `--non-sticky A,B` marks
those agents `sticky = false` (detours) without editing the agents file.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Sequence
from dataclasses import replace

from stickyroute.classifier.base import Classifier
from stickyroute.config.model import Agent, AgentHints, Config, RoutingSettings, Strategy
from stickyroute.errors import ConfigError
from stickyroute.replay.agents_file import ExtraPacks
from stickyroute.replay.corpus import Conversation, load_agents, load_corpus
from stickyroute.replay.judges import estimate_tokens
from stickyroute.replay.metrics import Row, classify_every, row, stay_first
from stickyroute.replay.runner import evaluate

RECOMMENDED = RoutingSettings(
    strategy=Strategy.STICKY_HEURISTIC,
    confidence_threshold=6,
    sticky_bonus=6,
    divergence_count=1,
    first_message_margin=0,
    keyword_switch_margin=6,
    contest_confirm=True,
)
"""The settings that measured best on the dev files (docs/eval/results.md)."""

COLUMNS = ("strategy", "messages", "accuracy", "accuracy_lenient", "switch_recall", "switch_delay",
           "false_switches_per_100", "boomerangs_per_100", "classifier_calls_per_100", "tokens")
HEADERS = ("strategy", "msgs", "acc%", "lenient%", "sw.recall%", "sw.delay", "false/100", "boom/100",
           "calls/100", "tokens")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The `replay` subcommand's arguments."""
    parser.add_argument("file", help="corpus JSONL (eval/corpus) or a `serve --record` file")
    parser.add_argument("--agents", help="agents TOML of the corpus ([[agents]] name, description, keywords)")
    parser.add_argument("--config", help="corpus: add a row with this config's routing; recording: the NEW config")
    parser.add_argument("--baseline", help="recording: the OLD config (default: the one the recording names)")
    parser.add_argument("--strategy", default="all",
                        help="off | explicit_only | sticky_ttl | sticky_heuristic | recommended | all")
    parser.add_argument("--classifier", default=None,
                        help="oracle (corpus default) | noisy:P | keywords (alias heuristic) | groq")
    parser.add_argument("--seed", type=int, default=0, help="seed of the noisy judge")
    parser.add_argument("--gap-s", type=float, default=30.0, help="seconds between turns (default 30)")
    parser.add_argument("--format", choices=("table", "json"), default="table")
    parser.add_argument("--sweep", action="store_true", help="grid sweep; prints the Pareto front")
    parser.add_argument("--plot", help="with --sweep: write the PNG plot here")
    parser.add_argument("--limit", type=int, help="only the first N conversations")
    parser.add_argument("--rules", metavar="DIR",
                        help="corpus: merge DIR/<agent>.toml into each agent (a `stickyroute learn` output)")
    parser.add_argument("--rules-only", action="store_true",
                        help="with --rules: use the packs' keyword lists instead of the agents file's")
    parser.add_argument("--agent-hints", metavar="P,R",
                        help="simulated agents hint not-mine: falsely on their own turns with probability P, "
                             "on another agent's turns with recall R (seeded by --seed)")
    parser.add_argument("--hints-mode", choices=tuple(h.value for h in AgentHints),
                        help="auto_route_agent_hints for every row (default: each row's own, confirm unless set)")
    parser.add_argument("--agent-done", metavar="P,R",
                        help="simulated agents say done at the end of their gold segment with recall R, and falsely "
                             "after any other turn with probability P (seeded by --seed)")
    parser.add_argument("--non-sticky", metavar="A,B",
                        help="mark these agents sticky = false (detours: the route stays with the previous agent)")


def parse_rates(text: str, option: str = "--agent-hints") -> tuple[float, float]:
    """`P,R` -> (P, R), both in [0, 1]; ValueError naming `option` otherwise."""
    parts = text.split(",")
    try:
        rates = tuple(float(p) for p in parts)
    except ValueError:
        rates = ()
    if len(rates) != 2 or not all(0.0 <= r <= 1.0 for r in rates):
        raise ValueError(f"{option}: expected P,R with both between 0 and 1, got {text!r}")
    return rates[0], rates[1]


def strategy_rows(names: list[str], config_settings: RoutingSettings | None) -> list[tuple[str, RoutingSettings]]:
    """(row name, settings) for the requested strategies."""
    seed = RoutingSettings()
    table = {s.value: replace(seed, strategy=s) for s in Strategy}
    table["recommended"] = RECOMMENDED
    if config_settings is not None:
        table["config"] = config_settings
    if names == ["all"]:
        return list(table.items())
    unknown = [n for n in names if n not in table]
    if unknown:
        raise ValueError(f"unknown strategy {unknown[0]!r}: expected one of {', '.join(table)} or all")
    return [(n, table[n]) for n in names]


def baseline_rows(conversations: list[Conversation], agents: Sequence[Agent], short_chars: int = 15) -> list[Row]:
    """The two baselines as rows (tokens of classify_every estimated like the judges' prompts)."""
    from stickyroute.classifier.base import Candidate, ClassificationRequest
    from stickyroute.replay.corpus import DEFAULT_AGENT

    candidates = tuple(Candidate(a.name, a.description) for a in agents) + (Candidate(DEFAULT_AGENT),)

    def tokens_of(text: str) -> int:
        return estimate_tokens(ClassificationRequest("telegram", text, candidates))

    return [
        row("baseline_stay_first", {}, stay_first(conversations)),
        row("baseline_classify_every", {"short_message_chars": short_chars},
            classify_every(conversations, short_chars, tokens_of)),
    ]


def format_table(rows: list[Row]) -> str:
    """A fixed-width text table of rows."""
    cells = [HEADERS] + [tuple(_cell(getattr(r, c)) for c in COLUMNS) for r in rows]
    widths = [max(len(line[i]) for line in cells) for i in range(len(HEADERS))]
    return "\n".join("  ".join(v.ljust(w) if i == 0 else v.rjust(w)
                               for i, (v, w) in enumerate(zip(line, widths, strict=True)))
                     for line in cells)


def _cell(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.2f}"
    return str(value)


def _load_config(path: str) -> Config:
    from stickyroute.config.loader import load_config

    return load_config(path, warn=False)  # warnings are `check`'s and `serve`'s business


def _first_telegram_routing(config: Config) -> RoutingSettings:
    for channel in config.channels.values():
        if channel.type.value == "telegram":
            return channel.routing
    return next(iter(config.channels.values())).routing


def run(args: argparse.Namespace) -> int:
    """Run the replay; 0 on success, 2 on bad arguments or unreadable files (a clear message)."""
    try:
        return _run(args)
    except ConfigError as exc:
        for problem in exc.problems:
            print(f"replay: {problem}", file=sys.stderr)
        return 2
    except (OSError, ValueError) as exc:
        print(f"replay: {exc}", file=sys.stderr)
        return 2


def _run(args: argparse.Namespace) -> int:
    with open(args.file, encoding="utf-8") as handle:
        first = handle.readline()
    from stickyroute.replay.recorded import is_recording

    if is_recording(first):
        return _run_recording(args)
    if not args.agents:
        print("replay: a corpus needs --agents AGENTS.toml", file=sys.stderr)
        return 2
    if args.rules_only and not args.rules:
        print("replay: --rules-only needs --rules DIR", file=sys.stderr)
        return 2
    conversations = load_corpus(args.file, args.limit)
    detours = frozenset(n.strip() for n in (args.non_sticky or "").split(",") if n.strip())
    extra = ExtraPacks(args.rules, args.rules_only, detours) if args.rules or detours else None
    agents = load_agents(args.agents, extra)
    judge = args.classifier or "oracle"
    config_settings = _first_telegram_routing(_load_config(args.config)) if args.config else None
    if args.sweep:
        return _run_sweep(args, conversations, agents, judge)
    try:
        named = strategy_rows(args.strategy.split(","), config_settings)
    except ValueError as exc:
        print(f"replay: {exc}", file=sys.stderr)
        return 2
    rows = baseline_rows(conversations, agents)
    if args.hints_mode:
        named = [(n, replace(s, agent_hints=AgentHints(args.hints_mode))) for n, s in named]
    try:
        rates = parse_rates(args.agent_hints) if args.agent_hints else None
        done = parse_rates(args.agent_done, "--agent-done") if args.agent_done else None
        rows += [evaluate(name, conversations, agents, s, judge, args.seed, args.gap_s, rates, done)
                 for name, s in named]
    except (ValueError, ConfigError) as exc:
        print(f"replay: {exc}", file=sys.stderr)
        return 2
    if args.format == "json":
        print(json.dumps([r.as_dict() for r in rows], indent=2))
    else:
        hints = f", agent hints P,R = {args.agent_hints}" if args.agent_hints else ""
        hints += f", agent done P,R = {args.agent_done}" if args.agent_done else ""
        hints += f", non-sticky {', '.join(sorted(detours))}" if detours else ""
        print(f"{args.file}: {len(conversations)} conversations, classifier {judge}{hints}")
        print(format_table(rows))
    return 0


def _run_sweep(args: argparse.Namespace, conversations: list[Conversation], agents: Sequence[Agent],
               judge: str) -> int:
    from stickyroute.replay.sweep import GRID, front_table, grid_settings, pareto_front, plot, run_sweep

    base = RoutingSettings(strategy=Strategy.STICKY_HEURISTIC)
    rows = run_sweep(conversations, agents, grid_settings(base, GRID), judge, args.seed, args.gap_s, sys.stderr)
    seed_row = evaluate("seed", conversations, agents, base, judge, args.seed, args.gap_s)
    recommended = evaluate("recommended", conversations, agents, RECOMMENDED, judge, args.seed, args.gap_s)
    front = pareto_front(rows)
    if args.format == "json":
        print(json.dumps({"front": [r.as_dict() for r in front], "all": [r.as_dict() for r in rows]}, indent=2))
    else:
        print(f"{args.file}: {len(conversations)} conversations, classifier {judge}")
        print(f"Pareto front (accuracy vs classifier calls per 100), {len(rows)} settings:")
        print(front_table(front))
    if args.plot:
        plot(rows, args.plot, {"seed defaults": seed_row, "recommended": recommended},
             title=f"{args.file.rsplit('/', 1)[-1]}, classifier {judge}")
        print(f"plot written to {args.plot}", file=sys.stderr)
    return 0


def _run_recording(args: argparse.Namespace) -> int:
    from stickyroute.replay.recorded import (
        compare,
        format_changes,
        keyword_classifier_for,
        load_recording,
        route_recording,
    )

    if args.rules:
        print("replay: --rules applies to a corpus; for a recording, name the packs in the NEW config "
              "([agents.X] rules = \"learned/X.toml\")", file=sys.stderr)
        return 2
    recording = load_recording(args.file)
    records = recording.records
    old_path = args.baseline or recording.config
    if not args.config or not old_path:
        print("replay: a recording needs --config NEW (and --baseline OLD when the recording names none)",
              file=sys.stderr)
        return 2
    old, new = _load_config(old_path), _load_config(args.config)
    spec = args.classifier or "keywords"
    if spec in ("keywords", "heuristic"):
        factory = keyword_classifier_for
    elif spec == "groq":
        factory = _groq_for
    else:
        print(f"replay: classifier {spec!r} needs gold labels; use keywords or groq on recordings", file=sys.stderr)
        return 2
    changes = asyncio.run(compare(records, old, new, factory))
    total = len(asyncio.run(route_recording(records, old, keyword_classifier_for(old))))
    print(format_changes(changes, total))
    return 0


def _groq_for(config: Config) -> Classifier:
    import os

    from stickyroute.classifier.factory import build_classifier
    from stickyroute.clock import monotonic
    from stickyroute.routing.rules import global_scorer

    classifier, _line = build_classifier(replace(config.classifier, provider="groq"), global_scorer(config).scores,
                                         config.routing.confidence_threshold, os.environ, clock=monotonic)
    return classifier
