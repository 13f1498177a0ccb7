"""The evaluation corpus (eval/corpus/README.md) and the config a replay routes under.

Corpus: JSON Lines, one conversation per line: {"id", "turns": [{"text", "gold", "general",
"domains"?...}]}. Agents file: TOML `[[agents]] name, description, keywords, weak_keywords?,
rules?` (stickyroute/replay/agents_file.py).
The replay adds a synthetic default agent (`DEFAULT_AGENT`) that no gold label names: routing to
it is wrong except for CLINC150's `oos` turns (`OOS`), where it is right.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from stickyroute.config.model import Agent, Channel, ChannelType, Config, RoutingSettings
from stickyroute.replay.agents_file import UNUSED_URL, ExtraPacks, load_agents_file

DEFAULT_AGENT = "default"
"""Name of the synthetic channel default agent (no keywords, no gold label names it)."""
OOS = "oos"
"""CLINC150 out-of-scope gold label: the default agent is the right answer."""
CHANNEL = "telegram"


@dataclass(frozen=True, slots=True)
class Turn:
    """One user turn: its text, the agent that should take it, and the lenient alternatives."""

    text: str
    gold: str
    general: bool = False
    domains: tuple[str, ...] = ()
    intent: str | None = None
    """CLINC150's fine-grained intent (None elsewhere): `learn --split intent` splits by it."""


@dataclass(frozen=True, slots=True)
class Conversation:
    """One conversation of the corpus (user turns only, in order)."""

    id: str
    turns: tuple[Turn, ...]


def parse_conversation(line: str) -> Conversation:
    """One JSONL line -> Conversation (KeyError/ValueError on a malformed line)."""
    doc = json.loads(line)
    turns = tuple(
        Turn(t["text"], t["gold"], bool(t.get("general", False)), tuple(t.get("domains") or ()), t.get("intent"))
        for t in doc["turns"]
    )
    return Conversation(str(doc["id"]), turns)


def load_corpus(path: str | Path, limit: int | None = None) -> list[Conversation]:
    """The first `limit` (None: all) conversations of a corpus file."""
    out: list[Conversation] = []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            if limit is not None and len(out) >= limit:
                break
            if line.strip():
                out.append(parse_conversation(line))
    return out


def load_agents(path: str | Path, extra: ExtraPacks | None = None) -> tuple[Agent, ...]:
    """Agents of a corpus agents TOML as config Agents (unused loopback URL), packs merged.

    Raises ConfigError naming the file and key of every problem (`agents_file.load_agents_file`).
    """
    return load_agents_file(path, extra)


def replay_config(agents: Iterable[Agent], settings: RoutingSettings, path: str = "<replay>") -> Config:
    """A one-channel Telegram config: the corpus agents plus the synthetic default agent."""
    table = {a.name: a for a in agents}
    if DEFAULT_AGENT in table:
        raise ValueError(f"the agents file already has an agent named {DEFAULT_AGENT!r}")
    table[DEFAULT_AGENT] = Agent(DEFAULT_AGENT, UNUSED_URL, description="")
    channel = Channel(CHANNEL, ChannelType.TELEGRAM, (f"/{CHANNEL}",), DEFAULT_AGENT, routing=settings)
    return Config(path=path, agents=table, channels={CHANNEL: channel})
