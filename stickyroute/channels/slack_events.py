"""Slack Events API bodies (JSON) -> one envelope (Slack sends one event per request).

Source: Slack "Events API", reference/events/message (+ subtypes), app_mention, reaction_added,
"Using Slack's Events API with Enterprise Grid"; platforms.md section 6.

The conversation: `chat_id` is the Slack channel id (`C…`, `G…`, `D…`; ids are unique across Slack,
Enterprise Grid and shared channels included), the sender the Slack user id (`U…`, `W…`). In a
channel each thread is a conversation: `thread_id` is `thread_ts`, or the message's own `ts` for a
top-level message (the thread it starts). A DM (`channel_type: im`, a `D…` channel) is one
conversation: no thread.

    event (subtype)                                kind         sender            text
    message, app_mention (none, thread_broadcast,  TEXT if text, user             text (1)
      file_share, me_message)                      else NON_TEXT
    message with bot_id, or subtype bot_message    USER_EVENT   parent_user_id    -
      or assistant_app_thread (the app's own       (NO_SENDER   (in a thread)
      replies, any bot: never scored, never a      without it)
      switch)
    message_changed, message_deleted (2)           EDIT         message.user /    new text /
                                                                previous.user     -
      ... of a bot's message                       USER_EVENT   parent_user_id    -
      ... of another subtype (channel_join...)     USER_EVENT   message.user      -
    message_replied (about its thread's parent)    USER_EVENT   message.user      -
    other subtypes (channel_join,                  USER_EVENT   user              -
      channel_topic, pinned_item...)               (NO_SENDER without one)
    reaction_added, reaction_removed               NON_TEXT     user              -
                                                   (thread: item.ts)
    app_uninstalled, tokens_revoked, grid_migration_*  NO_SENDER  -               -
    any other event (member_joined_channel,        USER_EVENT   user / user.id /  -
      app_home_opened, team_join, assistant_thread_started, unknown kinds)  user_id (NO_SENDER without)
    outer type app_rate_limited, other outer types NO_SENDER    -                 -

A body with an `event` object and no outer `type` (abbreviated test bodies, RasaHQ/rasa's) is read
as an `event_callback`.
(1) `slack_text.plain_text`: `<@U123>` is a Slack user, never an agent name; entities resolved.
(2) The thread is the new message's `thread_ts` or `ts`, else the previous message's (bolt-python's
test bodies carry a `message` without `ts`).

Delivery ids: a message or app_mention event is keyed by its message identity
`<type>:<team, enterprise or the event's team>:<channel>:<ts or client_msg_id>` (Slack retries keep the `event_id`,
but one message has also been delivered several times with new `event_id`s and no retry header);
the type keeps an `app_mention` and the `message` copy of the same message apart, so the first
copy never swallows the mention (platforms.md 6). Other events: `event_id`; `app_rate_limited`:
`app_rate_limited:<team>:<minute_rate_limited>`.
"""

from __future__ import annotations

from typing import Any

from stickyroute.channels.fields import ident, obj, string
from stickyroute.channels.slack_text import plain_text
from stickyroute.routing.envelope import Envelope, MessageKind

__all__ = ["parse_events"]

_USER_SUBTYPES = frozenset({"thread_broadcast", "file_share", "me_message"})
_APP_SUBTYPES = frozenset({"bot_message", "assistant_app_thread"})
_EDITS = frozenset({"message_changed", "message_deleted"})
_REACTIONS = frozenset({"reaction_added", "reaction_removed"})
_LIFECYCLE = frozenset({"app_uninstalled", "tokens_revoked", "grid_migration_started", "grid_migration_finished",
                        "app_requested", "app_deleted", "app_installed"})


def parse_events(doc: dict[str, Any], channel: str) -> Envelope:
    """The envelope of one decoded Events API body (see the module table)."""
    outer = doc.get("type")
    event = obj(doc.get("event"))
    tenant = (ident(doc.get("team_id")) or ident(doc.get("enterprise_id")) or ident(doc.get("context_team_id"))
              or ident(event.get("team")) or "")
    if outer == "app_rate_limited":
        minute = ident(doc.get("minute_rate_limited"))
        return Envelope(channel, MessageKind.NO_SENDER,
                        delivery_id=f"app_rate_limited:{tenant}:{minute}" if minute else None)
    event_id = ident(doc.get("event_id"))
    if outer not in ("event_callback", None) or not event:
        return Envelope(channel, MessageKind.NO_SENDER, delivery_id=event_id)
    kind = string(event.get("type"))
    if kind in ("message", "app_mention"):
        return _message(event, kind or "message", tenant, event_id, channel)
    return _other(event, kind, event_id, channel)


