"""The state interface: everything that outlives one request, behind three async protocols.

    ConversationState   the per-message step on routes of conversations (agent, explicit pin,
                        divergence candidate and counter) and the recent texts the classifier may
                        see: one decision at a time per conversation (acquire -> decide -> commit)
    RouteCatalogue      (state/catalogue.py) routes outside a decision, for admin, agent hints,
                        reloads and stats: list, count, read one, compare-and-set; the views on it
                        (count, census, scan, prune) are written once in state/views.py
    DeliveryLog         which platform deliveries were answered (claim -> complete | fail), the
                        stored answers, the first decision of each delivery, in-flight waiting,
                        claim leases renewed while a forward runs (`renew`)
    DeliverySteps       (state/steps.py) one update of one conversation in two steps (a round trip
                        each on Redis): begin (claim + acquire) -> forward -> finish (commit + complete)

Every method takes `now` (seconds, the caller's clock); no backend reads a clock of its own for
expiry. Backends (`memory`, later `redis`) pass one contract suite (tests/state/).

Delivery states, as `claim` tells them:

    FIRST      nobody holds it: forward, then `complete` (a 2xx) or `fail` (anything else), both
               with the decision made; the claim carries that first decision (`memo`) when an
               earlier attempt failed
    IN_FLIGHT  another attempt is running: `settle` waits for its end
    DONE       answered with a 2xx: `reply` is the stored answer, `memo` its decision
    FAILED     (from `settle` only) the attempt waited for ended without a 2xx: `reply` is its
               answer; the next platform retry gets FIRST

A claim on a shared backend is a lease (`[state] claim_lease_s`): the attempt renews it every
third of it while it forwards (`renew`), so the claims of a process that died free within one
lease and the platform's retry is forwarded again, to the agent of the first decision.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from stickyroute.config.model import Config
from stickyroute.core.delivery import DecisionMemo, DeliveryKey
from stickyroute.core.route import ConversationKey, Route
from stickyroute.errors import StickyrouteError
from stickyroute.reply import Reply


class LeaseTimeout(StickyrouteError):
    """Another decision of the conversation still runs after the caller's `wait_s`."""


class StateUnavailable(StickyrouteError):
    """A shared backend's operation failed or took longer than its `op_timeout` (the foreign
    error, e.g. redis' ConnectionError, is its `__cause__`). Callers fall back, never fail."""


class SlotUnavailable(StateUnavailable):
    """A Redis Cluster operation failed on the node of its keys' slot: the other slots may be
    fine, so the backend is declared down only when no primary answers its ping."""


class DeliveryUnconfirmed(StateUnavailable):
    """The shared backend did not confirm a delivery's claim (its reply was late while it is up,
    or it is in an outage with `[state] when_unavailable = "refuse"`): the request answers 503
    with `Retry-After` (reason `state_unavailable`) and the platform retries; never replaced by a
    per-process claim, so never forwarded twice."""


class RouteUnavailable(StateUnavailable):
    """A conversation's route could not be read from the shared backend while it is up: decide
    from `route`, the live route this process last saw (None: the default), and write nothing
    (reason `state_unavailable`)."""

    def __init__(self, message: str, route: Route | None) -> None:
        super().__init__(message)
        self.route = route


@dataclass(frozen=True, slots=True)
class ConversationLimits:
    """Per-channel bounds of conversation state: inactivity TTL (seconds) and how many routes."""

    ttl_s: float
    max_conversations: int


def limits_for(config: Config) -> dict[str, ConversationLimits]:
    """Each channel's limits from its routing settings (`auto_route_ttl_minutes`,
    `max_conversations`)."""
    return {name: ConversationLimits(ch.routing.ttl_s, ch.routing.max_conversations)
            for name, ch in config.channels.items()}


@dataclass(frozen=True, slots=True)
class Lease:
    """One conversation held for one decision: its live route and recent texts at `acquire` time.

    `token` identifies the holder to the backend (a late holder whose lease was taken over
    cannot overwrite a newer state: fencing). Commit or release every lease exactly once.
    """

    key: ConversationKey
    route: Route | None
    recent: tuple[str, ...] = ()
    token: int = 0


