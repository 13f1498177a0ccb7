"""The shared backend while it is up, this process's memory only during a declared outage, and
never a silent split: wrappers around the shared backend that count every operation it did not
serve (`BackendHealth.fell_back`).

    FallbackConversationState   a lease is committed to (or released on) the backend it came from
    FallbackDeliveryLog         keys claimed in memory are completed, failed and settled there
                                (fallback_deliveries.py; the calls themselves: fallback_calls.py)
    FallbackDeliverySteps       (fallback_steps.py) a step begun in memory is noted and finished there
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

from collections.abc import Collection, Mapping

from cachetools import LRUCache

from stickyroute.core.route import ConversationKey, Route
from stickyroute.state.base import ConversationLimits, ConversationState, Lease, RouteUnavailable, StateUnavailable
from stickyroute.state.budget import ClassifierBudget, SwitchBudget
from stickyroute.state.fallback_calls import answered, either, quietly
from stickyroute.state.fallback_deliveries import FallbackDeliveryLog
from stickyroute.state.health import BackendHealth

__all__ = ["SEEN_ROUTES", "FallbackBudget", "FallbackConversationState", "FallbackDeliveryLog", "FallbackSwitchBudget"]

SEEN_ROUTES = 10_000
"""Routes this process remembers as it last saw them (LRU), for decisions while the backend's
reply is late."""


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
            await quietly(self.health, "commit",
                           lambda: self.shared.commit(lease, now, store=store, forget=forget, text=text), always=True)
            return
        await self.local.commit(lease, now, store=store, forget=forget, text=text)

    async def release(self, lease: Lease) -> None:
        if self._from_shared(lease):
            await quietly(self.health, "release", lambda: self.shared.release(lease), always=True)
            return
        await self.local.release(lease)

    async def get(self, key: ConversationKey, now: float) -> Route | None:
        """While the backend is up but late: the route this process last saw (`last_seen`)."""
        if self.health.up:
            ok, route = await answered(self.health, "get", lambda: self.shared.get(key, now))
            if ok:
                if route is not None:
                    self._saw(key, route)
                return route
            if self.health.up:
                return self.last_seen(key, now)
        self.health.fell_back("get", "outage")
        return await self.local.get(key, now)

    async def put(self, key: ConversationKey, route: Route, now: float) -> None:
        await either(self.health, "put", lambda: self.shared.put(key, route, now),
                      lambda: self.local.put(key, route, now))

    async def delete(self, key: ConversationKey, now: float) -> None:
        await either(self.health, "delete", lambda: self.shared.delete(key, now), lambda: self.local.delete(key, now))

    async def find(self, channel: str, digest: str, now: float) -> Route | None:
        return await either(self.health, "find", lambda: self.shared.find(channel, digest, now),
                             lambda: self.local.find(channel, digest, now))

    async def swap(self, channel: str, digest: str, expected: Route, new: Route | None, now: float) -> bool:
        """False (nothing written) when the backend is up but did not answer."""
        if self.health.up:
            ok, swapped = await answered(self.health, "swap",
                                         lambda: self.shared.swap(channel, digest, expected, new, now))
            if ok or self.health.up:
                return bool(swapped)
        self.health.fell_back("swap", "outage")
        return await self.local.swap(channel, digest, expected, new, now)

    async def count(self, channel: str, now: float) -> int:
        return await either(self.health, None, lambda: self.shared.count(channel, now),
                             lambda: self.local.count(channel, now))

    async def scan(self, channel: str, now: float, *, agent: str | None = None,
                   limit: int | None = None) -> list[tuple[str, Route]]:
        return await either(self.health, None, lambda: self.shared.scan(channel, now, agent=agent, limit=limit),
                             lambda: self.local.scan(channel, now, agent=agent, limit=limit))

    async def census(self, channel: str, now: float) -> dict[str, int]:
        return await either(self.health, None, lambda: self.shared.census(channel, now),
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


class FallbackBudget:
    """`ClassifierBudget` on `shared` while `health.up`, else on `local`."""

    def __init__(self, shared: ClassifierBudget, local: ClassifierBudget, health: BackendHealth) -> None:
        self.shared = shared
        self.local = local
        self.health = health

    async def take(self, channel: str, now: float) -> bool:
        return await either(self.health, "budget", lambda: self.shared.take(channel, now),
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
        return await either(self.health, "switches", lambda: self.shared.take(channel, sender, rate_per_minute, now),
                             lambda: self.local.take(channel, sender, rate_per_minute, now))

    async def aclose(self) -> None:
        await self.local.aclose()
        await self.shared.aclose()
