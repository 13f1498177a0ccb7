"""The replay's agents file: `[[agents]]` tables, keyword lists merged as in the proxy config.

    [[agents]]
    name = "hotel"                      # required: the corpus's `gold` value
    description = "Finds and books places to stay."
    aliases = ["rooms"]                 # optional, as in the config
    keywords = ["guesthouse", ...]      # strong keywords
    weak_keywords = ["room", ...]       # weak keywords
    confirm_keywords = ["stay"]         # strong, confirmed by the classifier before they decide
    sticky = false                      # a detour agent (issue #22): the route stays where it was
    sticky_bonus_offset = 1             # extra sticky bonus while it holds a route (or from its pack)
    two_topic_confirm = true            # a second topic after its own business is confirmed (or from its pack)
    rules = "learned/hotel.toml"        # a rule pack, relative to this file
    services = ["Hotels"]               # informational (the SGD service families): ignored

A pack named by `rules` is merged exactly as `[agents.X] rules` in the proxy config
(`stickyroute.config.rulepack`: the agent's own lists first, then the pack's, duplicates dropped,
a strong keyword dropped from the weak list; the agent's own description wins). An extra pack
folder (`replay --rules DIR`) merges `DIR/<name>.toml`, when it exists, after those; with
`rules_only` the agent's keyword lists are the folder pack's alone (agents without a pack there
keep theirs). `sticky_bonus_offset`: the agent's own key, else the folder pack's, else its
`rules` pack's, else 0; `two_topic_confirm` the same way (else false).
`ExtraPacks.non_sticky` (`replay --non-sticky a,b`) marks those agents `sticky = false` without
editing the file; an unknown name there is an error under the key `(non-sticky)`.

Errors: every problem of the file at once, as `ConfigError` problems naming the file and the
dotted key (`agents.toml: agents[2].colour: unknown key`); a pack's problems are reported under
the agent's `rules` key, as in the config.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from stickyroute.config._reader import Problems, Table, quote, read_toml
from stickyroute.config.model import Agent
from stickyroute.config.rulepack import (
    ALIAS,
    RESERVED_NAMES,
    merge_words,
    read_aliases,
    read_keywords,
    read_offset,
    read_pack,
)
from stickyroute.errors import ConfigError

AGENT_KEYS = ("name", "description", "aliases", "keywords", "weak_keywords", "confirm_keywords", "rules",
              "services", "sticky", "sticky_bonus_offset",
              "two_topic_confirm")
UNUSED_URL = "http://127.0.0.1:9/unused"
"""Replays never forward: every agent gets this loopback URL."""


@dataclass(frozen=True, slots=True)
class ExtraPacks:
    """`replay --rules DIR`: merge `DIR/<agent>.toml` into each agent (`only`: instead of its lists);
    `non_sticky`: agents to mark `sticky = false` (`replay --non-sticky`; `folder` may be None)."""

    folder: str | None
    only: bool = False
    non_sticky: frozenset[str] = frozenset()


def load_agents_file(path: str | Path, extra: ExtraPacks | None = None) -> tuple[Agent, ...]:
    """The agents of an agents file, in file order, keyword lists merged with their packs.

    Raises ConfigError listing every problem (unreadable file: key `(file)`; no agents: key
    `agents`; a missing extra-pack folder: key `(rules)`).
    """
    problems = Problems(str(path))
    data = read_toml(str(path), problems)
    agents: list[Agent] = []
    if data is not None:
        root = Table(data, "", problems)
        root.reject_unknown(("agents",))
        items = root.tables("agents")
        if not items and not root.has("agents"):
            root.error("agents", "at least one [[agents]] table is required")
        if extra is not None and extra.folder is not None and not Path(extra.folder).is_dir():
            problems.error("(rules)", f"no folder {quote(extra.folder)}")
            extra = ExtraPacks(None, non_sticky=extra.non_sticky)
        seen: set[str] = set()
        for table in items:
            agent = _read_agent(table, Path(path).parent, extra)
            if agent is None:
                continue
            if agent.name in seen:
                table.error("name", f"{quote(agent.name)} is listed twice")
            seen.add(agent.name)
            agents.append(agent)
        unknown = sorted((extra.non_sticky if extra is not None else frozenset()) - seen)
        if unknown:
            problems.error("(non-sticky)", f"no agent named {quote(unknown[0])} in the file")
    if problems.errors:
        raise ConfigError(problems.errors)
    return tuple(agents)


def _read_agent(table: Table, folder: Path, extra: ExtraPacks | None) -> Agent | None:
    """One `[[agents]]` table (None when its name is missing or invalid; problems recorded)."""
    table.reject_unknown(AGENT_KEYS)
    name = table.string("name", required=True)
    table.strings("services")
    pack = read_pack(table, table.string("rules"), folder)
    keywords = merge_words(read_keywords(table, "keywords"), pack.keywords)
    weak = merge_words(read_keywords(table, "weak_keywords"), pack.weak_keywords, exclude=keywords)
    first = merge_words(read_keywords(table, "confirm_keywords"), pack.confirm_keywords,
                        exclude=keywords + weak)
    sticky = table.boolean("sticky", True) is not False
    offsets = [read_offset(table), pack.sticky_bonus_offset]
    two_topics = [table.boolean("two_topic_confirm"), pack.two_topic_confirm]
    aliases = merge_words(read_aliases(table, "aliases"), pack.aliases)
    description = table.string("description", allow_empty=True) or pack.description
    if name is None:
        return None
    if not ALIAS.fullmatch(name) or name in RESERVED_NAMES:
        table.error("name", f"{quote(name)}: expected lowercase letters, digits, - or _ (not auto or none)")
        return None
    if extra is not None and extra.folder is not None and (Path(extra.folder) / f"{name}.toml").is_file():
        learned = read_pack(table, str(Path(extra.folder) / f"{name}.toml"), Path("."))
        offsets.insert(1, learned.sticky_bonus_offset)
        two_topics.insert(1, learned.two_topic_confirm)
        if extra.only:
            keywords, weak = learned.keywords, merge_words(learned.weak_keywords, exclude=learned.keywords)
            first = merge_words(learned.confirm_keywords, exclude=keywords + weak)
        else:
            keywords = merge_words(keywords, learned.keywords)
            weak = merge_words(weak, learned.weak_keywords, exclude=keywords)
            first = merge_words(first, learned.confirm_keywords, exclude=keywords + weak)
    if extra is not None and name in extra.non_sticky:
        sticky = False
    return Agent(name=name, url=UNUSED_URL, description=description, aliases=tuple(a for a in aliases if a != name),
                 keywords=keywords, weak_keywords=weak, confirm_keywords=first, sticky=sticky,
                 sticky_bonus_offset=next((o for o in offsets if o is not None), 0),
                 two_topic_confirm=next((t for t in two_topics if t is not None), False))
