"""Labels from recorded traffic (`serve --record`, format version 2): the router's own verdicts.

Each recorded POST is parsed again (`stickyroute.channels.parse`, the order the recorder wrote its
`decisions` in) and every text message is paired with its decision. A redelivered update (same
channel and delivery id) is read once. Conversations are the router's (channel, chat, thread,
sender); their messages stay in time order. A text message's decision reason makes it:

- CREDIT for the decision's agent: `classified`, `reclassified` (a classifier chose it),
  `llm_confirmed` and `agent_hint` (a classifier confirmed a switch to it) — every confirmed
  switch teaches the gate to recognise the next one without a call;
- CREDIT for the named agent: `explicit` (`/agent x` or `@x`; the people themselves chose it),
  with the command and mentions cut out of the text; when nothing is left ("/agent coder"
  alone), the conversation's next text message, if it still goes to that agent, is the example;
- BACKGROUND: `llm_rejected`, `hint_rejected` (the classifier kept the previous agent: the
  message carries it, so its terms get no credit) and `classified_default` (none);
- CONTEXT otherwise (keywords, stickiness, short messages...: unverified, never counted).

Raises `NoDecisions` for a recording without decisions (version 1, or no `decisions` key).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from stickyroute import channels
from stickyroute.config.model import Config
from stickyroute.core.route import ConversationKey
from stickyroute.errors import UnparsedUpdate
from stickyroute.forwarding.recording import body_of
from stickyroute.learn.labels import Evidence, LabelledConversation, LabelledMessage
from stickyroute.learn.terms import message_terms
from stickyroute.routing.envelope import MessageKind
from stickyroute.routing.explicit import AgentNames, ExplicitKind, parse_explicit, without_explicit

CREDITED = frozenset({"classified", "reclassified", "llm_confirmed", "agent_hint"})
BACKGROUND_REASONS = frozenset({"llm_rejected", "hint_rejected", "classified_default"})


class NoDecisions(ValueError):
    """The recording holds no routing decisions to learn from."""


@dataclass(frozen=True, slots=True)
class _Message:
    text: str
    agent: str
    reason: str
    explicit_rest: str | None


def labels_from_recording(records: Sequence[dict[str, Any]], config: Config,
                          version: int) -> list[LabelledConversation]:
    """Labelled conversations (first-seen order) from recorded requests under `config`."""
    if version < 2 or not any("decisions" in r for r in records):
        raise NoDecisions(f"this recording (format version {version or 1}) has no routing decisions to learn "
                          "from: record again with `stickyroute serve --record` from this version")
    names = AgentNames((a.name, a.aliases) for a in config.agents.values())
    conversations: dict[str, list[_Message]] = {}
    seen: set[tuple[str, str]] = set()
    for record in records:
        channel = config.channels.get(record.get("channel") or "") or config.channel_for_path(record.get("path", ""))
        decisions = record.get("decisions")
        if channel is None or record.get("method", "POST") != "POST" or not decisions:
            continue
        try:
            envelopes = channels.parse(channel.type.value, body_of(record), channel.name)
        except UnparsedUpdate:
            continue
        for envelope, decision in zip(envelopes, decisions, strict=False):  # a short list: the rest unknown
            key = (channel.name, envelope.delivery_id) if envelope.delivery_id else None
            if key is not None and key in seen:
                continue
            if key is not None:
                seen.add(key)
            if envelope.kind is not MessageKind.TEXT or not envelope.text or not decision or not decision.get("agent"):
                continue
            conversation = ConversationKey(channel.name, envelope.chat_id, envelope.thread_id, envelope.sender_id or "")
            explicit_rest = None
            if decision.get("reason") == "explicit":
                switch = parse_explicit(envelope.text, names, channel.bot_username)
                explicit_rest = without_explicit(envelope.text) if switch.kind is ExplicitKind.SWITCH else None
            conversations.setdefault(_conversation_id(conversation), []).append(
                _Message(envelope.text, str(decision["agent"]), str(decision.get("reason")), explicit_rest))
    return [LabelledConversation(cid, _labelled(messages)) for cid, messages in conversations.items()]


def _labelled(messages: list[_Message]) -> tuple[LabelledMessage, ...]:
    out = []
    pending: str | None = None  # the agent an explicit "/agent x" alone chose for the next message
    for message in messages:
        if message.reason in CREDITED:
            out.append(LabelledMessage(message.text, message.agent, Evidence.CREDIT))
        elif message.explicit_rest is not None and message_terms(message.explicit_rest):
            out.append(LabelledMessage(message.explicit_rest, message.agent, Evidence.CREDIT))
        elif message.reason in BACKGROUND_REASONS:
            out.append(LabelledMessage(message.text, message.agent, Evidence.BACKGROUND))
        elif pending is not None and message.agent == pending and message.reason != "explicit":
            out.append(LabelledMessage(message.text, message.agent, Evidence.CREDIT))
        else:
            out.append(LabelledMessage(message.text, message.agent, Evidence.CONTEXT))
        alone = message.explicit_rest is not None and not message_terms(message.explicit_rest)
        pending = message.agent if alone else None
    return tuple(out)


def _conversation_id(key: ConversationKey) -> str:
    thread = f" thread={key.thread_id}" if key.thread_id else ""
    return f"{key.channel} chat={key.chat_id} sender={key.sender_id}{thread}"
