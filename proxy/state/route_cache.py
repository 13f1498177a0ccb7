"""RouteStore: per-channel TTL cache of routes (cachetools.TLRUCache), bounded and LRU-evicting.

A route lives until it has been idle for the channel's TTL (`auto_route_ttl_minutes`); writing a
route with a newer `last_active` extends it. At most `max_conversations` routes are kept per
channel; past that the least recently used is dropped. Time is passed in (`now`, seconds): the
cache's timer reads the value given to the last call, so tests and replays use a fake clock.
"""

from __future__ import annotations

from cachetools import TLRUCache

from proxy.routing.route import ConversationKey, Route


class PassedTime:
    """Timer for a cachetools cache that returns the `now` (seconds) its owner last set in `value`."""

    __slots__ = ("value",)

    def __init__(self) -> None:
        self.value = 0.0

    def __call__(self) -> float:
        return self.value


class RouteStore:
    """Routes of one channel: `get(key, now)`, `put(key, route, now)`, `delete(key, now)`."""

    def __init__(self, ttl_s: float, max_conversations: int) -> None:
        self.ttl_s = ttl_s
        self._time = PassedTime()
        self._cache: TLRUCache[ConversationKey, Route] = TLRUCache(
            maxsize=max(1, max_conversations), ttu=self._expires_at, timer=self._time
        )

    def _expires_at(self, _key: ConversationKey, route: Route, _now: float) -> float:
        return route.last_active + self.ttl_s

    def get(self, key: ConversationKey, now: float) -> Route | None:
        """The live route of `key` at `now`, or None (never set, idle past TTL, or evicted)."""
        self._time.value = now
        return self._cache.get(key)

    def put(self, key: ConversationKey, route: Route, now: float) -> None:
        """Store `route`; it expires at `route.last_active + ttl_s`."""
        self._time.value = now
        self._cache[key] = route

    def delete(self, key: ConversationKey, now: float) -> None:
        """Forget the route of `key` (no error when absent)."""
        self._time.value = now
        self._cache.pop(key, None)

    def __len__(self) -> int:
        return len(self._cache)
