"""`DeliverySteps`: one single-message update of a known conversation in two state steps, and
its values (`Writes`, `Begun`); the protocols it combines are in `stickyroute.state.base`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from stickyroute.core.delivery import DecisionMemo, DeliveryKey
from stickyroute.core.route import ConversationKey, Route
from stickyroute.reply import Reply
from stickyroute.state.base import Claim, Lease

__all__ = ["Begun", "DeliverySteps", "Writes"]


@dataclass(frozen=True, slots=True)
class Writes:
    """What a decision writes to its conversation (`ConversationState.commit`'s arguments):
    `store` a route, or `forget` it, and `text` among the recent texts; neither: unchanged."""

    store: Route | None = None
    forget: bool = False
    text: str | None = None


@dataclass(frozen=True, slots=True)
class Begun:
    """What `DeliverySteps.begin` found: the delivery's claim and, when it is FIRST without a
    first decision and the conversation was free, the lease that holds the conversation."""

    claim: Claim
    lease: Lease | None = None


class DeliverySteps(Protocol):
    """One single-message update of a known conversation in two steps (one round trip each on
    Redis: the delivery is kept under the conversation's hash tag, in the same slot):

        begin   claim the delivery (as `DeliveryLog.claim`) and hold the conversation
        finish  after the forward: commit the decision's writes and complete (a 2xx) or fail it

    `note` commits before the forward instead, with the first decision kept on the delivery:
    for a decision a retry could not make again alike (the classifier's, a switch's). The
    conversation's lease is renewed with the claim (`DeliveryLog.renew`) while the forward runs.
    The keys are then completed, failed, settled and renewed through the `DeliveryLog`.
    """

    async def begin(self, key: DeliveryKey, conversation: ConversationKey, now: float, *, hold: bool) -> Begun:
        """Claim `key`, placed beside `conversation`; when FIRST without a memo and `hold`, also
        take the conversation if no decision holds it (else `lease` is None: acquire it the usual
        way)."""
        ...

    async def note(self, key: DeliveryKey, lease: Lease, writes: Writes, memo: DecisionMemo, now: float) -> None:
        """Commit `writes` and release the conversation, keeping `memo` as `key`'s first decision."""
        ...

    async def finish(self, key: DeliveryKey, lease: Lease, writes: Writes, reply: Reply | None,
                     memo: DecisionMemo | None, now: float, *, keep: bool = False) -> None:
        """Commit `writes`, release the conversation and complete `key` with `reply` (a 2xx) or
        fail it (anything else; None: died without an answer), `memo` its first decision (None:
        cut short before deciding);
        `keep`: leave the claim in flight (a late answer still runs: complete or fail it later)."""
        ...
