"""WhatsApp Cloud API adapter: one webhook POST body -> one envelope per message and status.

Shape: `parse(body, channel) -> (Envelope, ...)`, 1..n envelopes in body order. Every entry,
every change, every message and every status is read; nothing indexes `[0]` (field report T13,
pywa#229: batches carry several entries, changes, messages and statuses from different users).
Source: Meta "WhatsApp Cloud API webhooks", reference/messages (+ /status, /group, /button,
/interactive), "Business-scoped user IDs".

Body: `{"object": "whatsapp_business_account", "entry": [{"id", "changes": [{"field",
"value": {"metadata", "contacts"?, "messages"?, "statuses"?, "errors"?}}]}]}`. Text is the
JSON-decoded string (`caf\\u00e9` -> `café`, `http:\\/\\/` -> `http://`: field report T1).

Messages (`item_path = (entry_index, change_index, "messages", index)`):

    type                                   kind        text
    text                                   TEXT        text.body
    button (template quick reply)          BUTTON      button.text
    interactive button_reply / list_reply  BUTTON      title (other interactive replies: None)
    image, video, document with caption    TEXT        caption
    image, video, document, no caption     NON_TEXT    -
    audio, voice, sticker, location,       NON_TEXT    -
      contacts, reaction, order, system,
      unsupported, unknown types

`delivery_id` is the message `id` (wamid, Meta's redelivery key). Sender ids, phone first:
`from` (phone, `+` dropped by `normalise_id`), the matching contact's `wa_id`, then
`from_user_id` (BSUID, always present: users with a WhatsApp username have no phone) and the
matching contact's `user_id`; `sender_id` is the first. A message with no sender id at all is
NO_SENDER. `chat_id` is `group_id` for group messages, else the sender id.

Statuses (`item_path = (..., "statuses", index)`): kind STATUS, `delivery_id` is
`"<id>:<status>"` (one outbound wamid yields sent, delivered, read: Meta dedupes on id + status).
The status belongs to its recipient: sender ids from `recipient_id` (or, when
`recipient_type` is "group", `recipient_participant_id`, the group being `recipient_id`),
`recipient_user_id` and matching contacts; `chat_id` the group, else the sender id.
Contacts without `profile` are fine (field report T11).

Other fields (calls, history, message echoes, user preferences, account events) are read per
`whatsapp_fields`: event items with `item_path = (entry, change, <list>, index)`, history threads
with `(entry, change, "history", chunk, thread)`. A change with no items (`account_update`,
template events, `errors` only) yields one NO_SENDER envelope with `item_path = (entry_index,
change_index)`; an entry with no changes one with `(entry_index,)`; a body with no entries one
with `()`.

Linear in the body: each change's contacts are indexed once (`ContactIndex`), never scanned per
message (issue #10: 6,000 messages with their contacts took 20 s, 20,000 about 7 minutes).

Raises `UnparsedUpdate` when the body is not JSON, or not an object with `object:
"whatsapp_business_account"` and an `entry` list.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from stickyroute.channels.jsonbody import decode
from stickyroute.channels.whatsapp_fields import EVENT_FIELDS, HISTORY, MESSAGE_FIELDS, UserEvent
from stickyroute.config.ids import normalise_id
from stickyroute.errors import UnparsedUpdate
from stickyroute.routing.envelope import Envelope, MessageKind

OBJECT = "whatsapp_business_account"
ITEM_LISTS = ("messages", "statuses", *(spec.items for spec in EVENT_FIELDS.values()))
"""The per-item lists of a change value, in the names Meta uses (also item_path[2])."""
_MEDIA_WITH_CAPTION = ("image", "video", "document")
Path = tuple[int | str, ...]


def load(body: bytes) -> dict[str, Any]:
    """Decode a WhatsApp webhook body; UnparsedUpdate unless it is a WABA object with entries."""
    try:
        doc = decode(body)
    except (ValueError, RecursionError) as exc:
        raise UnparsedUpdate(f"whatsapp: body is not valid JSON: {exc}") from exc
    if not isinstance(doc, dict) or doc.get("object") != OBJECT:
        raise UnparsedUpdate(f"whatsapp: body is not an object with object={OBJECT!r}")
    if not isinstance(doc.get("entry"), list):
        raise UnparsedUpdate("whatsapp: body has no entry list")
    return doc


def parse(body: bytes, channel: str) -> tuple[Envelope, ...]:
    """One WhatsApp webhook body -> its envelopes in body order (see the module docstring)."""
    return envelopes(load(body), channel)


def envelopes(doc: dict[str, Any], channel: str) -> tuple[Envelope, ...]:
    """The envelopes of an already `load`ed body (shared with `whatsapp_split`)."""
    found: list[Envelope] = []
    for entry_index, entry in enumerate(doc["entry"]):
        changes = entry.get("changes") if isinstance(entry, dict) else None
        if not isinstance(changes, list) or not changes:
            found.append(Envelope(channel, MessageKind.NO_SENDER, item_path=(entry_index,)))
            continue
        for change_index, change in enumerate(changes):
            found.extend(_change(change, (entry_index, change_index), channel))
    if not found:
        found.append(Envelope(channel, MessageKind.NO_SENDER))
    return tuple(found)


NOT_A_FIELD = "(not a string)"


def change_field(change: object) -> str | None:
    """A change's `field`: None when absent, NOT_A_FIELD (an unknown field) when not a string."""
    field = _obj(change).get("field")
    return field if field is None or isinstance(field, str) else NOT_A_FIELD


