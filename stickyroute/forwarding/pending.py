"""What one request has decided so far: its items, their replies, its decisions (for the
accounting and the recorder)."""

from __future__ import annotations

from stickyroute.core.delivery import DeliveryKey
from stickyroute.observe import Entry
from stickyroute.reply import Reply
from stickyroute.routing.engine import Decision
from stickyroute.routing.envelope import Envelope

__all__ = ["Item", "Pending"]

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
