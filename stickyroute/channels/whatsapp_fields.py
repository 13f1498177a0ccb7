"""WhatsApp changes routed by their `field`: which list of a change value holds the items, whose
user each item names, and its redelivery key.

Source: Meta "WhatsApp Cloud API webhooks" reference pages (messages, calls, history,
smb_message_echoes, user_preferences, account_update, message_template_status_update,
phone_number_quality_update; BSUIDs: "Business-scoped user IDs"), platforms.md section 4.

    field                              items under value.<list>      kind        the user              delivery id
    messages (or no field)             messages                      TEXT...     from, from_user_id    id (wamid)
                                       statuses                      STATUS      recipient (1)         id:status
    history                            history[].threads[]           HISTORY     thread id, messages'  body position
                                                                                 from / from_user_id
    calls                              calls                         USER_EVENT  from (user-initiated) id:event
                                                                                 or to, *_user_id
    smb_message_echoes                 message_echoes                USER_EVENT  to, to_user_id        id:echo
    user_preferences                   user_preferences              USER_EVENT  wa_id, user_id        body position
    user_id_update                     user_id_update                USER_EVENT  wa_id, user_id, from  body position
    account_update,                    -                             NO_SENDER   -                     body position
      message_template_status_update,
      phone_number_quality_update,
      any other field

(1) `recipient_id` / `recipient_user_id`; a group status (`recipient_type: "group"`) names the
participant: `recipient_participant_id` / `recipient_participant_user_id` (BSUID; older payloads
`recipient_user_id`), the group being `recipient_id`.

Routing (docs/platforms/whatsapp.md "WhatsApp fields"): USER_EVENT follows the user's binding or live route without
refreshing it (reason `user_event`); HISTORY the user's binding, else the default (reason
`history`), never the classifier and never a route; NO_SENDER a chat binding or the default.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from stickyroute.routing.envelope import MessageKind

__all__ = ["EVENT_FIELDS", "HISTORY", "MESSAGE_FIELDS", "NO_SENDER_FIELDS", "UserEvent"]

MESSAGE_FIELDS = frozenset({"messages", None})
"""Fields whose value holds `messages` and `statuses` (a change without `field` is read as messages)."""
HISTORY = "history"
NO_SENDER_FIELDS = frozenset({"account_update", "message_template_status_update", "phone_number_quality_update"})
"""Account events documented in platforms.md; any other unknown field is read the same way."""


def _call_user(item: dict[str, Any]) -> tuple[object, object]:
    """The user of a call event: `from` when the user called, `to` when the business did."""
    if str(item.get("direction", "")).upper().startswith("BUSINESS"):
        return item.get("to"), item.get("to_user_id")
    return item.get("from"), item.get("from_user_id")


def _key(*names: str) -> Callable[[dict[str, Any]], tuple[object, object]]:
    phone, bsuid = names

    def user(item: dict[str, Any]) -> tuple[object, object]:
        return item.get(phone), item.get(bsuid)

    return user


def _id_update_user(item: dict[str, Any]) -> tuple[object, object]:
    user_id = item.get("user_id")
    return item.get("wa_id") or item.get("from"), user_id if isinstance(user_id, (str, int)) else None


@dataclass(frozen=True, slots=True)
class UserEvent:
    """How to read the items of an event field: the list key, the user (phone, BSUID) of an item,
    and the suffix of its delivery id (`<id>:<suffix>`; None: no id, keyed by body position)."""

    items: str
    user: Callable[[dict[str, Any]], tuple[object, object]]
    id_suffix: Callable[[dict[str, Any]], object] | None
    kind: MessageKind = MessageKind.USER_EVENT


EVENT_FIELDS: dict[str, UserEvent] = {
    "calls": UserEvent("calls", _call_user, lambda item: item.get("event") or "call"),
    "smb_message_echoes": UserEvent("message_echoes", _key("to", "to_user_id"), lambda _item: "echo"),
    "user_preferences": UserEvent("user_preferences", _key("wa_id", "user_id"), None),
    "user_id_update": UserEvent("user_id_update", _id_update_user, None),
}
"""Event fields naming one user per item."""
