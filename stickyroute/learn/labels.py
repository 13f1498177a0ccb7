"""What `learn` learns from: conversations of messages, each with the agent that should take it.

    LabelledConversation(id, messages=(LabelledMessage(text, agent, evidence), ...))

`agent` is the agent that should take the message (None: the channel default, e.g. CLINC150's
`oos`, or a classifier's "none"). `evidence` says how the message counts:

- CREDIT: the message is about `agent`; its terms count for `agent`.
- BACKGROUND: a message that carries the previous agent without naming a topic (the corpus's
  `general: true` turns: "thanks, bye"), or that belongs to no agent (`oos`); its terms count
  for no agent, against every agent, so terms that mostly appear there get no credit.
- CONTEXT: an unverified message (recorded traffic decided by keywords or stickiness): not
  counted; it only tells the gate check which agent held the route for the next message.

A labelled corpus (`stickyroute.replay.corpus`) converts with `from_corpus`; recorded traffic with
`stickyroute.learn.recorded`.
"""

from __future__ import annotations

import enum
from collections.abc import Collection, Iterable
from dataclasses import dataclass

from stickyroute.replay.corpus import Conversation


class Evidence(enum.Enum):
    """How one labelled message counts (see the module docstring)."""

    CREDIT = "credit"
    BACKGROUND = "background"
    CONTEXT = "context"


@dataclass(frozen=True, slots=True)
class LabelledMessage:
    """One message: its text, the agent that should take it (None: the default), its evidence."""

    text: str
    agent: str | None
    evidence: Evidence


@dataclass(frozen=True, slots=True)
class LabelledConversation:
    """One conversation's messages in order; `id` splits holdouts (stable across runs)."""

    id: str
    messages: tuple[LabelledMessage, ...]


def from_corpus(conversations: Iterable[Conversation], agents: Collection[str]) -> list[LabelledConversation]:
    """Corpus conversations as labelled ones.

    A turn whose gold is one of `agents` is CREDIT for it, unless `general` (BACKGROUND, still
    the gold agent's: it carries the previous agent); any other gold (`oos`, an agent the agents
    file does not list) is BACKGROUND for the default (agent None).
    """
    out = []
    for conv in conversations:
        messages = []
        for turn in conv.turns:
            if turn.gold not in agents:
                messages.append(LabelledMessage(turn.text, None, Evidence.BACKGROUND))
            elif turn.general:
                messages.append(LabelledMessage(turn.text, turn.gold, Evidence.BACKGROUND))
            else:
                messages.append(LabelledMessage(turn.text, turn.gold, Evidence.CREDIT))
        out.append(LabelledConversation(conv.id, tuple(messages)))
    return out


def evidence_counts(conversations: Iterable[LabelledConversation]) -> dict[str, int]:
    """Messages per evidence kind (`credit`, `background`, `context`), for reports."""
    counts = {e.value: 0 for e in Evidence}
    for conv in conversations:
        for message in conv.messages:
            counts[message.evidence.value] += 1
    return counts
