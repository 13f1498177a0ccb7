"""The generated reference pages: docs/cli.md from the command line's own parser, and
docs/configuration.md from the config model (`stickyroute.config.reference`).

    python -m stickyroute.cli.reference write     (`make reference`) rewrite both pages
    python -m stickyroute.cli.reference check     exit 1 naming each stale page

docs/cli.md holds every command's `--help` (argparse's own text, 100 columns wide), so the page
says exactly what the command line accepts.
"""

from __future__ import annotations

import argparse
import functools
import sys
from collections.abc import Iterator
from pathlib import Path

from stickyroute.cli.main import build_parser
from stickyroute.config.reference import render_page

__all__ = ["PAGES", "main", "render_cli_page"]

WIDTH = 100
CLI_INTRO = """\
# Command line

<!-- Generated from the command line's parser by `make reference`: edit the help texts in
stickyroute/cli/, not this page. -->

`pip install stickyroute` puts the `stickyroute` command on the PATH (in a clone: `.venv/bin/stickyroute`
after `make install`; `python -m stickyroute` works too). Each section below is the command's own
`--help`. Without `--config`, `serve`, `check` and `webhook` read `./stickyroute.toml`, which
`stickyroute init` writes.

Exit codes: 0 success; 2 an invalid config or command line (every problem printed as
`file: dotted.key: what is wrong`); 1 a failure the command reports (`stats`: the admin listener
cannot be reached; `webhook`: the platform refused or could not be reached; any command whose output
pipe was closed, as by `| head`).
"""


def _parsers(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> Iterator[
        tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """Every parser under `parser` (itself first), with its command words."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _parsers(sub, (*path, name))


def render_cli_page() -> str:
    """docs/cli.md (see the module docstring)."""
    parser, _runs = build_parser()
    out = [CLI_INTRO]
    for words, sub in _parsers(parser):
        sub.formatter_class = functools.partial(argparse.HelpFormatter, width=WIDTH, max_help_position=30)
        title = " ".join(("stickyroute", *words))
        out += [f"## `{title}`" if words else "## `stickyroute`", "", "```text", sub.format_help().rstrip(), "```", ""]
    return "\n".join(out).rstrip() + "\n"


PAGES = {"docs/configuration.md": render_page, "docs/cli.md": render_cli_page}
"""Page (relative to the repository) -> the function that renders it."""


def main(argv: list[str] | None = None) -> int:
    """Write (`write`) or check (`check`) the pages under the current folder (the repository)."""
    parser = argparse.ArgumentParser(prog="python -m stickyroute.cli.reference")
    parser.add_argument("mode", choices=("write", "check"), help="write the pages, or check they are current")
    args = parser.parse_args(argv)
    stale = []
    for page, render in PAGES.items():
        text = render()
        path = Path(page)
        if args.mode == "write":
            path.write_text(text, encoding="utf-8")
            print(f"wrote {page}")
        elif not path.exists() or path.read_text(encoding="utf-8") != text:
            stale.append(page)
    for page in stale:
        print(f"{page} is stale: run `make reference`", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
