"""Never a 5xx because of the shared backend: wrappers that use it while it is healthy and this
process's memory backend while it is not.

    FallbackConversationState   a lease is committed to (or released on) the backend it came from
    FallbackDeliveryLog         keys claimed in memory are completed, failed and settled there
    FallbackDeliverySteps       (fallback_steps.py) a step begun in memory is noted and finished there
    FallbackBudget              the shared bucket, else a per-process one
    FallbackSwitchBudget        the same for the per-sender explicit-switch buckets

An operation that raises `StateUnavailable` (an error, or slower than `op_timeout_ms`) is served
from memory and reported to `BackendHealth`, which degrades (one log line) on an error, or when
a slow operation's probe ping fails too; while degraded nothing is sent to the shared backend
(except a lease it holds, given back there) until its ping answers again. What was written to
memory during the outage stays in this process (routes fall back to their defaults on the other
replicas, deliveries are at least once: a redelivery may be forwarded again). A write to the
shared backend that fails after its read succeeded (commit, complete) is lost the same way,
never raised.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from typing import TypeVar

from stickyroute.core.delivery import DecisionMemo, DeliveryKey
from stickyroute.core.route import ConversationKey, Route
from stickyroute.reply import Reply
from stickyroute.state.base import (
    Claim,
    ClaimState,
    ConversationLimits,
    ConversationState,
    DeliveryLog,
    Lease,
    StateUnavailable,
)
from stickyroute.state.budget import ClassifierBudget, SwitchBudget
from stickyroute.state.health import BackendHealth

T = TypeVar("T")


async def _either(health: BackendHealth, shared: Callable[[], Awaitable[T]], local: Callable[[], Awaitable[T]]) -> T:
    """`shared()` while the backend is up and answers, else `local()`."""
    if health.up:
        try:
            result = await shared()
        except StateUnavailable as exc:
            health.failed(exc)
        else:
            return result
    return await local()


async def _quietly(health: BackendHealth, write: Callable[[], Awaitable[None]], *, always: bool = False) -> None:
    """A write to the shared backend that may be lost (never raised); skipped while degraded
    unless `always` (a lease taken on the shared backend is given back there)."""
    if not health.up and not always:
        return
    try:
        await write()
    except StateUnavailable as exc:
        health.failed(exc)


class FallbackConversationState:
    """`ConversationState` on `shared` while `health.up`, else on `local` (see the module docstring)."""

    def __init__(self, shared: ConversationState, local: ConversationState, health: BackendHealth) -> None:
        self.shared = shared
        self.local = local
        self.health = health
        self._shared_leases: set[tuple[ConversationKey, int]] = set()

    async def acquire(self, key: ConversationKey, now: float, wait_s: float | None = None) -> Lease:
        if self.health.up:
            try:
                lease = await self.shared.acquire(key, now, wait_s)
            except StateUnavailable as exc:
                self.health.failed(exc)
            else:
                self._shared_leases.add((key, lease.token))
                return lease
        return await self.local.acquire(key, now, wait_s)

    def _from_shared(self, lease: Lease) -> bool:
        held = (lease.key, lease.token)
        if held in self._shared_leases:
            self._shared_leases.discard(held)
            return True
        return False

    async def commit(self, lease: Lease, now: float, *, store: Route | None = None, forget: bool = False,
                     text: str | None = None) -> None:
        if self._from_shared(lease):
            await _quietly(self.health, lambda: self.shared.commit(lease, now, store=store, forget=forget, text=text),
                           always=True)
            return
        await self.local.commit(lease, now, store=store, forget=forget, text=text)

    async def release(self, lease: Lease) -> None:
        if self._from_shared(lease):
            await _quietly(self.health, lambda: self.shared.release(lease), always=True)
            return
        await self.local.release(lease)

    async def get(self, key: ConversationKey, now: float) -> Route | None:
        return await _either(self.health, lambda: self.shared.get(key, now), lambda: self.local.get(key, now))

    async def put(self, key: ConversationKey, route: Route, now: float) -> None:
        await _either(self.health, lambda: self.shared.put(key, route, now), lambda: self.local.put(key, route, now))

    async def delete(self, key: ConversationKey, now: float) -> None:
        await _either(self.health, lambda: self.shared.delete(key, now), lambda: self.local.delete(key, now))

    async def find(self, channel: str, digest: str, now: float) -> Route | None:
        return await _either(self.health, lambda: self.shared.find(channel, digest, now),
                             lambda: self.local.find(channel, digest, now))

    async def swap(self, channel: str, digest: str, expected: Route, new: Route | None, now: float) -> bool:
        return await _either(self.health, lambda: self.shared.swap(channel, digest, expected, new, now),
                             lambda: self.local.swap(channel, digest, expected, new, now))

    async def count(self, channel: str, now: float) -> int:
        return await _either(self.health, lambda: self.shared.count(channel, now),
                             lambda: self.local.count(channel, now))

    async def scan(self, channel: str, now: float, *, agent: str | None = None,
                   limit: int | None = None) -> list[tuple[str, Route]]:
        return await _either(self.health, lambda: self.shared.scan(channel, now, agent=agent, limit=limit),
                             lambda: self.local.scan(channel, now, agent=agent, limit=limit))

    async def census(self, channel: str, now: float) -> dict[str, int]:
        return await _either(self.health, lambda: self.shared.census(channel, now),
                             lambda: self.local.census(channel, now))

    async def prune(self, channel: str, keep: Collection[str], now: float) -> int:
        """Both: routes written to memory during an outage go to removed agents too."""
        dropped = await self.local.prune(channel, keep, now)
        if self.health.up:
            try:
                dropped += await self.shared.prune(channel, keep, now)
            except StateUnavailable as exc:
                self.health.failed(exc)
        return dropped

    def configure(self, limits: Mapping[str, ConversationLimits], recent_messages: int) -> None:
        self.shared.configure(limits, recent_messages)
        self.local.configure(limits, recent_messages)

    async def aclose(self) -> None:
        await self.local.aclose()
        await self.shared.aclose()


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
        return claim

    def _forget(self, key: DeliveryKey) -> None:
        self._local_keys[key] -= 1
        if self._local_keys[key] <= 0:
            del self._local_keys[key]

    async def claim(self, keys: Sequence[DeliveryKey], now: float) -> list[Claim]:
        if self.health.up:
            try:
                claims = await self.shared.claim(keys, now)
            except StateUnavailable as exc:
                self.health.failed(exc)
            else:
                return claims
        return [self._note(k, c) for k, c in zip(keys, await self.local.claim(keys, now), strict=True)]

    async def settle(self, key: DeliveryKey, now: float, timeout_s: float) -> Claim:
        if key in self._local_keys:
            self._forget(key)
        elif self.health.up:
            try:
                settled = await self.shared.settle(key, now, timeout_s)
            except StateUnavailable as exc:
                self.health.failed(exc)
            else:
                return settled
        claim = await self.local.settle(key, now, timeout_s)
        if claim.state is ClaimState.FIRST:
            self._local_keys[key] += 1
        return claim

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
            await _quietly(self.health, lambda: self.shared.complete(shared, reply, now, memos))

    async def fail(self, keys: Sequence[DeliveryKey], reply: Reply | None, now: float,
                   memos: Mapping[DeliveryKey, DecisionMemo] | None = None) -> None:
        local, shared = self._split(keys)
        if local:
            await self.local.fail(local, reply, now, memos)
        if shared:
            await _quietly(self.health, lambda: self.shared.fail(shared, reply, now, memos))

    async def note(self, memos: Mapping[DeliveryKey, DecisionMemo], now: float) -> None:
        local = {k: m for k, m in memos.items() if k in self._local_keys}
        shared = {k: m for k, m in memos.items() if k not in self._local_keys}
        if local:
            await self.local.note(local, now)
        if shared:
            await _quietly(self.health, lambda: self.shared.note(shared, now))

    async def renew(self, keys: Sequence[DeliveryKey], now: float, lease: Lease | None = None) -> None:
        shared = [key for key in keys if key not in self._local_keys]
        if shared:
            await _quietly(self.health, lambda: self.shared.renew(shared, now, lease))

    async def stored_bytes(self, now: float) -> int | None:
        return await _either(self.health, lambda: self.shared.stored_bytes(now), lambda: self.local.stored_bytes(now))

    async def size(self, now: float) -> int:
        return await _either(self.health, lambda: self.shared.size(now), lambda: self.local.size(now))

    async def aclose(self) -> None:
        await self.local.aclose()
        await self.shared.aclose()


class FallbackBudget:
    """`ClassifierBudget` on `shared` while `health.up`, else on `local`."""

    def __init__(self, shared: ClassifierBudget, local: ClassifierBudget, health: BackendHealth) -> None:
        self.shared = shared
        self.local = local
        self.health = health

    async def take(self, channel: str, now: float) -> bool:
        return await _either(self.health, lambda: self.shared.take(channel, now),
                             lambda: self.local.take(channel, now))

    async def aclose(self) -> None:
        await self.local.aclose()
        await self.shared.aclose()


class FallbackSwitchBudget:
    """`SwitchBudget` on `shared` while `health.up`, else on `local`."""

    def __init__(self, shared: SwitchBudget, local: SwitchBudget, health: BackendHealth) -> None:
        self.shared = shared
        self.local = local
        self.health = health

    async def take(self, channel: str, sender: str, rate_per_minute: float, now: float) -> bool:
        return await _either(self.health, lambda: self.shared.take(channel, sender, rate_per_minute, now),
                             lambda: self.local.take(channel, sender, rate_per_minute, now))

    async def aclose(self) -> None:
        await self.local.aclose()
        await self.shared.aclose()
