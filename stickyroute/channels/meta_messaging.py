"""Messenger and Instagram webhook bodies -> one envelope per messaging event.

Source: Meta "Messenger Platform webhook events" reference (messages, message_echoes,
message_edits, message_reactions, message_reads, message_deliveries, messaging_postbacks,
messaging_optins, messaging_referrals, messaging_handovers, messaging_account_linking,
standby), "Instagram Messaging webhooks" and "Instagram Platform webhook examples" (messages,
messaging_seen, message_reactions, messaging_postbacks, messaging_referral, comments, mentions);
platforms.md section 5.

Body: `{"object": "page" | "instagram", "entry": [{"id", "time", "messaging" | "standby": [...],
"changes": [{"field", "value"}]}]}`: Meta batches entries (up to 1000), and Instagram also sends
the Graph "changes" form (the dashboard's Test button, comments). Every entry, list and item is
read; `item_path = (entry, "messaging" | "standby" | "changes", index)`; an entry without items
is one NO_SENDER envelope `(entry,)`; a body without entries one `()`.

    event                                kind          sender          delivery id
    message                              TEXT if text, sender.id (1)   mid
                                         else NON_TEXT
    message with quick_reply             BUTTON        sender.id       mid           (text: payload)
    message with is_echo (the page's     USER_EVENT    recipient.id    mid
      own message: never scored, never                 (the person)
      a switch)
    message with is_deleted (IG unsend)  EDIT          sender.id       deleted:<mid>
    message_edit                         EDIT          sender.id       edit:<mid>:<num_edit>
    postback                             BUTTON        sender.id       postback:<mid>, else
                                                                       postback:<sender>:<timestamp>
    reaction                             NON_TEXT      sender.id       reaction:<sender>:<mid>:<action>:
                                                                       <reaction>:<timestamp>
    read, delivery                       STATUS        sender.id       read|delivery:<sender>:
                                                                       <watermark or mid>
    referral, optin, account_linking,    USER_EVENT    sender.id (or   <kind>:<sender>:<timestamp>
      handover (pass/take/request_                     optin.user_ref)
      thread_control, app_roles),
      unknown kinds
    changes: messages, messaging_*,      as the messaging item of the same shape
      message_reactions, message_edit
    changes: comments, live_comments     TEXT          value.from.id   comment:<id>
      ... written by the account itself  NO_SENDER     -               comment:<id>
      (from.id is the entry's id: an
      agent's public reply, never scored)
    changes: other fields (mentions...)  USER_EVENT with a sender, else NO_SENDER; no id

(1) `sender.id` is the page-scoped PSID (Messenger) or Instagram-scoped IGSID; a Chat Plugin guest
has only `sender.user_ref`, used in its place. The conversation is 1:1: `chat_id` is the person.
An item without a person is NO_SENDER (a chat binding cannot exist: the default agent).
An item without a delivery id (no timestamp) is keyed by its place in the body.

Raises `UnparsedUpdate` for a body that is not JSON, or not an object with an `entry` list and
`object` "page" or "instagram" (a body without `object`, as howdyai/botkit's tests post, is read
as Meta's). Linear in the body.
"""

from __future__ import annotations

from typing import Any

from stickyroute.channels.fields import ident, items, obj, string
from stickyroute.channels.jsonbody import decode
from stickyroute.errors import UnparsedUpdate
from stickyroute.routing.envelope import Envelope, MessageKind

__all__ = ["ITEM_LISTS", "OBJECTS", "load", "parse"]

OBJECTS = frozenset({"page", "instagram"})
ITEM_LISTS = ("messaging", "standby", "changes")
"""The per-item lists of an entry (also item_path[1])."""
_EVENTS = ("referral", "optin", "account_linking", "pass_thread_control", "take_thread_control",
           "request_thread_control", "app_roles", "policy_enforcement", "game_play", "messaging_feedback")
_MESSAGING_FIELDS = frozenset({"messages", "messaging_postbacks", "message_reactions", "messaging_seen",
                               "messaging_referral", "messaging_optins", "messaging_handover", "message_edit",
                               "message_echoes", "message_deliveries", "message_reads", "messaging_account_linking",
                               "standby"})
_COMMENTS = frozenset({"comments", "live_comments"})
_HEADER = frozenset({"sender", "recipient", "timestamp"})


def load(body: bytes) -> dict[str, Any]:
    """The decoded body; UnparsedUpdate unless it is a page / instagram object with entries."""
    try:
        doc = decode(body)
    except (ValueError, RecursionError) as exc:
        raise UnparsedUpdate(f"messenger: body is not valid JSON: {exc}") from exc
    if not isinstance(doc, dict) or string(doc.get("object", "page")) not in OBJECTS:
        raise UnparsedUpdate("messenger: body is not an object with object 'page' or 'instagram'")
    if not isinstance(doc.get("entry"), list):
        raise UnparsedUpdate("messenger: body has no entry list")
    return doc


