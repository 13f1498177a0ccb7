"""Telegram adapter: one webhook POST body (one Bot API `Update`) -> exactly one envelope.

Shape: `parse(body, channel) -> (Envelope,)`. `delivery_id` is `str(update_id)` (Telegram
redelivers an update with the same `update_id`). Ids go through `normalise_id` (numbers as
decimal strings). `item_path` is always `()`. Source: Telegram Bot API, "Update" and "Message".

Raises `UnparsedUpdate` when the body is not JSON, not an object, or has no integer
`update_id`; any other valid update (odd shapes, unknown future kinds) yields an envelope,
never an exception (field report T9: a 500 stalls the bot's whole update queue).

Update field -> envelope (sender = the id a user binding / route is keyed on):

    field                      kind          sender               chat              text
    message, business_message, TEXT if text  from.id (1)          chat.id           text or caption
      guest_message            or caption,
                               else NON_TEXT
    edited_message,            EDIT          from.id (1)          chat.id           text or caption
      edited_business_message
    channel_post,              NO_SENDER     -                    chat.id           text or caption
      edited_channel_post
    callback_query             BUTTON        from.id (never       message.chat.id   data
                                             message.from: T20)   (absent inline)
    inline_query,              NON_TEXT      from.id              -                 -
      chosen_inline_result,
      shipping_query,
      pre_checkout_query,
      purchased_paid_media
    poll_answer                NON_TEXT      user.id              -                 -
                               NO_SENDER     - (voter_chat set)   voter_chat.id     -
    message_reaction           NON_TEXT      user.id              chat.id           -
                               NO_SENDER     - (actor_chat set)   chat.id           -
    my_chat_member,            NO_SENDER     -                    chat.id           -
      chat_member, chat_join_request,
      message_reaction_count,
      chat_boost, removed_chat_boost,
      deleted_business_messages
    business_connection        NO_SENDER     -                    user_chat_id      -
    poll                       NO_SENDER     -                    -                 -
    unknown kind / no kind     NO_SENDER     -                    <value>.chat.id   -

(1) Message senders: `sender_chat` set (anonymous group admin, whose `from` is the placeholder
GroupAnonymousBot, or a user posting as a channel) -> the sender is `sender_chat.id`: it is the
identity Telegram shows, so all anonymous admins of a group share one route and a binding can
still name them. `is_automatic_forward` (a linked channel's post copied into its discussion
group) -> NO_SENDER. No `from` and no `sender_chat` -> NO_SENDER. A sender with
`is_bot: true` is kept as the sender (bot-to-bot messages are real input; bindings may name a
bot). Message-bearing updates keep their text or caption whatever their kind (a NON_TEXT
message has none by definition); a callback query's text is its `data`; other updates have none.

Thread id: `message_thread_id` only when `is_topic_message` is true (forum topic); plain reply
chains also carry `message_thread_id` and must not become a thread (field report T18;
Bot API "Message.is_topic_message"). A callback query takes it from its `message`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from stickyroute.channels.base import BodyPart, ItemPath, Request, SplitError, ids_or_positions
from stickyroute.channels.jsonbody import decode
from stickyroute.channels.security import check_telegram_secret
from stickyroute.config.ids import ascii_int, normalise_id
from stickyroute.config.model import Agent, Channel, ChannelType
from stickyroute.errors import UnparsedUpdate
from stickyroute.reply import RawHeaders, Reply
from stickyroute.routing.envelope import Envelope, MessageKind

_USER_MESSAGES = ("message", "business_message", "guest_message")
_EDITS = ("edited_message", "edited_business_message")
_CHANNEL_POSTS = ("channel_post", "edited_channel_post")
_FROM_NO_CHAT = (
    "inline_query", "chosen_inline_result", "shipping_query", "pre_checkout_query",
    "purchased_paid_media",
)
_CHAT_EVENTS = (
    "my_chat_member", "chat_member", "chat_join_request", "message_reaction_count",
    "chat_boost", "removed_chat_boost", "deleted_business_messages",
)
KNOWN_KINDS: tuple[str, ...] = (
    *_USER_MESSAGES, *_EDITS, *_CHANNEL_POSTS, "callback_query", *_FROM_NO_CHAT,
    "poll_answer", "message_reaction", *_CHAT_EVENTS, "business_connection", "poll",
)
"""Every Update field this adapter maps explicitly (Bot API 10.x); others are `unknown`."""


def parse(body: bytes, channel: str) -> tuple[Envelope, ...]:
    """One Telegram webhook body -> a 1-tuple with its envelope (see the module table)."""
    update = _load(body)
    delivery_id = str(update["update_id"])
    field, value = _update_field(update)
    base = (channel, delivery_id)
    if not isinstance(value, dict):
        return (Envelope(channel, MessageKind.NO_SENDER, delivery_id=delivery_id),)
    if field in _USER_MESSAGES or field in _EDITS or field in _CHANNEL_POSTS:
        return (_message(value, field, base),)
    if field == "callback_query":
        message = _obj(value.get("message"))
        sender = _user_id(value.get("from"))
        return (_envelope(
            base, MessageKind.BUTTON, sender, _chat_id(message), _thread_id(message),
            value.get("data") if isinstance(value.get("data"), str) else None,
        ),)
    if field in _FROM_NO_CHAT:
        return (_envelope(base, MessageKind.NON_TEXT, _user_id(value.get("from")), None),)
    if field in ("poll_answer", "message_reaction"):
        chat = _id(_obj(value.get("voter_chat")).get("id")) or _chat_id(value)
        return (_envelope(base, MessageKind.NON_TEXT, _user_id(value.get("user")), chat),)
    if field == "business_connection":
        return (_envelope(base, MessageKind.NO_SENDER, None, _id(value.get("user_chat_id"))),)
    return (_envelope(base, MessageKind.NO_SENDER, None, _chat_id(value)),)


def _load(body: bytes) -> dict[str, Any]:
    """JSON object with an integer `update_id`, else UnparsedUpdate."""
    try:
        update = decode(body)
    except (ValueError, RecursionError) as exc:
        raise UnparsedUpdate(f"telegram: body is not valid JSON: {exc}") from exc
    if not isinstance(update, dict):
        raise UnparsedUpdate(f"telegram: body is a JSON {type(update).__name__}, not an object")
    update_id = update.get("update_id")
    if not isinstance(update_id, int) or isinstance(update_id, bool):
        raise UnparsedUpdate("telegram: body has no integer update_id")
    return update


def _update_field(update: dict[str, Any]) -> tuple[str | None, object]:
    """The update's one optional field: a known kind first, else the first other key."""
    for field in KNOWN_KINDS:
        if field in update:
            return field, update[field]
    for field, value in update.items():
        if field != "update_id":
            return field, value
    return None, None


