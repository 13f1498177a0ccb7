"""Explicit switches: `/agent <name>`, `/agent@<bot> <name>`, `/agent auto`, `/agent`, `@<name>`.

Rules (issue #3, "Explicit switches"):
- `/agent` is a command only at the start of the text; `/agent@<bot_username>` is recognised when
  the channel's `bot_username` is set (case-insensitive, Telegram clients append it in groups);
  a command addressed to another bot is not ours (Telegram Bot API, "Commands").
- `@<name>` counts anywhere at a word boundary: not preceded by a word character, `.` or `@`
  (so `ops@billing.example` is an e-mail address) nor by a URL character `/ # : = ? & + % ~`
  (`https://medium.com/@coder/post`), and not continued by a word character, `-`, `/` or
  `.word` (so `@billingbot` and `@billing.example` are longer names). Trailing punctuation ends a
  mention (`thanks @support!`). A message that starts with a command addressed to another bot
  (`/ask@OtherBot ...`) carries no explicit switch at all.
- `/agent <name>` ignores punctuation right after the name (`/agent billing, please`).
- Names match case-insensitively against agent names and aliases, then against the leading
  dash-separated part of a name when exactly one agent has it (`@ops` -> `ops-agent`). Unknown or
  ambiguous names are ignored (`@dana` is a person). Two or more different agents named in one
  message: no switch.
- Who may be chosen (issue #11): with `allowed` given, an agent outside it (not on the channel's
  `agents` list, or `hidden`) is never chosen: `/agent <it>` is DENIED (changes nothing, like an
  unknown name) and `@<it>` is ignored like an unknown name.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass

_COMMAND = re.compile(r"^/agent(?:@(?P<bot>[A-Za-z0-9_]+))?(?=\s|$)(?:\s+(?P<arg>\S+))?", re.IGNORECASE)
_OTHER_BOT_COMMAND = re.compile(r"^/\w+@(?P<bot>[A-Za-z0-9_]+)")
_MENTION = re.compile(r"(?<![\w.@/#:=?&+%~])@(?P<name>\w[\w-]*)(?![\w-]|\.\w|/)")


class ExplicitKind(enum.Enum):
    """What explicit instruction a message carries."""

    NONE = "none"          # no usable instruction: route as usual
    SWITCH = "switch"      # switch to `ExplicitSwitch.agent`
    AUTO = "auto"          # `/agent auto`: drop the explicit route, back to auto-routing
    LIST = "list"          # `/agent` alone: list the agents
    UNKNOWN = "unknown"    # `/agent <name>` naming no agent (or an ambiguous one): change nothing
    DENIED = "denied"      # `/agent <name>` naming an agent that may not be chosen here: change nothing


@dataclass(frozen=True, slots=True)
class ExplicitSwitch:
    """Parsed explicit instruction; `agent` is set for SWITCH and DENIED only."""

    kind: ExplicitKind
    agent: str | None = None


NO_SWITCH = ExplicitSwitch(ExplicitKind.NONE)


class AgentNames:
    """Case-insensitive look-up of agent names, aliases and unique leading name parts."""

    def __init__(self, agents: Iterable[tuple[str, Iterable[str]]]) -> None:
        self._exact: dict[str, str] = {}
        prefixes: dict[str, set[str]] = {}
        for name, aliases in agents:
            self._exact[name.casefold()] = name
            for alias in aliases:
                self._exact.setdefault(alias.casefold(), name)
            if "-" in name:
                prefixes.setdefault(name.split("-", 1)[0].casefold(), set()).add(name)
        self._prefix = {p: next(iter(n)) for p, n in prefixes.items() if len(n) == 1}

    def lookup(self, word: str) -> str | None:
        """The agent `word` names, or None when unknown or ambiguous."""
        folded = word.casefold()
        found = self._exact.get(folded)
        if found is not None:
            return found
        return self._prefix.get(folded)


def _without_trailing_punctuation(word: str) -> str:
    """`word` without trailing characters that are neither word characters nor `-` (linear)."""
    end = len(word)
    while end and not (word[end - 1].isalnum() or word[end - 1] in "_-"):
        end -= 1
    return word[:end]


def _addressed_elsewhere(text: str, bot_username: str | None) -> bool:
    """True when `text` starts with a `/command@bot` naming a bot that is not ours."""
    match = _OTHER_BOT_COMMAND.match(text)
    return match is not None and (bot_username is None or match.group("bot").casefold() != bot_username.casefold())


def parse_explicit(text: str | None, names: AgentNames, bot_username: str | None,
                   allowed: Collection[str] | None = None) -> ExplicitSwitch:
    """Read the explicit instruction in a message text (see the module rules); `allowed` (None:
    every agent) are the agents an explicit switch may choose."""
    if not text or ("@" not in text and "/" not in text):
        return NO_SWITCH  # neither a command nor a mention can be in it
    stripped = text.strip()
    named: set[str] = set()
    command = _COMMAND.match(stripped)
    if command is not None:
        bot = command.group("bot")
        if bot is not None and (bot_username is None or bot.casefold() != bot_username.casefold()):
            return NO_SWITCH  # addressed to another bot (or we do not know our own name)
    elif _addressed_elsewhere(stripped, bot_username):
        return NO_SWITCH  # a command for another bot: nothing in it is for us
    if command is not None:
        arg = command.group("arg")
        if arg is None:
            return ExplicitSwitch(ExplicitKind.LIST)
        name = _without_trailing_punctuation(arg).lstrip("@")
        if name.casefold() == "auto":
            return ExplicitSwitch(ExplicitKind.AUTO)
        agent = names.lookup(name)
        if agent is None:
            return ExplicitSwitch(ExplicitKind.UNKNOWN)
        if allowed is not None and agent not in allowed:
            return ExplicitSwitch(ExplicitKind.DENIED, agent)
        named.add(agent)
        rest = stripped[command.end():]
    else:
        rest = stripped
    at = rest.find("@")
    while at != -1:  # only where an "@" is: the mention pattern anchored there (lookbehind included)
        match = _MENTION.match(rest, at)
        if match is not None and (agent := names.lookup(match.group("name"))) is not None and (
                allowed is None or agent in allowed):
            named.add(agent)
        at = rest.find("@", at + 1)
    if len(named) == 1:
        return ExplicitSwitch(ExplicitKind.SWITCH, named.pop())
    if command is not None:
        return ExplicitSwitch(ExplicitKind.UNKNOWN)
    return NO_SWITCH


def without_explicit(text: str) -> str:
    """`text` without its explicit syntax: a leading `/agent[@bot] [name]` command and every
    `@name` mention (known or not), so what is left is what the message is about."""
    stripped = text.strip()
    command = _COMMAND.match(stripped)
    if command is not None:
        stripped = stripped[command.end():]
    return _MENTION.sub(" ", stripped).strip()
