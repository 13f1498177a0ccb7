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
    read                 that last-seen route (the catalogue's read of one route)
    commit, complete...  the write is lost (never raised)
    budget, switches     this process's bucket
    swap                 False: nothing written (the caller reads again)

During a declared outage (`health.up` False) nothing is sent to the shared backend (except a
lease it holds, given back there) until its ping answers again; each operation is served from
memory (cause `outage`: routes stay in this process, deliveries are at least once), or, with
`[state] when_unavailable = "refuse"`, claims raise DeliveryUnconfirmed (cause `refused`: the
platforms hold the updates). The catalogue's listing (`routes`, under the views `count`, `scan`,
`census`) and the delivery log's `size` and `stored_bytes` read memory during an outage without
being counted.
"""

from __future__ import annotations

from collections.abc import Mapping

from cachetools import LRUCache

from stickyroute.core.route import ConversationKey, Route
from stickyroute.state.base import ConversationLimits, Lease, RouteUnavailable, StateUnavailable
from stickyroute.state.budget import ClassifierBudget, SwitchBudget
from stickyroute.state.catalogue import RouteState
from stickyroute.state.fallback_calls import answered, either, quietly
from stickyroute.state.fallback_deliveries import FallbackDeliveryLog
from stickyroute.state.health import BackendHealth

__all__ = ["SEEN_ROUTES", "FallbackBudget", "FallbackConversationState", "FallbackDeliveryLog", "FallbackSwitchBudget"]

SEEN_ROUTES = 10_000
"""Routes this process remembers as it last saw them (LRU), for decisions while the backend's
reply is late."""


class FallbackConversationState:
    """`ConversationState` and `RouteCatalogue` on `shared` while `health.up`, else on `local`
    (see the module docstring)."""

    def __init__(self, shared: RouteState, local: RouteState, health: BackendHealth,
                 limits: Mapping[str, ConversationLimits] | None = None) -> None:
        """`limits`: each channel's route TTL, to tell whether a route last seen is still live
        (a channel without: live)."""
        self.shared = shared
        self.local = local
        self.health = health
        self._shared_leases: set[tuple[ConversationKey, int]] = set()
        self._limits = dict(limits or {})
        self._seen: LRUCache[tuple[str, str], Route] = LRUCache(SEEN_ROUTES)
        """Routes last seen by (channel, conversation digest)."""

    def _saw(self, key: ConversationKey, route: Route | None) -> None:
        if route is None:
            self._seen.pop((key.channel, key.digest()), None)
        else:
            self._seen[(key.channel, key.digest())] = route

    def last_seen(self, key: ConversationKey, now: float) -> Route | None:
        """The route of `key` as this process last read or wrote it, if still live at `now`."""
        return self._last_seen(key.channel, key.digest(), now)

    def _last_seen(self, channel: str, digest: str, now: float) -> Route | None:
        route = self._seen.get((channel, digest))
        limits = self._limits.get(channel)
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

    async def routes(self, channel: str, now: float) -> list[tuple[str, Route]]:
        return await either(self.health, None, lambda: self.shared.routes(channel, now),
                             lambda: self.local.routes(channel, now))

    async def size(self, channel: str, now: float) -> int:
        return await either(self.health, None, lambda: self.shared.size(channel, now),
                             lambda: self.local.size(channel, now))

    async def read(self, channel: str, digest: str, now: float) -> Route | None:
        """While the backend is up but late: the route this process last saw (`last_seen`)."""
        if self.health.up:
            ok, route = await answered(self.health, "read", lambda: self.shared.read(channel, digest, now))
            if ok:
                if route is not None:
                    self._seen[(channel, digest)] = route
                return route
            if self.health.up:
                return self._last_seen(channel, digest, now)
        self.health.fell_back("read", "outage")
        return await self.local.read(channel, digest, now)

    async def swap(self, channel: str, digest: str, expected: Route, new: Route | None, now: float, *,
                   while_held: bool = False) -> bool:
        """False (nothing written) when the backend is up but did not answer."""
        if self.health.up:
            ok, swapped = await answered(self.health, "swap", lambda: self.shared.swap(
                channel, digest, expected, new, now, while_held=while_held))
            if ok or self.health.up:
                return bool(swapped)
        self.health.fell_back("swap", "outage")
        return await self.local.swap(channel, digest, expected, new, now, while_held=while_held)

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
