"""Discord channel: HTTP interactions (and the Webhook Events endpoint), signed with Ed25519.

Source: Discord developer docs, interactions/receiving-and-responding (Interaction object,
types, security and PING), interactions/application-commands (option types, autocomplete),
events/webhook-events (PING `type: 0` answered 204, events `type: 1`), resources/channel
(thread types 10, 11, 12); platforms.md section 7. Ordinary channel messages never arrive over
HTTP (they need the Gateway), so every envelope is an interaction a user made.

    interaction type (data)                       kind              text
    1 PING                                        answered by the proxy `{"type":1}` after the signature
    2 APPLICATION_COMMAND, chat input `agent`     TEXT, to the      "/agent <option name>" (1)
                                                  proxy
    2 APPLICATION_COMMAND, other chat input       TEXT if a string  its string option values, mentions
                                                  option, else      (`<@id>`, `<#id>`, `<@&id>`) removed
                                                  NON_TEXT
    2 APPLICATION_COMMAND, user / message menu    BUTTON            the command's name
    3 MESSAGE_COMPONENT (button, select)          BUTTON            custom_id, or the selected values
    4 APPLICATION_COMMAND_AUTOCOMPLETE            BUTTON (`agent`:  the focused option's value
                                                  to the proxy (1))
    5 MODAL_SUBMIT                                BUTTON            custom_id
    unknown type, or no user                      NO_SENDER         - (the chat kept for a chat binding)
    Webhook Events: PING (type 0)                 answered by the proxy 204 after the signature
    Webhook Events: an event (type 1, `event`)    NO_SENDER         -

(1) The proxy answers these itself (`DiscordAdapter.agent_list`): the `agent` command with an
ephemeral message listing the agents (its `name` option switches first), its autocomplete with
the agent names starting with what was typed.

Conversation: the sender is `member.user.id` (in a server) or `user.id` (DMs); the chat the
channel, except in a thread (channel type 10, 11, 12), where the chat is the parent channel
(`channel.parent_id`) and the thread the thread's channel id, so a chat binding of a channel
covers its threads. `delivery_id` is the interaction `id`; a webhook event has none (its body's
position: Discord retries it with the same body).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from stickyroute.channels.base import BodyPart, ItemPath, Request, SplitError, ids_or_positions
from stickyroute.channels.fields import ident, items, obj, string
from stickyroute.channels.jsonbody import decode
from stickyroute.channels.listing import listing
from stickyroute.channels.security import check_discord_signature
from stickyroute.config.model import Agent, Channel, ChannelType
from stickyroute.errors import UnparsedUpdate
from stickyroute.reply import RawHeaders, Reply
from stickyroute.routing.envelope import Envelope, MessageKind

__all__ = ["DiscordAdapter", "parse"]

PING, COMMAND, COMPONENT, AUTOCOMPLETE, MODAL = 1, 2, 3, 4, 5
THREAD_TYPES = frozenset({10, 11, 12})
AGENT_COMMAND = "agent"
HANDSHAKE_MAX_BYTES = 16 * 1024
"""A PING is small: a larger body is never read by the (unthreaded) handshake."""
EPHEMERAL = 64
"""Interaction response message flag: only the user who ran the command sees it."""
MAX_CHOICES = 25
_JSON = (b"content-type", b"application/json")
_MENTION = re.compile(r"<(?:@[!&]?|#)\d+>|<t:-?\d+(?::[A-Za-z])?>")
_EMOJI = re.compile(r"<a?(:\w+:)\d+>")


def _load(body: bytes) -> dict[str, Any]:
    try:
        doc = decode(body)
    except (ValueError, RecursionError) as exc:
        raise UnparsedUpdate(f"discord: body is not valid JSON: {exc}") from exc
    if not isinstance(doc, dict):
        raise UnparsedUpdate("discord: body is not a JSON object")
    return doc


def parse(body: bytes, channel: str) -> tuple[Envelope, ...]:
    """One interaction (or webhook event) body -> a 1-tuple (see the module table)."""
    doc = _load(body)
    kind = doc.get("type")
    delivery_id = ident(doc.get("id"))
    if "event" in doc:
        return (Envelope(channel, MessageKind.NO_SENDER, delivery_id=delivery_id),)
    chat, thread = _conversation(doc)
    if isinstance(kind, bool) or kind not in (COMMAND, COMPONENT, AUTOCOMPLETE, MODAL):
        return (Envelope(channel, MessageKind.NO_SENDER, delivery_id=delivery_id, chat_id=chat, thread_id=thread),)
    user = ident(obj(obj(doc.get("member")).get("user")).get("id")) or ident(obj(doc.get("user")).get("id"))
    data = obj(doc.get("data"))
    name = string(data.get("name"))
    chat_input = data.get("type", 1) == 1
    to_proxy = name is not None and name.casefold() == AGENT_COMMAND and chat_input and kind in (COMMAND, AUTOCOMPLETE)
    text: str | None
    if kind == COMMAND and chat_input:
        text = _agent_text(data) if to_proxy else " ".join(_strings(data.get("options"))).strip()
        envelope_kind = MessageKind.TEXT if text else MessageKind.NON_TEXT
    elif kind == AUTOCOMPLETE:
        envelope_kind, text = MessageKind.BUTTON, _focused(data.get("options"))
    elif kind == COMMAND:
        envelope_kind, text = MessageKind.BUTTON, name
    else:
        values = [v for v in items(data.get("values")) if isinstance(v, str)]
        envelope_kind = MessageKind.BUTTON
        text = " ".join(values) if kind == COMPONENT and values else string(data.get("custom_id"))
    if user is None:
        return (Envelope(channel, MessageKind.NO_SENDER, delivery_id=delivery_id, chat_id=chat, thread_id=thread),)
    return (Envelope(channel=channel, kind=envelope_kind, delivery_id=delivery_id, sender_id=user, chat_id=chat,
                     thread_id=thread, text=text or None, sender_aliases=(user,), to_proxy=to_proxy),)


def _conversation(doc: dict[str, Any]) -> tuple[str | None, str | None]:
    """(chat, thread): a thread's parent channel and the thread, else the channel and None."""
    partial = obj(doc.get("channel"))
    chat = ident(doc.get("channel_id")) or ident(partial.get("id"))
    parent = ident(partial.get("parent_id"))
    kind = partial.get("type")
    if isinstance(kind, int) and kind in THREAD_TYPES and parent is not None and chat is not None:
        return parent, chat
    return chat, None


