"""Slack's form-encoded requests -> one envelope: interactivity payloads and slash commands.

Source: Slack "Handling user interaction" (interactivity: one form field `payload` holding JSON),
reference/interaction-payloads (block_actions, view_submission, view_closed, shortcut,
message_action, block_suggestion; legacy interactive_message and dialog_*), "Implementing slash
commands" (fields team_id, channel_id, user_id, command, text, response_url, trigger_id); a form
with `ssl_check=1` is Slack checking the certificate (answered by the proxy's handshake).

    request                                      kind          sender     chat / thread             text
    block_actions, interactive_message           BUTTON        user.id    channel.id or container   the first action's
                                                                          channel; the message's    value
                                                                          thread_ts or ts (2) (4)
    message_action (message shortcut)            BUTTON        user.id    channel.id; message (2)   callback_id
    view_submission, view_closed, shortcut,      BUTTON        user.id    the view's conversation   callback_id
      block_suggestion, dialog_* , others known                           (1), else none
    unknown interactivity type                   NO_SENDER     -          channel.id                -
    slash command /agent                         TEXT, to the  user_id    channel_id; no thread     "/agent <text>"
                                                 proxy (3)
    any other slash command                      TEXT if text, user_id    channel_id; no thread     text
                                                 else NON_TEXT

(1) A modal or a global shortcut names no channel. A submit follows the conversation its view
names: the first `response_urls[].channel_id`, or a `private_metadata` that is a JSON object with
`channel_id` (or `channel`) and optionally `thread_ts` (a convention for agents that open modals:
the submit then goes to the agent of that conversation); else the sender's user binding or the
default. (2) In a DM (a `D…` channel) there is no thread, as for messages (`slack_events`).
(3) The proxy answers `/agent` itself (`SlackAdapter.agent_list`), with an ephemeral message: it
lists the agents, and `/agent <name>` switches the conversation Slack names: the DM, or in a
channel the sender's slash-command conversation there (Slack sends no thread with a command).
(4) A legacy `interactive_message` names its message by `original_message` and `message_ts`
(bolt-python's attachment-action bodies): its thread is `original_message.thread_ts`, else the
message's own ts, as for `block_actions`.

Delivery ids: `<type>:<trigger_id>` (unique per interaction), else `<type>:<user>:<action_ts>`;
a slash command `command:<trigger_id>`; else the body's position (identical bodies are one
delivery).
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qsl

from stickyroute.channels.fields import ident, items, obj, string
from stickyroute.channels.jsonbody import decode
from stickyroute.channels.slack_text import plain_text
from stickyroute.errors import UnparsedUpdate
from stickyroute.routing.envelope import Envelope, MessageKind

__all__ = ["form_fields", "parse_form"]

_INTERACTIONS = frozenset({
    "block_actions", "block_suggestion", "view_submission", "view_closed", "shortcut", "message_action",
    "interactive_message", "dialog_submission", "dialog_cancellation", "dialog_suggestion", "workflow_step_edit",
})
AGENT_COMMAND = "/agent"


def form_fields(body: bytes) -> dict[str, str]:
    """The form's fields (the first value of a repeated name); UnparsedUpdate when the body is
    not UTF-8."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UnparsedUpdate(f"slack: form body is not UTF-8: {exc}") from exc
    fields: dict[str, str] = {}
    for name, value in parse_qsl(text, keep_blank_values=True):
        fields.setdefault(name, value)
    return fields


def parse_form(body: bytes, channel: str) -> Envelope:
    """The envelope of one form-encoded Slack request (see the module table); UnparsedUpdate for
    a form that is neither an interaction, a slash command nor an SSL check."""
    fields = form_fields(body)
    if "payload" in fields:
        try:
            doc = decode(fields["payload"].encode("utf-8", "surrogatepass"))
        except (ValueError, RecursionError, UnicodeEncodeError) as exc:
            raise UnparsedUpdate(f"slack: interactivity payload is not JSON: {exc}") from exc
        if not isinstance(doc, dict):
            raise UnparsedUpdate("slack: interactivity payload is not a JSON object")
        return _interaction(doc, channel)
    if "command" in fields:
        return _command(fields, channel)
    if "ssl_check" in fields:
        return Envelope(channel, MessageKind.NO_SENDER)
    raise UnparsedUpdate("slack: form body is neither an interaction, a slash command nor an SSL check")


