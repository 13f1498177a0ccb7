"""Rule packs: reusable keyword lists for common agents.

An agent pulls a pack in with `rules = "rules/coder.toml"` (a path relative to the config file's
folder) or `rules = "builtin:coder"` (a pack shipped inside the package, `stickyroute/rules/`, so
a config that names only shipped packs works from any folder). A pack that cannot be read is
reported with the absolute path that was tried. Pack format, every key optional:

    description = "Writes, reviews and explains code."   # used when the agent sets none
    aliases = ["dev"]                  # extra names for `/agent <name>` and `@name`
    keywords = ["pull request", ...]   # strong keywords: `strong_weight` points each (6)
    weak_keywords = ["code", ...]      # ambiguous words: `weak_weight` points each (1)
    confirm_keywords = ["repo"]        # strong, but they never decide alone: the classifier confirms
    sticky_bonus_offset = 1            # extra sticky bonus while this agent holds a route (points)
    two_topic_confirm = true           # a second topic after the holder's own business is confirmed

Merging (`merge_words`): the agent's own list first, then the pack's, duplicates dropped
case-insensitively (casefold) keeping the first spelling; a word that is a strong keyword is
dropped from the weak list, and a strong or weak keyword from the confirm list. The agent's
own description wins over the pack's.

A keyword must contain a letter or digit: the keyword gate (`stickyroute.routing.keywords`) matches words
(`\\w+`) and treats punctuation as a separator, so `"c++"` would only ever match `c`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path

from stickyroute.config._reader import Problems, Table, quote, read_toml
from stickyroute.errors import ConfigError

_WORD = re.compile(r"\w")
ALIAS = re.compile(r"[a-z0-9][a-z0-9_-]*")
"""Agent names and aliases: lowercase letters, digits, `-` and `_` (aliases are lowercased)."""
RESERVED_NAMES = ("auto", "none")
"""`/agent auto` leaves an explicit route; `none` is the classifier's "no agent" answer."""
BUILTIN = "builtin:"
"""Prefix of a shipped pack's name in `rules` (`builtin:coder`)."""


def shipped_rules_dir() -> Path:
    """The folder of the rule packs shipped with stickyroute (package data)."""
    return Path(str(files("stickyroute") / "rules"))


def shipped_packs() -> tuple[str, ...]:
    """The names of the shipped rule packs, sorted (`builtin:<name>`)."""
    return tuple(sorted(p.stem for p in shipped_rules_dir().glob("*.toml")))


@dataclass(frozen=True, slots=True)
class RulePack:
    """One parsed rule pack; `path` as given to `load_rule_pack`."""

    path: str
    description: str = ""
    aliases: tuple[str, ...] = ()
    keywords: tuple[str, ...] = ()
    weak_keywords: tuple[str, ...] = ()
    confirm_keywords: tuple[str, ...] = ()
    sticky_bonus_offset: int | None = None
    """None: the pack does not set it."""
    two_topic_confirm: bool | None = None
    """None: the pack does not set it."""


def load_rule_pack(path: str | Path) -> RulePack:
    """Read and validate the pack at `path`.

    Raises ConfigError with every problem (file = `path`, key = the pack's key; unreadable
    files and TOML syntax errors use the keys `(file)` and `(syntax)`).
    """
    problems = Problems(str(path))
    data = read_toml(str(path), problems)
    pack = None
    if data is not None:
        table = Table(data, "", problems)
        table.reject_unknown(("description", "aliases", "keywords", "weak_keywords", "confirm_keywords",
                              "sticky_bonus_offset", "two_topic_confirm"))
        pack = RulePack(
            path=str(path),
            description=table.string("description", "", allow_empty=True) or "",
            aliases=read_aliases(table, "aliases"),
            keywords=read_keywords(table, "keywords"),
            weak_keywords=read_keywords(table, "weak_keywords"),
            confirm_keywords=read_keywords(table, "confirm_keywords"),
            sticky_bonus_offset=read_offset(table),
            two_topic_confirm=table.boolean("two_topic_confirm"),
        )
    if problems.errors or pack is None:
        raise ConfigError(problems.errors)
    return pack


MAX_STICKY_BONUS_OFFSET = 100
"""Largest `sticky_bonus_offset` accepted (points)."""


def read_offset(table: Table) -> int | None:
    """`sticky_bonus_offset`: an integer in [0, MAX_STICKY_BONUS_OFFSET], None when absent (or
    invalid: the problem is recorded)."""
    return table.integer("sticky_bonus_offset", minimum=0, maximum=MAX_STICKY_BONUS_OFFSET)


def read_pack(table: Table, rules: str | None, folder: Path) -> RulePack:
    """The rule pack named by a table's `rules` key (`builtin:<name>`, or a path relative to
    `folder`): an empty pack when `rules` is None or the pack is invalid (then every problem is
    recorded under the table's `rules` key as `<rules>: <pack key>: <message>`; an unreadable
    file also names the absolute path that was tried)."""
    if rules is None:
        return RulePack(path="")
    if rules.startswith(BUILTIN):
        name = rules.removeprefix(BUILTIN)
        if name not in shipped_packs():
            table.error("rules", f"{rules}: no rule pack {quote(name)} ships with stickyroute "
                        f"(builtin: {', '.join(shipped_packs())})")
            return RulePack(path=rules)
        path = shipped_rules_dir() / f"{name}.toml"
    else:
        path = folder / rules
    try:
        return load_rule_pack(path)
    except ConfigError as exc:
        for problem in exc.problems:
            where = "" if problem.key.startswith("(") else f"{problem.key}: "
            tried = f" (looked for {os.path.normpath(path)})" if problem.key == "(file)" else ""
            table.error("rules", f"{rules}: {where}{problem.message}{tried}")
        return RulePack(path=rules)


def read_keywords(table: Table, key: str) -> tuple[str, ...]:
    """`table[key]` as keywords: non-empty strings with a letter or digit, stripped."""
    result = []
    for i, word in table.indexed_strings(key) or ():
        if not _WORD.search(word):
            table.error(f"{key}[{i}]", f"{quote(word)} has no letter or digit (never matches)")
        else:
            result.append(word.strip())
    return tuple(result)


def read_aliases(table: Table, key: str) -> tuple[str, ...]:
    """`table[key]` as aliases, lowercased, each a valid agent name and not reserved."""
    result = []
    for i, alias in table.indexed_strings(key) or ():
        folded = alias.strip().lower()
        if not ALIAS.fullmatch(folded):
            table.error(f"{key}[{i}]", "expected lowercase letters, digits, - or _; "
                        f"got {quote(alias)}")
        elif folded in RESERVED_NAMES:
            table.error(f"{key}[{i}]", f"{quote(folded)} is reserved")
        else:
            result.append(folded)
    return merge_words(result)


def merge_words(*lists: Iterable[str], exclude: Iterable[str] = ()) -> tuple[str, ...]:
    """The words of `lists` in order, without case-insensitive duplicates or `exclude`d ones."""
    seen = {word.casefold() for word in exclude}
    result = []
    for words in lists:
        for word in words:
            folded = word.casefold()
            if folded not in seen:
                seen.add(folded)
                result.append(word)
    return tuple(result)