def _clean(text: str) -> str:
    return _EMOJI.sub(r"\1", _MENTION.sub("", text)) if "<" in text else text


def _strings(options: object, depth: int = 0) -> Iterator[str]:
    """Every string option value, subcommands and groups included (Discord nests 3 levels)."""
    for listed in items(options):
        option = obj(listed)
        if option.get("type") == 3 and isinstance(option.get("value"), str):
            yield _clean(option["value"])
        elif depth < 3:
            yield from _strings(option.get("options"), depth + 1)


def _agent_text(data: dict[str, Any]) -> str:
    """`/agent <name>` from the `agent` command's `name` option (else its first string option)."""
    named = [obj(o) for o in items(data.get("options")) if obj(o).get("name") == "name"]
    value = named[0].get("value") if named else next(_strings(data.get("options")), None)
    return f"/agent {value.strip()}".strip() if isinstance(value, str) else "/agent"


def _focused(options: object, depth: int = 0) -> str | None:
    """The value being typed in an autocomplete (the option with `focused: true`)."""
    for listed in items(options):
        option = obj(listed)
        if option.get("focused") is True:
            value = option.get("value")
            return value if isinstance(value, str) else None
        if depth < 3 and (found := _focused(option.get("options"), depth + 1)) is not None:
            return found
    return None


class DiscordAdapter:
    """A Discord application's Interactions Endpoint URL (one interaction per POST)."""

    type = ChannelType.DISCORD
    lists_agents = True
    """The `agent` command is answered by the proxy (`agent_list`)."""

    def handshake(self, channel: Channel, request: Request, now: float) -> Reply | None:
        """Interactions PING -> `{"type":1}`, Webhook Events PING -> 204, once the signature
        holds (Discord checks that an endpoint refuses bad signatures); anything else None."""
        if request.method != "POST" or len(request.body) > HANDSHAKE_MAX_BYTES or b'"type"' not in request.body:
            return None
        try:
            doc = _load(request.body)
        except UnparsedUpdate:
            return None
        kind = doc.get("type")
        if isinstance(kind, bool) or (kind != 0 and (kind != PING or "event" in doc)):
            return None
        if not self.authenticate(channel, request, now):
            return None
        return Reply(204) if kind == 0 else Reply(200, [_JSON], b'{"type":1}')

    def authenticate(self, channel: Channel, request: Request, now: float) -> bool:
        """`X-Signature-Ed25519` over `X-Signature-Timestamp` + body under `public_key`, when set."""
        if not channel.public_key:
            return True
        return check_discord_signature(request.body, request.headers, channel.public_key)

    def parse(self, body: bytes, headers: RawHeaders, channel: str) -> tuple[Envelope, ...]:
        """One interaction -> a 1-tuple (module table); UnparsedUpdate for a bad body."""
        return parse(body, channel)

    def delivery_ids(self, envelopes: Sequence[Envelope], body: bytes) -> list[str]:
        """The interaction `id`; a webhook event's body position."""
        return ids_or_positions(envelopes, body)

    def split(self, channel: Channel, body: bytes, parts: Mapping[str, Sequence[ItemPath]]) -> dict[str, BodyPart]:
        """An interaction is one item: never split."""
        raise SplitError("a Discord interaction holds one item")

    def agent_list(self, envelope: Envelope, agents: Sequence[Agent], current: str) -> Reply | None:
        """The `agent` command's interaction response: an ephemeral message (type 4) listing
        the agents, or its autocomplete's choices (type 8); None for anything else."""
        if not envelope.to_proxy:
            return None
        if envelope.kind is MessageKind.BUTTON:
            typed = (envelope.text or "").casefold()
            choices = [{"name": a.name, "value": a.name} for a in agents if a.name.casefold().startswith(typed)]
            answer: dict[str, object] = {"type": 8, "data": {"choices": choices[:MAX_CHOICES]}}
        else:
            content = listing(envelope.text, agents, current)[:2000]
            answer = {"type": 4, "data": {"content": content, "flags": EPHEMERAL}}
        headers = [_JSON, (b"x-stickyroute-agent", current.encode()), (b"x-stickyroute-reason", b"explicit")]
        return Reply(200, headers, json.dumps(answer).encode())