class ConversationState(Protocol):
    """The per-message step on routes: one decision at a time per conversation (acquire ->
    decide -> commit | release). Reading, listing and swapping routes outside a decision is the
    catalogue's (`stickyroute.state.catalogue.RouteCatalogue`, with its views in `state/views.py`)."""

    async def acquire(self, key: ConversationKey, now: float, wait_s: float | None = None) -> Lease:
        """Wait until no other decision of `key` runs, then hold it; the lease has the live route.

        Raises `LeaseTimeout` when the conversation is still held after `wait_s` seconds (None:
        wait as long as it takes)."""
        ...

    async def commit(self, lease: Lease, now: float, *, store: Route | None = None, forget: bool = False,
                     text: str | None = None) -> None:
        """Apply a decision and release: write `store` (expires `ttl_s` after its `last_active`, or
        at the end of a desk's hold when later: `Route.expires_at`),
        or drop the route when `forget`; remember `text` among the recent texts (when the backend
        keeps any). Neither: the route stays as it is."""
        ...

    async def release(self, lease: Lease) -> None:
        """Release without writing (the decision failed)."""
        ...

    def configure(self, limits: Mapping[str, ConversationLimits], recent_messages: int) -> None:
        """Apply a reloaded config's limits and recent-text count; routes are kept (a channel
        that gained room keeps every route, one that lost room drops its least recently used)."""
        ...

    async def aclose(self) -> None:
        """Release the backend's resources."""
        ...


class ClaimState(enum.Enum):
    """What the caller of `DeliveryLog.claim` / `settle` must do (see the module docstring)."""

    FIRST = "first"
    IN_FLIGHT = "in_flight"
    DONE = "done"
    FAILED = "failed"


@dataclass(frozen=True, slots=True)
class Claim:
    """The answer of `claim` / `settle` for one delivery key."""

    state: ClaimState
    reply: Reply | None = None
    memo: DecisionMemo | None = None
    local: bool = False
    """Claimed in this process's memory during an outage of the shared backend
    (`when_unavailable = "memory"`): the decision line says `"state": "memory"`."""
    attempt: int = 1
    """FIRST: which attempt of the delivery this caller holds (1 on the first; each claim that
    gets FIRST counts, whether the earlier attempt failed or died): `X-Stickyroute-Attempt`."""


class DeliveryLog(Protocol):
    """Platform deliveries: claims, stored answers (`ttl_s` after completion), first decisions."""

    async def claim(self, keys: Sequence[DeliveryKey], now: float) -> list[Claim]:
        """Claim each of the distinct `keys` (one claim per key, in order)."""
        ...

    async def settle(self, key: DeliveryKey, now: float, timeout_s: float) -> Claim:
        """Wait (at most `timeout_s` seconds) for the attempt in flight on `key` to end: DONE or
        FAILED with its answer, FIRST when it ended without one and this caller now holds the
        key, IN_FLIGHT when the wait timed out. A key not in flight is claimed as by `claim`."""
        ...

    async def complete(self, keys: Sequence[DeliveryKey], reply: Reply, now: float,
                       memos: Mapping[DeliveryKey, DecisionMemo] | None = None) -> None:
        """The held keys got a 2xx: store `reply` (and each key's first decision from `memos`)
        for their redeliveries and hand it to waiters."""
        ...

    async def fail(self, keys: Sequence[DeliveryKey], reply: Reply | None, now: float,
                   memos: Mapping[DeliveryKey, DecisionMemo] | None = None) -> None:
        """The held keys got no 2xx: release them (the next retry forwards again, to the agent of
        its memo); waiters get `reply` as FAILED, or, with None (the attempt died without an
        answer), claim again."""
        ...

    async def note(self, memos: Mapping[DeliveryKey, DecisionMemo], now: float) -> None:
        """Keep each held key's first decision before its forward (a retry after a crash goes to
        the same agent); a key that has one keeps it."""
        ...

    async def renew(self, keys: Sequence[DeliveryKey], now: float, lease: Lease | None = None) -> None:
        """Extend the claims this process holds on `keys` (and the conversation `lease` holds for
        them) by one claim lease from `now`; a claim that is no longer ours is left alone. The
        memory backend does nothing (its claims die with the process)."""
        ...

    async def size(self, now: float) -> int:
        """Stored answers at `now`."""
        ...

    async def stored_bytes(self, now: float) -> int | None:
        """Bytes the stored answers hold at `now`, or None where the backend cannot tell cheaply
        (Redis: see `MEMORY USAGE` in the README's capacity note)."""
        ...

    async def aclose(self) -> None:
        """Release the backend's resources."""
        ...