def _message(message: dict[str, Any], field: str, base: tuple[str, str]) -> Envelope:
    """A Message-bearing update (message, edits, channel posts, business, guest)."""
    text = _text(message)
    if field in _CHANNEL_POSTS or message.get("is_automatic_forward") is True:
        kind, sender = MessageKind.NO_SENDER, None
    else:
        sender = _id(_obj(message.get("sender_chat")).get("id")) or _user_id(message.get("from"))
        if field in _EDITS:
            kind = MessageKind.EDIT
        else:
            kind = MessageKind.TEXT if text is not None else MessageKind.NON_TEXT
    return _envelope(base, kind, sender, _chat_id(message), _thread_id(message), text)


def _envelope(
    base: tuple[str, str],
    kind: MessageKind,
    sender: str | None,
    chat: str | None,
    thread: str | None = None,
    text: str | None = None,
) -> Envelope:
    """Build the envelope; an update whose human sender is unknown becomes NO_SENDER."""
    if sender is None:
        kind = MessageKind.NO_SENDER
    if kind is MessageKind.NON_TEXT:
        text = None
    channel, delivery_id = base
    return Envelope(
        channel=channel, kind=kind, delivery_id=delivery_id, sender_id=sender, chat_id=chat, thread_id=thread,
        text=text, sender_aliases=(sender,) if sender is not None else (),
    )