def parse(body: bytes, channel: str) -> tuple[Envelope, ...]:
    """One Messenger / Instagram webhook body -> its envelopes in body order (module table)."""
    doc = load(body)
    found: list[Envelope] = []
    for e, listed in enumerate(doc["entry"]):
        entry = obj(listed)
        account = ident(entry.get("id"))
        before = len(found)
        for key, value in entry.items():
            if key in ITEM_LISTS and isinstance(value, list):
                for i, item in enumerate(value):
                    found.append(_item(key, obj(item), (e, key, i), channel, account))
        if len(found) == before:
            found.append(Envelope(channel, MessageKind.NO_SENDER, item_path=(e,)))
    return tuple(found) or (Envelope(channel, MessageKind.NO_SENDER),)


def _item(key: str, item: dict[str, Any], path: tuple[int | str, ...], channel: str, account: str | None
          ) -> Envelope:
    if key != "changes":
        return _messaging(item, path, channel)
    field = string(item.get("field"))
    value = obj(item.get("value"))
    if field in _COMMENTS:
        user = ident(obj(value.get("from")).get("id"))
        if user is not None and user == account:
            user = None
        comment = ident(value.get("id"))
        text = string(value.get("text"))
        return _envelope(channel, MessageKind.TEXT if text else MessageKind.NON_TEXT, user, text,
                         f"comment:{comment}" if comment else None, path)
    if field in _MESSAGING_FIELDS or "sender" in value:
        return _messaging(value, path, channel)
    user = ident(obj(value.get("from")).get("id"))
    return _envelope(channel, MessageKind.USER_EVENT, user, None, None, path)


def _person(side: object) -> str | None:
    side = obj(side)
    return ident(side.get("id")) or ident(side.get("user_ref"))


def _messaging(item: dict[str, Any], path: tuple[int | str, ...], channel: str) -> Envelope:
    user = _person(item.get("sender"))
    stamp = ident(item.get("timestamp"))
    if "message" in item:
        message = obj(item.get("message"))
        mid = ident(message.get("mid"))
        if message.get("is_echo") is True:
            return _envelope(channel, MessageKind.USER_EVENT, _person(item.get("recipient")), None, mid, path)
        if message.get("is_deleted") is True:
            return _envelope(channel, MessageKind.EDIT, user, None, f"deleted:{mid}" if mid else None, path)
        quick = obj(message.get("quick_reply"))
        if quick:
            return _envelope(channel, MessageKind.BUTTON, user, string(quick.get("payload")), mid, path)
        text = string(message.get("text"))
        return _envelope(channel, MessageKind.TEXT if text else MessageKind.NON_TEXT, user, text, mid, path)
    if "message_edit" in item:
        edit = obj(item.get("message_edit"))
        mid, count = ident(edit.get("mid")), ident(edit.get("num_edit"))
        return _envelope(channel, MessageKind.EDIT, user, string(edit.get("text")),
                         f"edit:{mid}:{count}" if mid else None, path)
    if "postback" in item:
        postback = obj(item.get("postback"))
        mid = ident(postback.get("mid"))
        key = f"postback:{mid}" if mid else f"postback:{user}:{stamp}" if user and stamp else None
        return _envelope(channel, MessageKind.BUTTON, user,
                         string(postback.get("payload")) or string(postback.get("title")), key, path)
    if "reaction" in item:
        reaction = obj(item.get("reaction"))
        what = ":".join(str(ident(reaction.get(k)) or "") for k in ("mid", "action", "reaction"))
        return _envelope(channel, MessageKind.NON_TEXT, user, None,
                         f"reaction:{user}:{what}:{stamp}" if user and stamp else None, path)
    for kind in ("read", "delivery"):
        if kind in item:
            receipt = obj(item.get(kind))
            mark = ident(receipt.get("watermark")) or ident(receipt.get("mid")) or next(
                (ident(m) for m in items(receipt.get("mids")) if ident(m)), None)
            return _envelope(channel, MessageKind.STATUS, user, None,
                             f"{kind}:{user}:{mark}" if user and mark else None, path)
    kind = next((k for k in _EVENTS if k in item), None) or next((k for k in item if k not in _HEADER), "event")
    if user is None and kind == "optin":
        user = ident(obj(item.get("optin")).get("user_ref"))
    return _envelope(channel, MessageKind.USER_EVENT, user, None,
                     f"{kind}:{user}:{stamp}" if user and stamp else None, path)


def _envelope(channel: str, kind: MessageKind, person: str | None, text: str | None, delivery_id: str | None,
              path: tuple[int | str, ...]) -> Envelope:
    """A 1:1 envelope (the chat is the person); no person known makes it NO_SENDER."""
    if person is None:
        kind, text = MessageKind.NO_SENDER, None
    return Envelope(channel=channel, kind=kind, delivery_id=delivery_id, sender_id=person, chat_id=person,
                    text=text, sender_aliases=(person,) if person is not None else (), item_path=path)
