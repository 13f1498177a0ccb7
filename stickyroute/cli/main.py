"""`stickyroute` command line: one argparse subcommand per entry of `_COMMANDS`.

    stickyroute check [PATH]      validate a config: exit 0 (warnings allowed) or 2 (errors)
    stickyroute init|serve|webhook|stats|replay|explain|learn ...   implemented in their own modules (see below)

A command is a pair `(add_arguments(parser), run(args) -> exit code)`. Commands implemented
elsewhere live in `_MODULES`: the module (e.g. `stickyroute/cli/serve.py`) defines
`add_<name>_arguments(parser: argparse.ArgumentParser) -> None` and
`run_<name>(args: argparse.Namespace) -> int` (or plain `add_arguments` / `run` when it holds
one command). Modules are imported only when the command line is built.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable, Sequence

from stickyroute import __version__
from stickyroute.config import check_config
from stickyroute.errors import ConfigProblem

AddArguments = Callable[[argparse.ArgumentParser], None]
Run = Callable[[argparse.Namespace], int]

DEFAULT_CONFIG = "stickyroute.toml"
"""The config `check` reads without PATH (as `serve` and `webhook` do without --config)."""
EXIT_OK = 0
EXIT_CLOSED_PIPE = 1
EXIT_INVALID = 2


def _add_check_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", metavar="PATH", nargs="?", help="config file to validate (TOML; default "
                        f"./{DEFAULT_CONFIG}, which `stickyroute init` writes)")


def _run_check(args: argparse.Namespace) -> int:
    """Print every problem as `file: dotted.key: what is wrong` (warnings prefixed).

    Errors first, then warnings, then a summary line. Exit 0 when there is no error, else 2.
    With `[state] backend = "redis"`, a Redis that does not answer is a warning (`state.url`;
    `state.sentinels` on Sentinel) with the exact error: the proxy would start on its memory
    fallback. On a cluster every primary is pinged; a silent one is a warning too.
    """
    if args.path is None and not os.path.isfile(DEFAULT_CONFIG):
        print(f"stickyroute check: no config to check: there is no ./{DEFAULT_CONFIG} here (`stickyroute init` "
              "writes one); or name it: stickyroute check PATH", file=sys.stderr)
        return EXIT_INVALID
    config, problems = check_config(args.path or DEFAULT_CONFIG)
    if config is not None and config.state.shared and not [p for p in problems if not p.warning]:
        from stickyroute.state.build import probe

        unreachable = probe(config.state)
        if unreachable is not None:
            key = "state.sentinels" if config.state.mode == "sentinel" else "state.url"
            problems.append(ConfigProblem(config.path, key, unreachable, warning=True))
    errors = [p for p in problems if not p.warning]
    warnings = [p for p in problems if p.warning]
    for problem in errors:
        print(problem)
    for problem in warnings:
        print(f"warning: {problem}")
    if config is None or errors:
        print(f"invalid: {_count(len(errors), 'error')}, {_count(len(warnings), 'warning')}")
        return EXIT_INVALID
    print(f"ok: {_count(len(config.agents), 'agent')}, {_count(len(config.channels), 'channel')}")
    return EXIT_OK


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


_COMMANDS: dict[str, tuple[AddArguments, Run]] = {
    "check": (_add_check_arguments, _run_check),
}
"""Commands implemented in this module."""

_MODULES: dict[str, str] = {
    "init": "stickyroute.cli.init",  # init [DIR] --channel telegram --channel whatsapp
    "serve": "stickyroute.cli.serve",  # serve [--config PATH] [--host H] [--port P] [--record FILE]
    "webhook": "stickyroute.cli.webhook",  # webhook set|info|delete CHANNEL [--url URL]
    "stats": "stickyroute.cli.serve",  # stats: the admin listener's GET /stats
    "replay": "stickyroute.replay.cli",  # replay CORPUS.jsonl --agents ... | replay FILE --config NEW
    "explain": "stickyroute.replay.explain",  # explain --config C --channel telegram --text "..."
    "learn": "stickyroute.cli.learn",  # learn CORPUS.jsonl --agents A --out DIR | learn RECORDED.jsonl --out DIR
}
"""Commands implemented in other modules: name -> module defining its add/run functions."""

_HELP = {
    "check": "validate a config file",
    "serve": "run the proxy",
    "stats": "print classifier and routing statistics",
    "replay": "replay a corpus or recorded traffic through the router",
    "explain": "explain one routing decision",
    "learn": "learn keyword rule packs from a labelled corpus or recorded traffic",
    "init": "write a starter config and the rule packs it uses",
    "webhook": "register a channel's webhook with its platform (set, info, delete)",
}


def _command(name: str) -> tuple[AddArguments, Run]:
    """The (add_arguments, run) pair of `name`: defined here or in its module."""
    if name in _COMMANDS:
        return _COMMANDS[name]
    module = importlib.import_module(_MODULES[name])
    add_arguments = getattr(module, f"add_{name}_arguments", None) or module.add_arguments
    run = getattr(module, f"run_{name}", None) or module.run
    return add_arguments, run


def build_parser() -> tuple[argparse.ArgumentParser, dict[str, Run]]:
    """The top-level parser and each subcommand's run function."""
    parser = argparse.ArgumentParser(
        prog="stickyroute",
        description="Chat-webhook reverse proxy that routes each conversation to the right agent.",
    )
    parser.add_argument("--version", action="version", version=f"stickyroute {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    runs: dict[str, Run] = {}
    for name in [*_COMMANDS, *(n for n in _MODULES if n not in _COMMANDS)]:
        add_arguments, run = _command(name)
        sub = subparsers.add_parser(name, help=_HELP.get(name), description=_HELP.get(name))
        add_arguments(sub)
        runs[name] = run
    return parser, runs


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `stickyroute` console script; returns the exit code.

    Output into a pipe whose reader went away (`stickyroute stats | head`) ends the command
    quietly with exit code 1 (Python docs, signal module, "Note on SIGPIPE"), never a traceback.
    """
    try:
        parser, runs = build_parser()
        args = parser.parse_args(argv)
        code = runs[args.command](args)
        sys.stdout.flush()  # a write error surfaces here, not at interpreter exit
        return code
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # the interpreter's last flush must not fail again
        return EXIT_CLOSED_PIPE


if __name__ == "__main__":
    sys.exit(main())
