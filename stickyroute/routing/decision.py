"""The values Layer 2 returns: a `Decision`, or what the shell must do first (`NeedsClassification`,
`NeedsPermit`), and the conversation a decision belongs to (`Conversation`, for agent signals)."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass

from stickyroute.classifier.base import Classification
from stickyroute.core.route import ConversationKey, Route

DETOUR = "detour"
"""Reason: keywords or the classifier chose a non-sticky agent; it answers, the route stays."""
HELD = "held"
"""Reason: a human desk holds the conversation; nothing but the user's explicit switch moves it."""
RELEASED = "released"
"""Reason of the log line of an agent's `done`: the route was released (or handed on)."""
STATE_UNAVAILABLE = "state_unavailable"
"""Reason: the shared state did not answer in time (the last route seen, or the default; or a
503 for a delivery it did not confirm)."""


@dataclass(frozen=True, slots=True)
class Conversation:
    """The conversation a Layer-2 decision belongs to and the version of its route after it
    (`Route.chosen_at`, None when it has no route): what an agent's signal refers to (issue #12)."""

    key: ConversationKey
    version: float | None


@dataclass(frozen=True, slots=True)
class Decision:
    """Where one message goes and what it changes.

    `store` is the route to write (None: leave the store as it is); `forget` drops the route;
    `scores` are the raw keyword scores when the message was scored; `list_agents` asks the
    shell to answer a Telegram `/agent` itself instead of forwarding.
    """

    agent: str
    reason: str
    store: Route | None = None
    forget: bool = False
    scores: Mapping[str, int] | None = None
    list_agents: bool = False
    classification: Classification | None = None
    switched: bool = False
    """The conversation moved to another agent (a live route switched, or an explicit switch or
    `/agent auto` away from its route or the default)."""
    conversation: Conversation | None = None
    """Set by the router on Layer-2 decisions (None: Layer 1, no sender, a replayed memo)."""

    def about(self, conversation: Conversation | None) -> Decision:
        """This decision with `conversation` set (what `dataclasses.replace` gives, built directly:
        the router does it once per Layer-2 decision)."""
        return Decision(self.agent, self.reason, self.store, self.forget, self.scores, self.list_agents,
                        self.classification, self.switched, conversation)


class Purpose(enum.Enum):
    """Why the engine asks the classifier."""

    FIRST = "first"            # first message of a session (no live route)
    RECLASSIFY = "reclassify"  # sticky_ttl: the route's TTL since classification has passed
    CONFIRM = "confirm"        # sticky_heuristic: the divergence counter reached its count
    HINT = "hint"              # auto_route_agent_hints = confirm: an agent said "not mine"


@dataclass(frozen=True, slots=True)
class NeedsClassification:
    """The engine needs the classifier's answer on `text` before deciding.

    `route` is the current live route (None for FIRST) with the divergence counter already
    updated; `candidate` is the agent the keywords (or an agent's hint) pointed to (CONFIRM, HINT);
    `hinted` when an agent's hint counted toward this divergence (a switch is reason `agent_hint`);
    `detour_route` is the route to keep when the answer is a non-sticky agent (a detour: the
    divergence counter as it was before this message; None: `route`).
    """

    purpose: Purpose
    text: str
    current: str | None
    route: Route | None
    scores: Mapping[str, int]
    candidate: str | None = None
    hinted: bool = False
    detour_route: Route | None = None


@dataclass(frozen=True, slots=True)
class NeedsPermit:
    """An explicit switch: `granted` when the sender may still switch (one of its
    `explicit_switches_per_minute` spent), else `refused` (stay, reason `explicit_limited`)."""

    granted: Decision
    refused: Decision
