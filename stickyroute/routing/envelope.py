"""Envelope: what a channel adapter reads out of one webhook update, the only input of routing.

A Telegram, Slack or Discord POST carries exactly one update (one envelope); a WhatsApp Cloud
API, Messenger, Instagram or LINE POST carries 1..n items (one envelope each, in body order).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

KEPT_TEXT_CHARS = 1024
"""Most characters of a message text anything keeps beyond its request (the recent texts the
classifier may see, the decision ring with `log_text`): memory per conversation stays bounded
whatever a payload sends. Routing itself reads the whole text."""


class MessageKind(enum.Enum):
    """What kind of update an envelope stands for; decides which routing rules apply."""

    TEXT = "text"
    """A user's text message, or media with a caption (the caption is the text)."""
    NON_TEXT = "non_text"
    """A user's message without text: image, voice, sticker, location, reaction, contact..."""
    EDIT = "edit"
    """An edit of an earlier message (Telegram `edited_message`); never switches, never scored."""
    BUTTON = "button"
    """A button press: Telegram `callback_query`, WhatsApp interactive/button reply."""
    STATUS = "status"
    """A delivery status of an outbound message (WhatsApp `statuses[]`); belongs to its recipient."""
    NO_SENDER = "no_sender"
    """An update with no human sender: `channel_post`, `my_chat_member`, WhatsApp account events..."""
    USER_EVENT = "user_event"
    """An event naming one user that is not a message to answer: a WhatsApp call, an echo of a
    message the business sent from the app, a marketing preference, a user id change. Follows the
    user's binding or live route; never scored, never refreshes or creates a route."""
    HISTORY = "history"
    """Past messages of one chat replayed by WhatsApp's history sync (`history` field): follows the
    user's binding, else the default; never classified, never creates or refreshes a route."""


@dataclass(frozen=True, slots=True)
class Envelope:
    """One routable item of a webhook update.

    Ids are strings after normalisation (Telegram numbers as decimal strings, WhatsApp phone
    numbers digits only without `+`). `thread_id` is set only for real forum topics (Telegram
    `is_topic_message: true`). `text` is the decoded text or caption, `None` when there is none.
    `sender_aliases` lists every id a user binding may name for this sender (WhatsApp: phone
    number and BSUID `from_user_id`); `sender_id` is the first of them and keys the route.
    `item_path` locates the item inside a batch body (WhatsApp: (entry index, change index,
    "messages" | "statuses", index); LINE: (event index,); Messenger / Instagram: (entry index,
    "messaging" | "standby" | "changes", index)); empty for one-item platforms.
    """

    channel: str
    kind: MessageKind
    delivery_id: str | None = None
    sender_id: str | None = None
    chat_id: str | None = None
    thread_id: str | None = None
    text: str | None = None
    sender_aliases: tuple[str, ...] = ()
    item_path: tuple[int | str, ...] = ()
    to_proxy: bool = False
    """A platform command addressed to the proxy itself (Slack's `/agent` slash command, Discord's
    `agent` application command and its autocomplete): routed like any envelope (its text is an
    explicit instruction), then answered by the channel adapter's `agent_list`, never forwarded
    unless the adapter has no answer."""

    @property
    def has_sender(self) -> bool:
        """True when a human sender is known (route state may be read and written)."""
        return self.sender_id is not None and self.kind is not MessageKind.NO_SENDER