def items(value: dict[str, Any], field: str | None = "messages") -> Iterator[tuple[str, int, object]]:
    """Every (list name, index, item) of a change value of `field`, lists in body key order."""
    spec = EVENT_FIELDS.get(field) if field is not None else None
    names = ("messages", "statuses") if field in MESSAGE_FIELDS else (spec.items,) if spec is not None else ()
    for key, listed in value.items():
        if key in names and isinstance(listed, list):
            for index, item in enumerate(listed):
                yield key, index, item


class ContactIndex:
    """A change's `contacts` indexed once by `wa_id` and `user_id` (contact order kept)."""

    __slots__ = ("by_bsuid", "by_phone", "contacts")

    def __init__(self, contacts: object) -> None:
        self.contacts = [c for c in _list(contacts) if isinstance(c, dict)]
        self.by_phone: dict[str, list[int]] = {}
        self.by_bsuid: dict[str, list[int]] = {}
        for index, contact in enumerate(self.contacts):
            wa_id, user_id = _id(contact.get("wa_id")), _id(contact.get("user_id"))
            if wa_id is not None:
                self.by_phone.setdefault(wa_id, []).append(index)
            if user_id is not None:
                self.by_bsuid.setdefault(user_id, []).append(index)


def sender_aliases(phone: object, bsuid: object, contacts: ContactIndex | None = None) -> tuple[str, ...]:
    """Every id naming one user, phone numbers first, then BSUIDs; `()` when none is known.

    A contact matches when its `wa_id` equals the phone or its `user_id` equals the BSUID; its
    ids are added (a username user's contact may carry the phone the message omits, or not).
    """
    phone_id, bsuid_id = _id(phone), _id(bsuid)
    if contacts is None:
        return tuple(dict.fromkeys(i for i in (phone_id, bsuid_id) if i is not None))
    matched = sorted({*contacts.by_phone.get(phone_id or "", ()), *contacts.by_bsuid.get(bsuid_id or "", ())})
    phones, bsuids = [phone_id], [bsuid_id]
    for index in matched:
        contact = contacts.contacts[index]
        phones.append(_id(contact.get("wa_id")))
        bsuids.append(_id(contact.get("user_id")))
    return tuple(dict.fromkeys(i for i in (*phones, *bsuids) if i is not None))


def _change(change: object, path: tuple[int, int], channel: str) -> list[Envelope]:
    value = _obj(_obj(change).get("value"))
    field = change_field(change)
    contacts = ContactIndex(value.get("contacts"))
    found: list[Envelope] = []
    if field == HISTORY:
        found = _history(value, path, channel)
    elif isinstance(field, str) and field in EVENT_FIELDS:
        spec = EVENT_FIELDS[field]
        found = [_event(spec, item, (*path, key, index), contacts, channel) for key, index, item in items(value, field)]
    elif field in MESSAGE_FIELDS:
        found = [
            (_message if key == "messages" else _status)(item, (*path, key, index), contacts, channel)
            for key, index, item in items(value, field)
        ]
    return found or [Envelope(channel, MessageKind.NO_SENDER, item_path=path)]