def _text(message: dict[str, Any]) -> str | None:
    """`text`, else `caption` (media), else None."""
    for key in ("text", "caption"):
        value = message.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def _thread_id(message: dict[str, Any]) -> str | None:
    """Forum topic id, only when `is_topic_message` is true (T18)."""
    if message.get("is_topic_message") is not True:
        return None
    return _id(message.get("message_thread_id"))


def _chat_id(value: dict[str, Any]) -> str | None:
    return _id(_obj(value.get("chat")).get("id"))


def _user_id(user: object) -> str | None:
    return _id(_obj(user).get("id"))


def _id(value: object) -> str | None:
    """A Telegram id (number or string) as a normalised string; None for other types."""
    if isinstance(value, (int, float, str)):
        return normalise_id(value)
    return None


def _obj(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def agent_list_call(envelope: Envelope, agents: Sequence[Agent], current: str) -> dict[str, object]:
    """The `sendMessage` call answering `/agent`: every agent, the current one marked.

    Telegram Bot API, "Making requests when getting updates": a 2xx webhook response may carry a
    Bot API method call as JSON. `chat_id` / `message_thread_id` are sent as numbers when the
    envelope's id is a plain ASCII integer, else as the string received.
    """
    lines = ["Agents (switch with /agent <name>, back to automatic with /agent auto):"]
    for agent in agents:
        mark = " (current)" if agent.name == current else ""
        about = f" - {agent.description}" if agent.description else ""
        lines.append(f"\u2022 {agent.name}{mark}{about}")
    call: dict[str, object] = {"method": "sendMessage", "chat_id": _number(envelope.chat_id), "text": "\n".join(lines)}
    if envelope.thread_id is not None:
        call["message_thread_id"] = _number(envelope.thread_id)
    return call


def _number(value: str | None) -> int | str | None:
    """A plain ASCII integer id as a number; any other id as the string received (`"²"` stays
    `"²"`, `"٣"` never becomes chat 3)."""
    number = ascii_int(value)
    return value if number is None else number


class TelegramAdapter:
    """The Telegram Bot API webhook (one update per POST; secret token header)."""

    type = ChannelType.TELEGRAM
    lists_agents = True

    def handshake(self, channel: Channel, request: Request, now: float) -> Reply | None:
        """Telegram has no subscription handshake: always None."""
        return None

    def authenticate(self, channel: Channel, request: Request, now: float) -> bool:
        """`X-Telegram-Bot-Api-Secret-Token` equals `secret_token` when one is set (setWebhook)."""
        if not channel.secret_token:
            return True
        return check_telegram_secret(request.headers, channel.secret_token)

    def parse(self, body: bytes, headers: RawHeaders, channel: str) -> tuple[Envelope, ...]:
        """One update -> a 1-tuple (see the module table); UnparsedUpdate for a bad body."""
        return parse(body, channel)

    def delivery_ids(self, envelopes: Sequence[Envelope], body: bytes) -> list[str]:
        """`update_id` (Telegram redelivers an update with the same id)."""
        return ids_or_positions(envelopes, body)

    def split(self, channel: Channel, body: bytes, parts: Mapping[str, Sequence[ItemPath]]) -> dict[str, BodyPart]:
        """A Telegram update is one item: never split."""
        raise SplitError("a Telegram update holds one item")

    def agent_list(self, envelope: Envelope, agents: Sequence[Agent], current: str) -> Reply | None:
        """The `sendMessage` listing the agents, in the webhook reply (`agent_list_call`)."""
        body = json.dumps(agent_list_call(envelope, agents, current)).encode()  # ASCII escapes
        headers = [(b"content-type", b"application/json"), (b"x-stickyroute-agent", current.encode()),
                   (b"x-stickyroute-reason", b"explicit")]
        return Reply(200, headers, body)
