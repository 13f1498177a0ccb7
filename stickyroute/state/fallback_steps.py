"""`DeliverySteps` on the shared backend while it is healthy, this process's memory otherwise
(the same rules as `stickyroute.state.fallback`: a step begun on one backend ends on it)."""

from __future__ import annotations

from stickyroute.core.delivery import DecisionMemo, DeliveryKey
from stickyroute.core.route import ConversationKey
from stickyroute.reply import Reply
from stickyroute.state.base import Lease, StateUnavailable
from stickyroute.state.fallback_calls import quietly
from stickyroute.state.fallback_deliveries import FallbackDeliveryLog
from stickyroute.state.health import BackendHealth
from stickyroute.state.steps import Begun, DeliverySteps, Writes

__all__ = ["FallbackDeliverySteps"]


class FallbackDeliverySteps:
    """`DeliverySteps` on `shared` while `health.up`, else on `local`; a step begun in memory
    notes its key with `deliveries` so its completion, failure and waiting stay in memory."""

    def __init__(self, shared: DeliverySteps, local: DeliverySteps, health: BackendHealth,
                 deliveries: FallbackDeliveryLog) -> None:
        self.shared = shared
        self.local = local
        self.health = health
        self.deliveries = deliveries
        self._shared_keys: set[DeliveryKey] = set()

    async def begin(self, key: DeliveryKey, conversation: ConversationKey, now: float, *, hold: bool) -> Begun:
        """Raises DeliveryUnconfirmed as `FallbackDeliveryLog.claim` does (a late reply while the
        backend is up, or an outage with `when_unavailable = "refuse"`)."""
        failure: StateUnavailable | None = None
        if self.health.up:
            try:
                begun = await self.shared.begin(key, conversation, now, hold=hold)
            except StateUnavailable as exc:
                self.health.failed(exc)
                failure = exc
            else:
                if begun.lease is not None:
                    self._shared_keys.add(key)
                return begun
        refused = self.deliveries._unconfirmed("claim", failure)
        if refused is not None:
            raise refused from failure
        begun = await self.local.begin(key, conversation, now, hold=hold)
        if hold:  # the conversation is held in memory too (counted as an acquire would be)
            self.health.fell_back("acquire", "outage")
        return Begun(self.deliveries._note(key, begun.claim), begun.lease)

    async def note(self, key: DeliveryKey, lease: Lease, writes: Writes, memo: DecisionMemo, now: float) -> None:
        if key in self._shared_keys:
            self._shared_keys.discard(key)
            await quietly(self.health, "note", lambda: self.shared.note(key, lease, writes, memo, now), always=True)
            return
        await self.local.note(key, lease, writes, memo, now)

    async def finish(self, key: DeliveryKey, lease: Lease, writes: Writes, reply: Reply | None,
                     memo: DecisionMemo | None, now: float, *, keep: bool = False) -> None:
        if key in self._shared_keys:  # `quietly(..., always=True)` inline: once per routed update
            self._shared_keys.discard(key)
            try:
                await self.shared.finish(key, lease, writes, reply, memo, now, keep=keep)
            except StateUnavailable as exc:
                self.health.failed(exc)
                self.health.fell_back("finish", "timeout" if self.health.up else "outage")
            return
        if not keep:
            self.deliveries._forget(key)
        await self.local.finish(key, lease, writes, reply, memo, now, keep=keep)
