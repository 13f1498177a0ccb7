"""Replies the proxy composes itself (the agent list of a Telegram `/agent`, error answers).

Telegram Bot API, "Making requests when getting updates": a 2xx webhook response may carry a
Bot API method call as JSON (`{"method": "sendMessage", "chat_id": ..., "text": ...}`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from proxy.config.model import Config
from proxy.routing.envelope import Envelope

JSON = b"application/json"
TEXT = b"text/plain; charset=utf-8"


@dataclass(frozen=True, slots=True)
class Outbound:
    """What the platform gets back: status, headers (raw pairs), body bytes."""

    status: int
    headers: list[tuple[bytes, bytes]] = field(default_factory=list)
    body: bytes = b""

    @property
    def ok(self) -> bool:
        """True for a 2xx status."""
        return 200 <= self.status < 300


def text_reply(status: int, text: str, reason: str | None = None) -> Outbound:
    """A plain-text answer from the proxy itself (errors, verification challenge)."""
    headers = [(b"content-type", TEXT)]
    if reason is not None:
        headers.append((b"x-stickyroute-reason", reason.encode()))
    return Outbound(status, headers, text.encode())


def _chat_id(value: str | None) -> int | str | None:
    if value is not None and value.lstrip("-").isdigit():
        return int(value)
    return value


def agent_list_reply(config: Config, envelope: Envelope, current: str) -> Outbound:
    """The `sendMessage` answering a Telegram `/agent`: every agent, the current one marked."""
    lines = ["Agents (switch with /agent <name>, back to automatic with /agent auto):"]
    for agent in config.agents.values():
        mark = " (current)" if agent.name == current else ""
        about = f" - {agent.description}" if agent.description else ""
        lines.append(f"• {agent.name}{mark}{about}")
    call: dict[str, object] = {"method": "sendMessage", "chat_id": _chat_id(envelope.chat_id), "text": "\n".join(lines)}
    if envelope.thread_id is not None:
        call["message_thread_id"] = _chat_id(envelope.thread_id)
    body = json.dumps(call).encode()  # ASCII escapes: safe for any id or name
    headers = [(b"content-type", JSON), (b"x-stickyroute-agent", current.encode()), (b"x-stickyroute-reason", b"explicit")]
    return Outbound(200, headers, body)


UpstreamReply = Outbound
"""An agent's whole reply, relayed as is: the same shape as what the platform gets back.
`headers` have hop-by-hop fields and `Content-Length` removed; `body` is raw (still encoded when
`Content-Encoding` says so)."""
