"""`DeliveryLog` on the shared backend while it is up, never a memory claim then (see
`stickyroute.state.fallback`): keys claimed in memory during an outage are completed, failed and
settled there; a claim the backend did not confirm raises `DeliveryUnconfirmed`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import replace

from stickyroute.core.delivery import DecisionMemo, DeliveryKey
from stickyroute.reply import Reply
from stickyroute.state.base import (
    Claim,
    ClaimState,
    DeliveryLog,
    DeliveryUnconfirmed,
    Lease,
    SlotUnavailable,
    StateUnavailable,
)
from stickyroute.state.fallback_calls import either, quietly
from stickyroute.state.health import BackendHealth, cause_of


def _node_down(exc: StateUnavailable | None) -> bool:
    """One cluster node failed (not late): its slots are in an outage while the rest answer."""
    return isinstance(exc, SlotUnavailable) and cause_of(exc) != "timeout"


class FallbackDeliveryLog:
    """`DeliveryLog` on `shared` while `health.up`, else on `local` (see the module docstring)."""

    def __init__(self, shared: DeliveryLog, local: DeliveryLog, health: BackendHealth) -> None:
        self.shared = shared
        self.local = local
        self.health = health
        self._local_keys: Counter[DeliveryKey] = Counter()
        """Keys whose claim (held or waited for) lives in `local`, with how many callers use it."""

    def _note(self, key: DeliveryKey, claim: Claim) -> Claim:
        if claim.state in (ClaimState.FIRST, ClaimState.IN_FLIGHT):
            self._local_keys[key] += 1
        return replace(claim, local=True)

    def _forget(self, key: DeliveryKey) -> None:
        self._local_keys[key] -= 1
        if self._local_keys[key] <= 0:
            del self._local_keys[key]

    def _unconfirmed(self, operation: str, exc: StateUnavailable | None) -> DeliveryUnconfirmed | None:
        """The error to raise instead of a memory claim (counted), or None: claim in memory.

        A late reply while the backend is up is refused (503); an outage, of the whole backend
        or of one Redis Cluster node's slots (`SlotUnavailable` not caused by a timeout: the node
        refused or dropped the connection), follows `when_unavailable`."""
        if self.health.up and not _node_down(exc):
            self.health.fell_back(operation, "timeout")
            return DeliveryUnconfirmed(f"{exc}: the claim was not confirmed")
        if self.health.refuse:
            self.health.fell_back(operation, "refused")
            return DeliveryUnconfirmed(f"state backend {self.health.backend} unavailable (when_unavailable = refuse)")
        self.health.fell_back(operation, "outage")
        return None

    async def claim(self, keys: Sequence[DeliveryKey], now: float) -> list[Claim]:
        """Raises DeliveryUnconfirmed instead of claiming in memory while the backend is up (its
        reply was late) or in an outage with `when_unavailable = "refuse"`."""
        failure: StateUnavailable | None = None
        if self.health.up:
            try:
                return await self.shared.claim(keys, now)
            except StateUnavailable as exc:
                self.health.failed(exc)
                failure = exc
        refused = self._unconfirmed("claim", failure)
        if refused is not None:
            raise refused from failure
        return [self._note(k, c) for k, c in zip(keys, await self.local.claim(keys, now), strict=True)]

    async def settle(self, key: DeliveryKey, now: float, timeout_s: float) -> Claim:
        """Raises DeliveryUnconfirmed as `claim` does."""
        if key in self._local_keys:
            self._forget(key)
        else:
            failure: StateUnavailable | None = None
            if self.health.up:
                try:
                    return await self.shared.settle(key, now, timeout_s)
                except StateUnavailable as exc:
                    self.health.failed(exc)
                    failure = exc
            refused = self._unconfirmed("settle", failure)
            if refused is not None:
                raise refused from failure
        claim = await self.local.settle(key, now, timeout_s)
        if claim.state is ClaimState.FIRST:
            self._local_keys[key] += 1
        return replace(claim, local=True)

    def _split(self, keys: Sequence[DeliveryKey]) -> tuple[list[DeliveryKey], list[DeliveryKey]]:
        local, shared = [], []
        for key in keys:
            if key in self._local_keys:
                self._forget(key)
                local.append(key)
            else:
                shared.append(key)
        return local, shared

    async def complete(self, keys: Sequence[DeliveryKey], reply: Reply, now: float,
                       memos: Mapping[DeliveryKey, DecisionMemo] | None = None) -> None:
        local, shared = self._split(keys)
        if local:
            await self.local.complete(local, reply, now, memos)
        if shared:
            await quietly(self.health, "complete", lambda: self.shared.complete(shared, reply, now, memos))

    async def fail(self, keys: Sequence[DeliveryKey], reply: Reply | None, now: float,
                   memos: Mapping[DeliveryKey, DecisionMemo] | None = None) -> None:
        local, shared = self._split(keys)
        if local:
            await self.local.fail(local, reply, now, memos)
        if shared:
            await quietly(self.health, "fail", lambda: self.shared.fail(shared, reply, now, memos))

    async def note(self, memos: Mapping[DeliveryKey, DecisionMemo], now: float) -> None:
        local = {k: m for k, m in memos.items() if k in self._local_keys}
        shared = {k: m for k, m in memos.items() if k not in self._local_keys}
        if local:
            await self.local.note(local, now)
        if shared:
            await quietly(self.health, "note", lambda: self.shared.note(shared, now))

    async def renew(self, keys: Sequence[DeliveryKey], now: float, lease: Lease | None = None) -> None:
        shared = [key for key in keys if key not in self._local_keys]
        if shared:
            await quietly(self.health, "renew", lambda: self.shared.renew(shared, now, lease))

    async def stored_bytes(self, now: float) -> int | None:
        return await either(self.health, None, lambda: self.shared.stored_bytes(now),
                             lambda: self.local.stored_bytes(now))

    async def size(self, now: float) -> int:
        return await either(self.health, None, lambda: self.shared.size(now), lambda: self.local.size(now))

    async def aclose(self) -> None:
        await self.local.aclose()
        await self.shared.aclose()
