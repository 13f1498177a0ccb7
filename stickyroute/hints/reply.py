"""Agent signals in a webhook reply (issue #12): read and remove them before the platform sees it.

    X-Stickyroute-Hint: not-mine                  the message was not for this agent
    X-Stickyroute-Hint: not-mine; suggest=<agent> ... and <agent> should have it
    X-Stickyroute-Hint: done                      this agent's task is done: release the route
    X-Stickyroute-Hint: done; then=<agent>        ... and hand the conversation to <agent>
    X-Stickyroute-Handoff: <agent>                the conversation goes to <agent> from now on

Names and the `not-mine` / `done` / `suggest` / `then` words are case-insensitive; agent names
are taken as sent (trimmed). Both headers are always removed from the reply, valid or not; a value that is not
understood becomes a problem (for the log line), never an error.
"""

from __future__ import annotations

from stickyroute.reply import RawHeaders, Reply
from stickyroute.routing.signals import Signal, SignalKind

__all__ = ["HANDOFF_HEADER", "HINT_HEADER", "parse_hint", "take_signals"]

HINT_HEADER = b"x-stickyroute-hint"
HANDOFF_HEADER = b"x-stickyroute-handoff"
_PREFIX = b"x-stickyroute-h"


def take_signals(reply: Reply, sender: str) -> tuple[Reply, list[Signal], list[str]]:
    """(the reply without the signal headers, the signals `sender` gave, problems found)."""
    if not any(name[:15].lower() == _PREFIX for name, _value in reply.headers):
        return reply, [], []
    kept: RawHeaders = []
    signals: list[Signal] = []
    problems: list[str] = []
    for name, value in reply.headers:
        lowered = name.lower()
        if lowered == HINT_HEADER:
            _hint(value, sender, signals, problems)
        elif lowered == HANDOFF_HEADER:
            target = value.decode("latin-1").strip()
            if target:
                signals.append(Signal(SignalKind.HANDOFF, sender, target))
            else:
                problems.append("empty X-Stickyroute-Handoff")
        else:
            kept.append((name, value))
    return Reply(reply.status, kept, reply.body), signals, problems


_PARAMETER = {SignalKind.NOT_MINE: "suggest", SignalKind.DONE: "then"}
"""The one optional parameter of each hint word: the suggested agent, the agent handed to."""


def _hint(value: bytes, sender: str, signals: list[Signal], problems: list[str]) -> None:
    text = value.decode("latin-1")
    word, _sep, rest = text.partition(";")
    kind = next((k for k in _PARAMETER if k.value == word.strip().lower()), None)
    if kind is None:
        problems.append(f"unknown X-Stickyroute-Hint value {text.strip()!r}")
        return
    target: str | None = None
    if rest.strip():
        key, eq, agent = rest.partition("=")
        if key.strip().lower() != _PARAMETER[kind] or not eq or not agent.strip():
            problems.append(f"unknown X-Stickyroute-Hint parameter {rest.strip()!r}")
            return
        target = agent.strip()
    signals.append(Signal(kind, sender, target))


def parse_hint(value: str, sender: str) -> Signal | str:
    """An `X-Stickyroute-Hint` value (`not-mine[; suggest=<agent>]` or `done[; then=<agent>]`) as
    `sender`'s signal, or what is wrong with it."""
    signals: list[Signal] = []
    problems: list[str] = []
    _hint(value.encode("latin-1", "replace"), sender, signals, problems)
    return signals[0] if signals else problems[0]