def _is_dm(event: dict[str, Any], chat: str | None) -> bool:
    return event.get("channel_type") == "im" or (chat or "").startswith("D")


def _thread(message: dict[str, Any], dm: bool) -> str | None:
    """`thread_ts`, else the message's own `ts` (a top-level message starts its thread); None in a DM."""
    if dm:
        return None
    return ident(message.get("thread_ts")) or ident(message.get("ts"))


def _is_bot(message: dict[str, Any]) -> bool:
    return string(message.get("subtype")) in _APP_SUBTYPES or bool(message.get("bot_id"))


def _message(event: dict[str, Any], kind: str, tenant: str, event_id: str | None, channel: str) -> Envelope:
    subtype = string(event.get("subtype"))
    chat = ident(event.get("channel"))
    dm = _is_dm(event, chat)
    stamp = ident(event.get("ts")) or ident(event.get("event_ts")) or ident(event.get("client_msg_id"))
    delivery_id = f"{kind}:{tenant}:{chat}:{stamp}" if chat and stamp else event_id
    message = event
    if subtype in _EDITS or subtype == "message_replied":
        message = obj(event.get("previous_message" if subtype == "message_deleted" else "message"))
    thread = _thread(message, dm) or _thread(obj(event.get("previous_message")), dm)
    if _is_bot(message) or _is_bot(event):
        person = None if dm else ident(message.get("parent_user_id"))
        return _envelope(channel, MessageKind.USER_EVENT, person, chat, thread, None, delivery_id)
    user = ident(message.get("user"))
    inner = string(message.get("subtype")) if message is not event else None
    if inner is not None and inner not in _USER_SUBTYPES:
        return _envelope(channel, MessageKind.USER_EVENT, user, chat, thread, None, delivery_id)
    if subtype in _EDITS:
        text = string(message.get("text")) if subtype == "message_changed" else None
        return _envelope(channel, MessageKind.EDIT, user, chat, thread, plain_text(text) if text else None,
                         delivery_id)
    if subtype is not None and subtype not in _USER_SUBTYPES:
        return _envelope(channel, MessageKind.USER_EVENT, user, chat, thread, None, delivery_id)
    raw = string(event.get("text"))
    text = plain_text(raw) if raw else ""
    return _envelope(channel, MessageKind.TEXT if text else MessageKind.NON_TEXT, user, chat, thread,
                     text or None, delivery_id)


def _other(event: dict[str, Any], kind: str | None, event_id: str | None, channel: str) -> Envelope:
    """Every event that is not a message: reactions, lifecycle, joins, app home, unknown kinds."""
    user_field = event.get("user")
    user = ident(user_field) or ident(obj(user_field).get("id")) or ident(event.get("user_id"))
    item = obj(event.get("item"))
    assistant = obj(event.get("assistant_thread"))
    chat_field = event.get("channel")
    chat = (ident(chat_field) or ident(obj(chat_field).get("id")) or ident(event.get("channel_id"))
            or ident(item.get("channel")) or ident(assistant.get("channel_id")))
    user = user or ident(assistant.get("user_id"))
    dm = _is_dm(event, chat)
    thread = None if dm else (
        ident(event.get("thread_ts")) or ident(item.get("ts")) or ident(assistant.get("thread_ts")))
    if kind in _LIFECYCLE or kind is None:
        user = None
    event_kind = MessageKind.NON_TEXT if kind in _REACTIONS else MessageKind.USER_EVENT
    return _envelope(channel, event_kind, user, chat, thread, None, event_id)


def _envelope(channel: str, kind: MessageKind, sender: str | None, chat: str | None, thread: str | None,
              text: str | None, delivery_id: str | None) -> Envelope:
    """The envelope; no human sender known makes it NO_SENDER (a chat binding or the default)."""
    if sender is None:
        kind, text = MessageKind.NO_SENDER, None
    return Envelope(channel=channel, kind=kind, delivery_id=delivery_id, sender_id=sender, chat_id=chat,
                    thread_id=thread, text=text, sender_aliases=(sender,) if sender is not None else ())
