"""LINE Messaging API channel: 0..n events per POST, signed with the channel secret, split per agent.

Source: LINE Messaging API reference "Webhook Event Objects" (line-openapi webhook.yml), "Verify
webhook signature", "Receive messages (webhook)", "Check webhook error statistics" (redelivery,
`deliveryContext.isRedelivery`), "Character counting in a text" (UTF-16 code units);
platforms.md section 8.

Body: `{"destination": <bot user id>, "events": [...]}`. An empty `events` is LINE's "Verify"
(or a connectivity check), answered by the proxy once its signature holds (`handshake`).
One envelope per event, `item_path = (index,)`:

    event                                       kind          text
    message, type text                          TEXT          text without the spans of its
                                                              `mention.mentionees` (a LINE user or
                                                              @All is never an agent; a typed
                                                              `@billing` that LINE did not turn into
                                                              a mention still is)
    message, other types (image, video, audio,  NON_TEXT      -
      file, location, sticker)
    messageEdited (an edited text message)      EDIT          its new text, mentions removed
    postback                                    BUTTON        postback.data
    follow, unfollow, unsend, join, leave,      USER_EVENT    -
      memberJoined, memberLeft, accountLink,    (NO_SENDER without `source.userId`)
      beacon, videoPlayComplete, membership,
      things, unknown types
    activated, deactivated, botSuspended,       NO_SENDER     -
      botResumed, module, delivery

Conversation: the sender is `source.userId`; the chat `source.groupId`, `source.roomId` or the
user. In groups and rooms `userId` may be absent (users who did not consent, non-mobile
clients): such an event is NO_SENDER (a chat binding or the default). `delivery_id` is
`webhookEventId` (a ULID, the same when LINE redelivers with `isRedelivery: true`, so a
redelivered event is answered from the delivery log like any retry).

A batch whose events go to different agents is split (`split`): each agent's body keeps
`destination` and every other top-level key with only its events, serialised compactly with
ASCII escapes, and is signed with `channel_secret` like LINE signs (the agent's own SDK verifies
it). One pass over the events.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from stickyroute.channels.base import BodyPart, ItemPath, Request, SplitError, ids_or_positions
from stickyroute.channels.fields import ident, items, obj, string
from stickyroute.channels.jsonbody import decode
from stickyroute.channels.security import LINE_SIGNATURE_HEADER, check_line_signature, line_signature
from stickyroute.config.model import Agent, Channel, ChannelType
from stickyroute.errors import UnparsedUpdate
from stickyroute.reply import RawHeaders, Reply
from stickyroute.routing.envelope import Envelope, MessageKind

__all__ = ["LineAdapter", "load", "parse", "split_body"]

HANDSHAKE_MAX_BYTES = 4096
_SIGNATURE = LINE_SIGNATURE_HEADER.encode()
_ACCOUNT_EVENTS = frozenset({"activated", "deactivated", "botSuspended", "botResumed", "module", "delivery"})


def load(body: bytes) -> dict[str, Any]:
    """The decoded body; UnparsedUpdate unless it is an object with an `events` list."""
    try:
        doc = decode(body)
    except (ValueError, RecursionError) as exc:
        raise UnparsedUpdate(f"line: body is not valid JSON: {exc}") from exc
    if not isinstance(doc, dict) or not isinstance(doc.get("events"), list):
        raise UnparsedUpdate("line: body is not an object with an events list")
    return doc


def parse(body: bytes, channel: str) -> tuple[Envelope, ...]:
    """One LINE webhook body -> one envelope per event, in body order (module table)."""
    events = load(body)["events"]
    if not events:
        return (Envelope(channel, MessageKind.NO_SENDER),)
    return tuple(_event(obj(event), (index,), channel) for index, event in enumerate(events))


def _event(event: dict[str, Any], path: ItemPath, channel: str) -> Envelope:
    kind = string(event.get("type"))
    source = obj(event.get("source"))
    user = ident(source.get("userId"))
    chat = ident(source.get("groupId")) or ident(source.get("roomId")) or user
    delivery_id = ident(event.get("webhookEventId"))
    text = None
    if kind in ("message", "messageEdited"):
        message = obj(event.get("message"))
        if message.get("type") == "text" and isinstance(message.get("text"), str):
            text = without_mentions(message["text"], items(obj(message.get("mention")).get("mentionees")))
        envelope_kind = MessageKind.EDIT if kind == "messageEdited" else (
            MessageKind.TEXT if text else MessageKind.NON_TEXT)
    elif kind == "postback":
        envelope_kind, text = MessageKind.BUTTON, string(obj(event.get("postback")).get("data"))
    elif kind in _ACCOUNT_EVENTS or kind is None:
        envelope_kind, user = MessageKind.NO_SENDER, None
    else:
        envelope_kind = MessageKind.USER_EVENT
    if user is None:
        envelope_kind, text = MessageKind.NO_SENDER, None
    return Envelope(channel=channel, kind=envelope_kind, delivery_id=delivery_id, sender_id=user, chat_id=chat,
                    text=text or None, sender_aliases=(user,) if user is not None else (), item_path=path)


def without_mentions(text: str, mentionees: list[Any]) -> str:
    """`text` without the spans of its mentions (index and length in UTF-16 code units, LINE's
    unit); a span that does not start with "@" is left alone (an odd index). Trimmed."""
    spans = []
    for mentionee in mentionees[:20]:
        index, length = obj(mentionee).get("index"), obj(mentionee).get("length")
        if type(index) is int and type(length) is int and index >= 0 and length > 0:
            spans.append((index, length))
    if not spans:
        return text.strip()
    units = text.encode("utf-16-le", "surrogatepass")
    kept, at = [], 0
    for index, length in sorted(spans):
        start, end = index * 2, (index + length) * 2
        if start < at or end > len(units) or units[start:start + 2] != b"@\x00":
            continue
        kept.append(units[at:start])
        at = end
    kept.append(units[at:])
    return b"".join(kept).decode("utf-16-le", "surrogatepass").strip()


def split_body(body: bytes, parts: Mapping[str, Sequence[ItemPath]]) -> dict[str, bytes]:
    """One serialised body per agent holding only its events (each path `(index,)`, owned
    once); ValueError for a path that is not an event of the body or owned twice."""
    doc = load(body)
    events = doc["events"]
    owner: dict[int, str] = {}
    for agent, paths in parts.items():
        for path in map(tuple, paths):
            if len(path) != 1 or not isinstance(path[0], int) or isinstance(path[0], bool) or not (
                    0 <= path[0] < len(events)):
                raise ValueError(f"item path {path!r} of agent {agent!r} is not an event of the body")
            if owner.setdefault(path[0], agent) != agent:
                raise ValueError(f"event {path[0]} owned by {owner[path[0]]!r} and {agent!r}")
    kept: dict[str, list[Any]] = {agent: [] for agent in parts}
    for index, event in enumerate(events):
        if index in owner:
            kept[owner[index]].append(event)
    return {agent: json.dumps({k: (kept[agent] if k == "events" else v) for k, v in doc.items()},
                              ensure_ascii=True, separators=(",", ":")).encode("ascii") for agent in parts}


def _empty_events(body: bytes) -> bool:
    """True for a small body whose `events` is an empty list (LINE's Verify)."""
    if len(body) > HANDSHAKE_MAX_BYTES or b"events" not in body:
        return False
    try:
        return not load(body)["events"]
    except UnparsedUpdate:
        return False


class LineAdapter:
    """A LINE Official Account's webhook URL (0..n events per POST, signed with the channel secret)."""

    type = ChannelType.LINE
    lists_agents = False
    """LINE ignores the webhook reply's body: `/agent` alone goes to the current agent."""

    def handshake(self, channel: Channel, request: Request, now: float) -> Reply | None:
        """LINE's Verify (a signed POST with `events: []`) answered 200 once its signature holds."""
        if request.method != "POST" or not _empty_events(request.body):
            return None
        if not self.authenticate(channel, request, now):
            return None
        return Reply(200, [(b"content-type", b"text/plain; charset=utf-8")], b"")

    def authenticate(self, channel: Channel, request: Request, now: float) -> bool:
        """`X-Line-Signature` (base64 HMAC-SHA256 of the body) under `channel_secret`, when set."""
        if not channel.channel_secret:
            return True
        return check_line_signature(request.body, request.headers, channel.channel_secret)

    def parse(self, body: bytes, headers: RawHeaders, channel: str) -> tuple[Envelope, ...]:
        """One envelope per event (module table); UnparsedUpdate for a bad body."""
        return parse(body, channel)

    def delivery_ids(self, envelopes: Sequence[Envelope], body: bytes) -> list[str]:
        """`webhookEventId`, else the event's position in this exact body."""
        return ids_or_positions(envelopes, body)

    def split(self, channel: Channel, body: bytes, parts: Mapping[str, Sequence[ItemPath]]) -> dict[str, BodyPart]:
        """One body per agent (`split_body`), each signed with `channel_secret` (without one,
        the original signature is dropped: it would not match the part)."""
        try:
            bodies = split_body(body, parts)
        except (ValueError, RecursionError) as exc:
            raise SplitError(f"cannot split the batch: {exc}") from exc
        secret = channel.channel_secret
        drop = frozenset({_SIGNATURE})
        return {agent: BodyPart(part, drop, [(_SIGNATURE, line_signature(part, secret).encode())] if secret else [])
                for agent, part in bodies.items()}

    def agent_list(self, envelope: Envelope, agents: Sequence[Agent], current: str) -> Reply | None:
        """LINE cannot answer in the webhook reply: None (forwarded to the current agent)."""
        return None
