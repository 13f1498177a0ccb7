"""A state backend as the contract tests drive it: its two faces (the per-message step and the
route catalogue), the views written once over it (`stickyroute.state.views`), and the writes only
tests need, done the product's way.

    routes = RoutesUnderTest(backend)
    await routes.put(key, route, now)       a decision that stores `route` (acquire + commit)
    await routes.delete(key, now)           a decision that forgets the route (acquire + commit)
    await routes.get(key, now)              RouteViews.route_of
    await routes.find(channel, digest, now) RouteCatalogue.read
    await routes.count / census / scan / prune(...)   RouteViews
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

from stickyroute.core.route import ConversationKey, Route
from stickyroute.state.base import ConversationLimits, Lease
from stickyroute.state.catalogue import RouteState
from stickyroute.state.views import RouteViews


class RoutesUnderTest:
    """`backend` (memory, Redis or the fallback around Redis) with its views."""

    def __init__(self, backend: RouteState, views: RouteViews | None = None) -> None:
        self.backend = backend
        self.views = views if views is not None else RouteViews(backend)

    # the per-message step
    async def acquire(self, key: ConversationKey, now: float, wait_s: float | None = None) -> Lease:
        return await self.backend.acquire(key, now, wait_s)

    async def commit(self, lease: Lease, now: float, *, store: Route | None = None, forget: bool = False,
                     text: str | None = None) -> None:
        await self.backend.commit(lease, now, store=store, forget=forget, text=text)

    async def release(self, lease: Lease) -> None:
        await self.backend.release(lease)

    def configure(self, limits: Mapping[str, ConversationLimits], recent_messages: int) -> None:
        self.backend.configure(limits, recent_messages)

    async def aclose(self) -> None:
        await self.backend.aclose()

    # the catalogue
    async def routes(self, channel: str, now: float) -> list[tuple[str, Route]]:
        return await self.backend.routes(channel, now)

    async def size(self, channel: str, now: float) -> int:
        return await self.backend.size(channel, now)

    async def read(self, channel: str, digest: str, now: float) -> Route | None:
        return await self.backend.read(channel, digest, now)

    async def swap(self, channel: str, digest: str, expected: Route, new: Route | None, now: float, *,
                   while_held: bool = False) -> bool:
        return await self.backend.swap(channel, digest, expected, new, now, while_held=while_held)

    # tests' writes and the views
    async def put(self, key: ConversationKey, route: Route, now: float) -> None:
        lease = await self.backend.acquire(key, now)
        await self.backend.commit(lease, now, store=route)

    async def delete(self, key: ConversationKey, now: float) -> None:
        lease = await self.backend.acquire(key, now)
        await self.backend.commit(lease, now, forget=True)

    async def get(self, key: ConversationKey, now: float) -> Route | None:
        return await self.views.route_of(key, now)

    async def find(self, channel: str, digest: str, now: float) -> Route | None:
        return await self.backend.read(channel, digest, now)

    async def count(self, channel: str, now: float) -> int:
        return await self.views.count(channel, now)

    async def census(self, channel: str, now: float) -> dict[str, int]:
        return await self.views.census(channel, now)

    async def scan(self, channel: str, now: float, *, agent: str | None = None,
                   limit: int | None = None) -> list[tuple[str, Route]]:
        return await self.views.scan(channel, now, agent=agent, limit=limit)

    async def prune(self, channel: str, keep: Collection[str], now: float) -> int:
        return await self.views.prune(channel, keep, now)