def _dm(chat: str | None) -> bool:
    return (chat or "").startswith("D")


def _interaction(doc: dict[str, Any], channel: str) -> Envelope:
    kind = string(doc.get("type"))
    user = ident(obj(doc.get("user")).get("id")) or ident(doc.get("user_id"))
    container = obj(doc.get("container"))
    message = obj(doc.get("message")) or obj(doc.get("original_message"))
    chat = ident(obj(doc.get("channel")).get("id")) or ident(container.get("channel_id"))
    thread = (ident(message.get("thread_ts")) or ident(message.get("ts")) or ident(container.get("thread_ts"))
              or ident(container.get("message_ts")) or ident(doc.get("message_ts")))
    if chat is None:
        chat, thread = _view_conversation(doc)
    if _dm(chat):
        thread = None
    actions = items(doc.get("actions"))
    first = obj(actions[0]) if actions else {}
    trigger = ident(doc.get("trigger_id"))
    stamp = ident(first.get("action_ts")) or ident(doc.get("action_ts"))
    delivery_id = f"{kind}:{trigger}" if trigger else f"{kind}:{user}:{stamp}" if stamp and user else None
    if kind not in _INTERACTIONS or user is None:
        return Envelope(channel, MessageKind.NO_SENDER, delivery_id=delivery_id, chat_id=chat, thread_id=thread)
    value = (string(first.get("value")) or string(obj(first.get("selected_option")).get("value"))
             or string(first.get("action_id")) or string(doc.get("callback_id"))
             or string(obj(doc.get("view")).get("callback_id")))
    return Envelope(channel=channel, kind=MessageKind.BUTTON, delivery_id=delivery_id, sender_id=user,
                    chat_id=chat, thread_id=thread, text=value, sender_aliases=(user,))


def _view_conversation(doc: dict[str, Any]) -> tuple[str | None, str | None]:
    """(channel, thread) a modal's submit belongs to: its first response URL's channel, or its
    `private_metadata` JSON (`channel_id` or `channel`, `thread_ts`); (None, None) otherwise."""
    for entry in items(doc.get("response_urls")):
        chat = ident(obj(entry).get("channel_id"))
        if chat is not None:
            return chat, None
    metadata = string(obj(doc.get("view")).get("private_metadata"))
    if metadata is None or not metadata.lstrip().startswith("{") or len(metadata) > 3000:
        return None, None
    try:
        data = obj(json.loads(metadata))
    except (ValueError, RecursionError):
        return None, None
    return ident(data.get("channel_id")) or ident(data.get("channel")), ident(data.get("thread_ts"))


def _command(fields: dict[str, str], channel: str) -> Envelope:
    user = ident(fields.get("user_id"))
    chat = ident(fields.get("channel_id"))
    command = fields.get("command", "").strip()
    trigger = ident(fields.get("trigger_id"))
    to_proxy = command.casefold() == AGENT_COMMAND
    argument = plain_text(fields.get("text", ""))
    text = f"{AGENT_COMMAND} {argument}".strip() if to_proxy else argument
    kind = MessageKind.TEXT if text else MessageKind.NON_TEXT
    if user is None:
        kind, text = MessageKind.NO_SENDER, ""
    return Envelope(channel=channel, kind=kind, delivery_id=f"command:{trigger}" if trigger else None,
                    sender_id=user, chat_id=chat, text=text or None,
                    sender_aliases=(user,) if user is not None else (), to_proxy=to_proxy and user is not None)
