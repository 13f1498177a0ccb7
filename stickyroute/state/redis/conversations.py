"""`ConversationState` on Redis: one hash per conversation, one decision at a time across every
replica by a per-conversation lock, two round trips per decision.

    acquire   ACQUIRE script: SET lock NX PX (a random 63-bit token) and, in the same call,
              HMGET the route, its version and the recent texts. A held lock is polled for
              (2 ms doubling to 50 ms, never past the lock's remaining PTTL nor `wait_s`).
    commit    COMMIT script: check the token (fencing), write the route / forget it / keep it,
              the recent texts, bump the version, PEXPIRE the hash, delete the lock.
    release   RELEASE script: delete the lock when it is still ours.

A single-message update takes the lock with its delivery claim instead (`RedisDeliverySteps`:
BEGIN, then FINISH commits after the forward; the lock lives as long as the claim's lease and
is renewed with it).

Fencing: the lock expires `lock_ttl_s` after it was taken (the classifier timeout plus a margin,
so a dead holder frees it). A holder whose lock expired may still write when nobody took the lock
and nobody wrote since (the version it read is unchanged); otherwise its commit is dropped and
logged: a newer state is never overwritten.

Liveness follows the caller's clock like every backend (a route lives while `now <
Route.expires_at(ttl_s)`: `last_active + ttl_s`, or a desk's hold when longer; recent texts while
`now < written + ttl_s`); Redis's own expiry (the hash's PEXPIRE, the remaining lifetime plus one
second) only frees memory, so nothing stays in Redis without an expiry. A route an agent's `done`
released (`swap` to None) is written as nine empty fields: no route.

The catalogue (`RouteCatalogue`): `read` one hash, `swap` by the SWAP script (compare the route,
refuse while the lock is held), `routes` SCANs the channel's hashes (every primary of a cluster):
O(live conversations), for /stats and the admin API (`state/views.py`), not per request; a listed
route's digest is read off its key name.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from stickyroute.core.route import ConversationKey, Route
from stickyroute.state.base import ConversationLimits, Lease, LeaseTimeout, StateUnavailable
from stickyroute.state.redis.client import RedisStore
from stickyroute.state.redis.codec import ROUTE_FIELDS, recent_blob, recent_from, route_args, route_from
from stickyroute.state.redis.keys import KeyLayout
from stickyroute.state.redis.scripts import ACQUIRE, COMMIT, RELEASE, SWAP
from stickyroute.state.steps import Writes

log = logging.getLogger("stickyroute.state")

POLL_FIRST_S = 0.002
POLL_MAX_S = 0.05
GET = "return redis.call('HMGET', KEYS[1], 'a', 'c', 'l', 'x', 'd', 'n', 'w', 'h', 'g')"


@dataclass(frozen=True, slots=True)
class _Held:
    """What a lease's commit needs besides the Lease: the version read and when the recent
    texts read expire (0.0 when none)."""

    version: str
    recent_until: float


class RedisConversationState:
    """`ConversationState` and `RouteCatalogue` on Redis (see the module docstring).

    `limits` gives each channel's TTL (the bound on routes is Redis's memory, not a count);
    `recent_messages` how many texts to keep (0: none); `lock_ttl_s` how long a decision may
    hold a conversation (seconds). KeyError for a channel without limits.
    """

    def __init__(self, store: RedisStore, limits: Mapping[str, ConversationLimits], recent_messages: int = 0,
                 lock_ttl_s: float = 3.0) -> None:
        self._store = store
        self._keys = store.keys
        self._limits = dict(limits)
        self._recent_messages = recent_messages
        self._lock_ms = max(1, math.ceil(lock_ttl_s * 1000))
        self._held: dict[int, _Held] = {}
        self._cleanup: set[asyncio.Task[None]] = set()

    async def acquire(self, key: ConversationKey, now: float, wait_s: float | None = None) -> Lease:
        token = self.new_token()
        names = [self._keys.conversation(key), self._keys.lock(key)]
        loop = asyncio.get_running_loop()
        deadline = None if wait_s is None else loop.time() + wait_s
        delay = POLL_FIRST_S
        while True:
            try:
                got, values = await self._store.run("acquire", ACQUIRE, names, [token, self._lock_ms])
            except BaseException:
                self.release_soon(names[1], token)  # the script may have run before the error
                raise
            if got == 1:
                break
            pause = min(delay, max(int(values), 1) / 1000.0)
            if deadline is not None:
                left = deadline - loop.time()
                if left <= 0:
                    raise LeaseTimeout(f"conversation {key.hashed()} still held after {wait_s} s")
                pause = min(pause, left)
            await asyncio.sleep(pause)
            delay = min(delay * 2, POLL_MAX_S)
        return self.lease_from(key, token, values, now)

    def new_token(self) -> int:
        """A lock token (63 random bits, never 0)."""
        return secrets.randbits(63) | 1

    def lease_from(self, key: ConversationKey, token: int, values: list[bytes | None], now: float) -> Lease:
        """The lease of an ACQUIRE (or BEGIN) that took the lock with `token` and read `values`."""
        ttl_s = self._limits[key.channel].ttl_s
        route = route_from(values[:9])
        if route is not None and route.expires_at(ttl_s) <= now:
            route = None
        recent_until = float(values[11]) if values[11] else 0.0
        recent = recent_from(values[10]) if recent_until > now else ()
        self._held[token] = _Held((values[9] or b"0").decode(), recent_until if recent_until > now else 0.0)
        return Lease(key, route, recent, token)

    def release_soon(self, lock: str, token: int) -> None:
        """Give back a lock this process may have taken without learning it (cancelled call)."""

        async def release() -> None:
            with contextlib.suppress(StateUnavailable):  # else it expires by itself
                await self._store.run("release", RELEASE, [lock], [token])

        task = asyncio.get_running_loop().create_task(release())
        self._cleanup.add(task)
        task.add_done_callback(self._cleanup.discard)

    async def commit(self, lease: Lease, now: float, *, store: Route | None = None, forget: bool = False,
                     text: str | None = None) -> None:
        names, args = self.commit_call(lease, now, Writes(store, forget, text))
        self.committed(lease, await self._store.run("commit", COMMIT, names, args))

    def commit_call(self, lease: Lease, now: float, writes: Writes) -> tuple[list[str], list[Any]]:
        """COMMIT's keys and fifteen arguments for `writes` under `lease` (its held state is used up)."""
        held = self._held.pop(lease.token, None) or _Held("0", 0.0)
        key = lease.key
        ttl_s = self._limits[key.channel].ttl_s
        mode, fields, route_until = "k", [""] * len(ROUTE_FIELDS), 0.0
        store = writes.store
        if writes.forget:
            mode = "f"
        elif store is not None:
            route_until = store.expires_at(ttl_s)
            mode, fields = ("s", route_args(store)) if route_until > now else ("f", fields)
        elif lease.route is not None:
            route_until = lease.route.expires_at(ttl_s)
        blob, recent_until = b"", held.recent_until
        if writes.text and self._recent_messages > 0:
            blob, recent_until = recent_blob((*lease.recent, writes.text)[-self._recent_messages:]), now + ttl_s
        keep_s = max(route_until, recent_until) - now
        keep_ms = math.ceil(keep_s * 1000) + self._store.margin_ms if keep_s > 0 else 0
        names = [self._keys.conversation(key), self._keys.lock(key)]
        return names, [lease.token, held.version, mode, *fields, blob, repr(recent_until), keep_ms]

    def committed(self, lease: Lease, written: object) -> None:
        """Log a commit that fencing dropped (`written` is the script's answer)."""
        if written != 1:
            log.warning("conversation %s: decision not written: its lock expired and another decision "
                        "wrote since (lock_ttl %d ms)", lease.key.hashed(), self._lock_ms)

    async def release(self, lease: Lease) -> None:
        self._held.pop(lease.token, None)
        await self._store.run("release", RELEASE, [self._keys.lock(lease.key)], [lease.token])

    async def read(self, channel: str, digest: str, now: float) -> Route | None:
        route = route_from(await self._store.run("read", GET, [self._keys.conversation_of(channel, digest)], []))
        if route is None or route.expires_at(self._limits[channel].ttl_s) <= now:
            return None
        return route

    async def swap(self, channel: str, digest: str, expected: Route, new: Route | None, now: float, *,
                   while_held: bool = False) -> bool:
        name = self._keys.conversation_of(channel, digest)
        until = now if new is None else new.expires_at(self._limits[channel].ttl_s)  # none: the hash's own life
        keep_ms = math.ceil((until - now) * 1000) + self._store.margin_ms
        done = await self._store.run("swap", SWAP, [name, name + ":lock"],
                                     [*route_args(expected), *route_args(new), keep_ms, "1" if while_held else ""])
        return bool(done == 1)

    async def routes(self, channel: str, now: float) -> list[tuple[str, Route]]:
        ttl_s = self._limits[channel].ttl_s
        found: list[tuple[str, Route]] = []
        async for name, values in self._store.scan_fields(
                "scan", self._keys.conversations_pattern(channel), list(ROUTE_FIELDS)):
            route = route_from(values)
            if route is not None and route.expires_at(ttl_s) > now:
                found.append((KeyLayout.digest_from(name), route))
        return found

    async def size(self, channel: str, now: float) -> int:
        return len(await self.routes(channel, now))

    def configure(self, limits: Mapping[str, ConversationLimits], recent_messages: int) -> None:
        self._limits = {**self._limits, **limits}  # a removed channel keeps its limits for requests in flight
        self._recent_messages = recent_messages

    async def aclose(self) -> None:
        if self._cleanup:
            await asyncio.gather(*self._cleanup, return_exceptions=True)
        await self._store.aclose()

