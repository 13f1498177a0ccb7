"""Layer 1 (`Layer1.match`): bindings, thread routes and the channel default (pure, always wins over Layer 2).

Most specific wins (issue #2, "Layer 1 resolution"): user binding > thread route (forum topics
only) > chat binding > channel default. Updates with no human sender skip the user binding and
thread route steps and go to a chat binding or the default.
"""

from __future__ import annotations

from dataclasses import dataclass

from stickyroute.config.model import Channel
from stickyroute.routing.envelope import Envelope


@dataclass(frozen=True, slots=True)
class Resolution:
    """Layer-1 result: the agent, why (`binding`, `thread_route`, `chat_binding`, `default`),
    and whether it is the channel default (only then may Layer 2 auto-route)."""

    agent: str
    reason: str
    is_default: bool


class Layer1:
    """Index of one channel's bindings and thread routes; `match(envelope) -> Resolution`."""

    def __init__(self, channel: Channel) -> None:
        self.default_agent = channel.default_agent
        self._users = {b.user: b.agent for b in channel.bindings if b.user is not None}
        self._chats = {b.chat: b.agent for b in channel.bindings if b.chat is not None}
        self._threads = {(t.chat, t.thread): t.agent for t in channel.thread_routes}

    def match(self, envelope: Envelope) -> Resolution:
        """Layer-1 agent for an envelope (ids already normalised to strings)."""
        if envelope.has_sender:
            for sender in envelope.sender_aliases or (envelope.sender_id or "",):
                agent = self._users.get(sender)
                if agent is not None:
                    return Resolution(agent, "binding", False)
            if envelope.thread_id is not None and envelope.chat_id is not None:
                agent = self._threads.get((envelope.chat_id, envelope.thread_id))
                if agent is not None:
                    return Resolution(agent, "thread_route", False)
        if envelope.chat_id is not None:
            agent = self._chats.get(envelope.chat_id)
            if agent is not None:
                return Resolution(agent, "chat_binding", False)
        return Resolution(self.default_agent, "default", True)
