"""What one request has decided so far: its items, their replies, its decisions (for the
accounting and the recorder); and what a group of items is forwarded with (`merged`,
`deliveries_of`, `memos_of`)."""

from __future__ import annotations

from collections.abc import Sequence

from stickyroute.core.delivery import DecisionMemo, DeliveryKey
from stickyroute.observe import Entry
from stickyroute.reply import Reply
from stickyroute.routing.engine import Decision
from stickyroute.routing.envelope import Envelope

__all__ = ["Item", "Pending", "deliveries_of", "memos_of", "merged"]

Item = tuple[Envelope, Decision, DeliveryKey]
"""One routed item: its envelope, its decision, its delivery key."""


class Pending:
    """What one request has decided so far, for its accounting and the recorder."""

    __slots__ = ("decisions", "items", "outcomes", "state", "verdict")

    def __init__(self) -> None:
        self.verdict: Decision | None = None
        """The decision of the request as a whole (handshake, 401, non-POST, unparsed, redelivery)."""
        self.items: list[Item] = []
        """Each routed item, as soon as it is decided."""
        self.outcomes: dict[DeliveryKey, Reply] = {}
        """The reply each routed item's part got."""
        self.decisions: list[Decision | None] | None = None
        """Each envelope's decision in body order, for the recorder (None: not authenticated)."""
        self.state: str | None = None
        """"memory" when its deliveries were claimed in per-process memory (a shared-state outage)."""

    def entries(self, status: int) -> list[Entry]:
        if self.verdict is not None:
            return [(None, self.verdict, status)]
        outcomes = self.outcomes
        return [(envelope, decision, outcomes[key].status if key in outcomes else status)
                for envelope, decision, key in self.items]


def merged(agent: str, group: list[Item]) -> Decision:
    """The decision a group of items is forwarded under: their reasons joined; the conversation
    (for agent signals) only when the group is one item."""
    reasons = ",".join(dict.fromkeys(d.reason for _e, d, _k in group))
    return Decision(agent, reasons, conversation=group[0][1].conversation if len(group) == 1 else None)


def deliveries_of(group: list[Item], attempts: dict[DeliveryKey, int]) -> list[tuple[str, str, int]]:
    """(channel, delivery id, attempt) of each distinct delivery of `group`, in body order."""
    keys = dict.fromkeys(key for _e, _d, key in group)
    return [(channel, delivery, attempts.get((channel, delivery), 1)) for channel, delivery in keys]


def memos_of(keys: Sequence[DeliveryKey], memos: dict[DeliveryKey, DecisionMemo]) -> dict[DeliveryKey, DecisionMemo]:
    """The first decisions of `keys` that `memos` holds."""
    return {k: memos[k] for k in keys if k in memos}
