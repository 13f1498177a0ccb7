"""The shared backend while it is up, this process's memory only during a declared outage, and
never a silent split: wrappers around the shared backend that count every operation it did not
serve (`BackendHealth.fell_back`).

    FallbackConversationState   a lease is committed to (or released on) the backend it came from
    FallbackDeliveryLog         keys claimed in memory are completed, failed and settled there
    FallbackBudget              the shared bucket, else a per-process one
    FallbackSwitchBudget        the same for the per-sender explicit-switch buckets

An operation that raises `StateUnavailable` is reported to `BackendHealth`: an error (refused,
reset) declares an outage at once, a slow reply (no answer within `op_timeout_ms`) only when a
probe ping fails too. While the backend is up, a failed operation is never replaced by a memory
one (cause `timeout`):

    claim, settle        DeliveryUnconfirmed: the request answers 503 + Retry-After (a late
                         reply may still have taken the claim: it holds until it expires)
    acquire              RouteUnavailable with the live route this process last saw (a small
                         LRU of `SEEN_ROUTES` routes), decided without writing
    get                  that last-seen route
    commit, complete...  the write is lost (never raised)
    budget, switches     this process's bucket
    find, put, delete    this process's memory (admin and agent-signal paths)
    swap                 False: nothing written (the caller reads again)

During a declared outage (`health.up` False) nothing is sent to the shared backend (except a
lease it holds, given back there) until its ping answers again; each operation is served from
memory (cause `outage`: routes stay in this process, deliveries are at least once), or, with
`[state] when_unavailable = "refuse"`, claims raise DeliveryUnconfirmed (cause `refused`: the
platforms hold the updates). The views (`count`, `scan`, `census`, `size`, `stored_bytes`) read
memory during an outage without being counted.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from dataclasses import replace
from typing import TypeVar

from cachetools import LRUCache

from stickyroute.core.delivery import DecisionMemo, DeliveryKey
from stickyroute.core.route import ConversationKey, Route
from stickyroute.reply import Reply
from stickyroute.state.base import (
    Claim,
    ClaimState,
    ConversationLimits,
    ConversationState,
    DeliveryLog,
    DeliveryUnconfirmed,
    Lease,
    RouteUnavailable,
    StateUnavailable,
)
from stickyroute.state.budget import ClassifierBudget, SwitchBudget
from stickyroute.state.health import BackendHealth

T = TypeVar("T")
SEEN_ROUTES = 10_000
"""Routes this process remembers as it last saw them (LRU), for decisions while the backend's
reply is late."""


async def _shared(health: BackendHealth, operation: str, call: Callable[[], Awaitable[T]]
                  ) -> tuple[bool, T | None]:
    """(True, result) when the backend answered; (False, None) when it failed and is still up
    (counted as `timeout`, the caller answers without it). Raises nothing; when the failure
    declared an outage, (False, None) with `health.up` False."""
    try:
        return True, await call()
    except StateUnavailable as exc:
        health.failed(exc)
        if health.up:
            health.fell_back(operation, "timeout")
        return False, None


async def _either(health: BackendHealth, operation: str | None, shared: Callable[[], Awaitable[T]],
                  local: Callable[[], Awaitable[T]]) -> T:
    """`shared()` while the backend is up and answers, else `local()`, counted under `operation`
    (None: a view, not counted during an outage)."""
    if health.up:
        try:
            return await shared()
        except StateUnavailable as exc:
            health.failed(exc)
            if health.up and operation is not None:
                health.fell_back(operation, "timeout")
                return await local()
    if operation is not None:
        health.fell_back(operation, "outage")
    return await local()


async def _quietly(health: BackendHealth, operation: str, write: Callable[[], Awaitable[None]], *,
                   always: bool = False) -> None:
    """A write to the shared backend that may be lost (never raised, counted); skipped while
    degraded unless `always` (a lease taken on the shared backend is given back there)."""
    if not health.up and not always:
        health.fell_back(operation, "outage")
        return
    try:
        await write()
    except StateUnavailable as exc:
        health.failed(exc)
        health.fell_back(operation, "timeout" if health.up else "outage")


class FallbackConversationState:
    """`ConversationState` on `shared` while `health.up`, else on `local` (see the module docstring)."""

    def __init__(self, shared: ConversationState, local: ConversationState, health: BackendHealth,
                 limits: Mapping[str, ConversationLimits] | None = None) -> None:
        """`limits`: each channel's route TTL, to tell whether a route last seen is still live
        (a channel without: live)."""
        self.shared = shared
        self.local = local
        self.health = health
        self._shared_leases: set[tuple[ConversationKey, int]] = set()
        self._limits = dict(limits or {})
        self._seen: LRUCache[ConversationKey, Route] = LRUCache(SEEN_ROUTES)

    def _saw(self, key: ConversationKey, route: Route | None) -> None:
        if route is None:
            self._seen.pop(key, None)
        else:
            self._seen[key] = route

    def last_seen(self, key: ConversationKey, now: float) -> Route | None:
        """The route of `key` as this process last read or wrote it, if still live at `now`."""
        route = self._seen.get(key)
        limits = self._limits.get(key.channel)
        if route is None or (limits is not None and route.expires_at(limits.ttl_s) <= now):
            return None
        return route

    async def acquire(self, key: ConversationKey, now: float, wait_s: float | None = None) -> Lease:
        """Raises RouteUnavailable (with `last_seen`) when the backend is up but did not answer."""
        if self.health.up:
            try:
                lease = await self.shared.acquire(key, now, wait_s)
            except StateUnavailable as exc:
                self.health.failed(exc)
                if self.health.up:
                    self.health.fell_back("acquire", "timeout")
                    raise RouteUnavailable(str(exc), self.last_seen(key, now)) from exc
            else:
                self._shared_leases.add((key, lease.token))
                self._saw(key, lease.route)
                return lease
        self.health.fell_back("acquire", "outage")
        lease = await self.local.acquire(key, now, wait_s)
        self._saw(key, lease.route)
        return lease

    def _from_shared(self, lease: Lease) -> bool:
        held = (lease.key, lease.token)
        if held in self._shared_leases:
            self._shared_leases.discard(held)
            return True
        return False

    async def commit(self, lease: Lease, now: float, *, store: Route | None = None, forget: bool = False,
                     text: str | None = None) -> None:
        if store is not None or forget:
            self._saw(lease.key, None if forget else store)
        if self._from_shared(lease):
            await _quietly(self.health, "commit",
                           lambda: self.shared.commit(lease, now, store=store, forget=forget, text=text), always=True)
            return
        await self.local.commit(lease, now, store=store, forget=forget, text=text)

    async def release(self, lease: Lease) -> None:
        if self._from_shared(lease):
            await _quietly(self.health, "release", lambda: self.shared.release(lease), always=True)
            return
        await self.local.release(lease)

    async def get(self, key: ConversationKey, now: float) -> Route | None:
        """While the backend is up but late: the route this process last saw (`last_seen`)."""
        if self.health.up:
            answered, route = await _shared(self.health, "get", lambda: self.shared.get(key, now))
            if answered:
                if route is not None:
                    self._saw(key, route)
                return route
            if self.health.up:
                return self.last_seen(key, now)
        self.health.fell_back("get", "outage")
        return await self.local.get(key, now)

    async def put(self, key: ConversationKey, route: Route, now: float) -> None:
        await _either(self.health, "put", lambda: self.shared.put(key, route, now),
                      lambda: self.local.put(key, route, now))

    async def delete(self, key: ConversationKey, now: float) -> None:
        await _either(self.health, "delete", lambda: self.shared.delete(key, now), lambda: self.local.delete(key, now))

    async def find(self, channel: str, digest: str, now: float) -> Route | None:
        return await _either(self.health, "find", lambda: self.shared.find(channel, digest, now),
                             lambda: self.local.find(channel, digest, now))

    async def swap(self, channel: str, digest: str, expected: Route, new: Route | None, now: float) -> bool:
        """False (nothing written) when the backend is up but did not answer."""
        if self.health.up:
            answered, swapped = await _shared(self.health, "swap",
                                              lambda: self.shared.swap(channel, digest, expected, new, now))
            if answered or self.health.up:
                return bool(swapped)
        self.health.fell_back("swap", "outage")
        return await self.local.swap(channel, digest, expected, new, now)

    async def count(self, channel: str, now: float) -> int:
        return await _either(self.health, None, lambda: self.shared.count(channel, now),
                             lambda: self.local.count(channel, now))

    async def scan(self, channel: str, now: float, *, agent: str | None = None,
                   limit: int | None = None) -> list[tuple[str, Route]]:
        return await _either(self.health, None, lambda: self.shared.scan(channel, now, agent=agent, limit=limit),
                             lambda: self.local.scan(channel, now, agent=agent, limit=limit))

    async def census(self, channel: str, now: float) -> dict[str, int]:
        return await _either(self.health, None, lambda: self.shared.census(channel, now),
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
        self._limits = dict(limits)
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
        return replace(claim, local=True)

    def _forget(self, key: DeliveryKey) -> None:
        self._local_keys[key] -= 1
        if self._local_keys[key] <= 0:
            del self._local_keys[key]

    def _unconfirmed(self, operation: str, exc: StateUnavailable | None) -> DeliveryUnconfirmed | None:
        """The error to raise instead of a memory claim (counted), or None: claim in memory."""
        if self.health.up:
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
            await _quietly(self.health, "complete", lambda: self.shared.complete(shared, reply, now, memos))

    async def fail(self, keys: Sequence[DeliveryKey], reply: Reply | None, now: float,
                   memos: Mapping[DeliveryKey, DecisionMemo] | None = None) -> None:
        local, shared = self._split(keys)
        if local:
            await self.local.fail(local, reply, now, memos)
        if shared:
            await _quietly(self.health, "fail", lambda: self.shared.fail(shared, reply, now, memos))

    async def stored_bytes(self, now: float) -> int | None:
        return await _either(self.health, None, lambda: self.shared.stored_bytes(now),
                             lambda: self.local.stored_bytes(now))

    async def size(self, now: float) -> int:
        return await _either(self.health, None, lambda: self.shared.size(now), lambda: self.local.size(now))

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
        return await _either(self.health, "budget", lambda: self.shared.take(channel, now),
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
        return await _either(self.health, "switches", lambda: self.shared.take(channel, sender, rate_per_minute, now),
                             lambda: self.local.take(channel, sender, rate_per_minute, now))

    async def aclose(self) -> None:
        await self.local.aclose()
        await self.shared.aclose()
