"""The text of the proxy's own answer to `/agent` on platforms where it answers in the webhook
reply (Slack slash commands, Discord application commands): every agent, the current one marked.

    listing(text, agents, current, where="") -> str

`text` is the instruction as the envelope carries it (`/agent`, `/agent billing`, `/agent auto`);
`current` the agent the conversation is on after the router's decision, so the first line says
whether a requested switch took effect (a refused one: unknown, not allowed here, over the
sender's switch budget).
"""

from __future__ import annotations

from collections.abc import Sequence

from stickyroute.config.model import Agent

__all__ = ["listing", "requested"]

HEADER = "Agents (switch with /agent <name>, back to automatic with /agent auto):"


def requested(text: str | None) -> str | None:
    """The name after `/agent` in `text`, or None (`/agent` alone, or not a command)."""
    words = (text or "").split()
    if len(words) < 2 or words[0].casefold() != "/agent":
        return None
    return words[1].lstrip("@").rstrip(".,;:!?")


def listing(text: str | None, agents: Sequence[Agent], current: str, where: str = "") -> str:
    """The answer's text: what became of the request, then one line per agent (`where` is a
    sentence saying which conversation the choice applies to)."""
    name = requested(text)
    lines = []
    if name is not None and name.casefold() == "auto":
        lines.append(f"Back to automatic routing: {current} answers for now.")
    elif name is not None:
        chosen = next((a for a in agents if a.name == current), None)
        names = {current.casefold(), *(alias.casefold() for alias in (chosen.aliases if chosen else ()))}
        if name.casefold() in names:
            lines.append(f"Now talking to {current}.")
        else:
            lines.append(f"Not switched to {name!r} (unknown here, or too many switches): still {current}.")
    if where:
        lines.append(where)
    lines.append(HEADER)
    for agent in agents:
        mark = " (current)" if agent.name == current else ""
        about = f" - {agent.description}" if agent.description else ""
        lines.append(f"\u2022 {agent.name}{mark}{about}")
    return "\n".join(lines)