def _message(message: object, path: Path, contacts: ContactIndex, channel: str) -> Envelope:
    if not isinstance(message, dict):
        return Envelope(channel, MessageKind.NO_SENDER, item_path=path)
    aliases = sender_aliases(message.get("from"), message.get("from_user_id"), contacts)
    sender = aliases[0] if aliases else None
    kind, text = _kind_and_text(message)
    return Envelope(
        channel=channel,
        kind=kind if sender is not None else MessageKind.NO_SENDER,
        delivery_id=_id(message.get("id")),
        sender_id=sender,
        chat_id=_id(message.get("group_id")) or sender,
        text=text,
        sender_aliases=aliases,
        item_path=path,
    )


def status_user(status: dict[str, Any]) -> tuple[str | None, object, object]:
    """(group id or None, the recipient's phone, the recipient's BSUID) of a status; a group
    status names its participant (`recipient_participant_user_id`, else `recipient_user_id`)."""
    if status.get("recipient_type") == "group":
        return (_id(status.get("recipient_id")), status.get("recipient_participant_id"),
                status.get("recipient_participant_user_id") or status.get("recipient_user_id"))
    return None, status.get("recipient_id"), status.get("recipient_user_id")


def _status(status: object, path: Path, contacts: ContactIndex, channel: str) -> Envelope:
    if not isinstance(status, dict):
        return Envelope(channel, MessageKind.NO_SENDER, item_path=path)
    group, person, bsuid = status_user(status)
    aliases = sender_aliases(person, bsuid, contacts)
    sender = aliases[0] if aliases else None
    wamid, state = _id(status.get("id")), _id(status.get("status"))
    return Envelope(
        channel=channel,
        kind=MessageKind.STATUS,
        delivery_id=f"{wamid}:{state}" if wamid and state else wamid,
        sender_id=sender,
        chat_id=group or _id(status.get("group_id")) or sender,
        sender_aliases=aliases,
        item_path=path,
    )


def _event(spec: UserEvent, item: object, path: Path, contacts: ContactIndex, channel: str) -> Envelope:
    if not isinstance(item, dict):
        return Envelope(channel, MessageKind.NO_SENDER, item_path=path)
    aliases = sender_aliases(*spec.user(item), contacts)
    sender = aliases[0] if aliases else None
    event_id = _id(item.get("id"))
    suffix = _id(spec.id_suffix(item)) if spec.id_suffix is not None else None
    return Envelope(
        channel=channel, kind=spec.kind if sender is not None else MessageKind.NO_SENDER,
        delivery_id=f"{event_id}:{suffix}" if event_id and suffix else None,
        sender_id=sender, chat_id=sender, sender_aliases=aliases, item_path=path,
    )


def _history(value: dict[str, Any], path: tuple[int, int], channel: str) -> list[Envelope]:
    """One HISTORY envelope per thread of every history chunk (the thread's user as sender)."""
    found = []
    for chunk_index, chunk in enumerate(_list(value.get("history"))):
        for thread_index, listed in enumerate(_list(_obj(chunk).get("threads"))):
            thread = _obj(listed)
            first = _obj(next(iter(_list(thread.get("messages"))), None))
            aliases = sender_aliases(thread.get("id") or first.get("from"), first.get("from_user_id"))
            sender = aliases[0] if aliases else None
            found.append(Envelope(
                channel=channel, kind=MessageKind.HISTORY if sender is not None else MessageKind.NO_SENDER,
                sender_id=sender, chat_id=sender, sender_aliases=aliases,
                item_path=(*path, HISTORY, chunk_index, thread_index),
            ))
    return found


def _kind_and_text(message: dict[str, Any]) -> tuple[MessageKind, str | None]:
    """Message type -> (kind, text) per the module table."""
    kind = message.get("type")
    if kind == "text":
        return _text_kind(_obj(message.get("text")).get("body"))
    if kind == "button":
        return MessageKind.BUTTON, _str(_obj(message.get("button")).get("text"))
    if kind == "interactive":
        interactive = _obj(message.get("interactive"))
        for reply in ("button_reply", "list_reply"):
            if reply in interactive:
                return MessageKind.BUTTON, _str(_obj(interactive[reply]).get("title"))
        return MessageKind.BUTTON, None
    if kind in _MEDIA_WITH_CAPTION:
        return _text_kind(_obj(message.get(kind)).get("caption"))
    return MessageKind.NON_TEXT, None


def _text_kind(text: object) -> tuple[MessageKind, str | None]:
    if isinstance(text, str) and text:
        return MessageKind.TEXT, text
    return MessageKind.NON_TEXT, None


def _id(value: object) -> str | None:
    """A WhatsApp id (string, sometimes a number) normalised; None for other types."""
    if isinstance(value, (int, str)):
        return normalise_id(value)
    return None


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _obj(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []
