"""`stickyroute init [DIR]`: write a commented starter config and the rule packs it uses, then say
what to do next.

    stickyroute init [DIR] [--channel telegram --channel whatsapp] [--agent NAME ...] [--force]

DIR defaults to the current folder; the config is DIR/stickyroute.toml (where `serve`, `check`
and `webhook` look without `--config`). Channels default to telegram; agents to support and coder
(placeholders, see `stickyroute.starter`). Existing files are never overwritten without
`--force`. Exit 0, or 2 with a message (an unknown channel type, a file in the way).
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from pathlib import Path

from stickyroute.config.rulepack import ALIAS, RESERVED_NAMES
from stickyroute.starter import CHANNEL_TEMPLATES, CONFIG_NAME, DEFAULT_AGENTS, needed_env, starter_files

EXIT_OK = 0
EXIT_INVALID = 2


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """`init`'s arguments."""
    parser.add_argument("dir", metavar="DIR", nargs="?", default=".", help="the folder to write into (default: here)")
    parser.add_argument("--channel", action="append", metavar="TYPE",
                        help=f"a channel to configure, repeatable ({', '.join(CHANNEL_TEMPLATES)}; default telegram)")
    parser.add_argument("--agent", action="append", metavar="NAME",
                        help=f"a placeholder agent, repeatable; the first is the default (default: "
                             f"{' '.join(DEFAULT_AGENTS)})")
    parser.add_argument("--force", action="store_true", help="overwrite files that exist")


def run(args: argparse.Namespace) -> int:
    """Write the files and print the next steps."""
    channels = tuple(dict.fromkeys(args.channel or ["telegram"]))
    agents = tuple(dict.fromkeys(args.agent or DEFAULT_AGENTS))
    unknown = [c for c in channels if c not in CHANNEL_TEMPLATES]
    if unknown:
        print(f"stickyroute init: no starter template for channel {', '.join(unknown)} "
              f"(templates: {', '.join(CHANNEL_TEMPLATES)})", file=sys.stderr)
        return EXIT_INVALID
    bad = [a for a in agents if not ALIAS.fullmatch(a) or a in RESERVED_NAMES]
    if bad:
        print(f"stickyroute init: {', '.join(bad)}: an agent name is lowercase letters, digits, - or _ "
              f"(not {' or '.join(RESERVED_NAMES)})", file=sys.stderr)
        return EXIT_INVALID
    folder = Path(args.dir)
    written = starter_files(channels, agents)
    in_the_way = [rel for rel in written if (folder / rel).exists()]
    if in_the_way and not args.force:
        print(f"stickyroute init: {', '.join(str(folder / rel) for rel in in_the_way)} already exist(s): "
              "nothing written (--force overwrites)", file=sys.stderr)
        return EXIT_INVALID
    for rel, text in written.items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path}")
    print()
    print("\n".join(next_steps(folder, channels)))
    return EXIT_OK


def next_steps(folder: Path, channels: tuple[str, ...]) -> list[str]:
    """What to do after `init` (commands that work from the current folder)."""
    config = shlex.quote(str(folder / CONFIG_NAME))
    here = os.path.normpath(folder) == "."
    width = max(len(name) for name, _ in needed_env(channels))
    lines = ["next:", "  1. put the secrets the config reads in the environment (or in a file your service manager "
                      "loads):"]
    lines += [f"       export {name}=...{' ' * (width - len(name))}  {what}" for name, what in needed_env(channels)]
    lines += ["  2. point each [agents.NAME] url at your agent's webhook endpoint (until then the demo agents of",
              "     `stickyroute serve --demo-agents` answer on those loopback URLs)",
              f"  3. stickyroute check{'' if here else ' ' + config}",
              f"  4. stickyroute serve{'' if here else ' --config ' + config}",
              "  5. make the webhook paths reachable over HTTPS, then register them with the platforms:"]
    for name in channels:
        step = CHANNEL_TEMPLATES[name].register.format(name=name, config=config)
        lines += [f"       {line}" for line in step.splitlines()]
    return lines
