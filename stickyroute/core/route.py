"""Route: the sticky state of one conversation, as kept in the route store."""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass
from typing import NamedTuple


class ConversationKey(NamedTuple):
    """Who a route belongs to (issue #3): channel, chat id, thread id (forum topics only), sender.

    Two members of one group have separate routes; one user in two groups has two routes. A
    NamedTuple rather than a dataclass: it is a dict key on every decision (routes, recent texts,
    locks), and tuple hashing and equality run in C.
    """

    channel: str
    chat_id: str | None
    thread_id: str | None
    sender_id: str

    def hashed(self) -> str:
        """A short stable digest of the key for logs (12 hex chars of SHA-256; no raw ids)."""
        return self.digest()[:12]

    def digest(self) -> str:
        """32 hex chars of SHA-256 over the key's parts joined by U+001F: the conversation's
        reference without raw ids (Redis key names, agent conversation tokens). The last
        DIGESTS_CACHED keys' digests are kept (every message asks for its conversation's)."""
        return _digest(self.channel, self.chat_id, self.thread_id, self.sender_id)


DIGESTS_CACHED = 65536
"""Conversation digests kept by `ConversationKey.digest` (an LRU; about 200 bytes each)."""


@functools.lru_cache(maxsize=DIGESTS_CACHED)
def _digest(channel: str, chat_id: str | None, thread_id: str | None, sender_id: str) -> str:
    raw = "\x1f".join((channel, chat_id or "", thread_id or "", sender_id))
    return hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()[:32]


@dataclass(frozen=True, slots=True)
class Route:
    """A cached route: the agent, how it was chosen, and the divergence state that lives with it.

    Times are seconds on the router's clock. `chosen_at` is when the agent was classified or
    explicitly chosen (sticky_ttl re-classifies TTL after it); `last_active` drives the
    inactivity TTL. `candidate`/`counter` are the pending divergence (sticky_heuristic). `reason`
    is the reason of the decision that chose the route's agent (the router stamps it on a new
    route; refreshing keeps it; `admin` for an operator's pin), None when unknown. `hint` is a
    pending agent signal (issue #12): `not-mine` (with the agent's suggestion in `hint_agent`,
    or None) waits for the next non-short message; `handoff` marks a route an agent handed over,
    so the next message is decided with reason `handoff`. It expires with the route. `hold_s` is
    set on a route a human desk holds (issue #22: taken by a handoff, an explicit switch or an
    admin pin): the seconds of inactivity it is held for; a held route lives at least that long
    (`expires_at`).
    """

    agent: str
    chosen_at: float
    last_active: float
    explicit: bool = False
    candidate: str | None = None
    counter: int = 0
    reason: str | None = None
    hint: str | None = None
    hint_agent: str | None = None
    hold_s: float | None = None

    def expires_at(self, ttl_s: float) -> float:
        """When the route stops being live (seconds): `ttl_s` (the channel's inactivity TTL) after
        `last_active`, or the hold's end when it is later."""
        hold = self.hold_s
        return self.last_active + (ttl_s if hold is None or hold < ttl_s else hold)

    def held(self, now: float) -> bool:
        """True while a human desk holds the route at `now` (`hold_s` of inactivity not passed)."""
        return self.hold_s is not None and now < self.last_active + self.hold_s

    def touched(self, now: float) -> Route:
        """The same route, active at `now` (inactivity TTL refreshed)."""
        return Route(self.agent, self.chosen_at, now, self.explicit, self.candidate, self.counter, self.reason,
                     self.hint, self.hint_agent, self.hold_s)

    def diverging(self, now: float, candidate: str | None, counter: int) -> Route:
        """The same route, active at `now`, with this pending divergence (`candidate`, `counter`);
        `diverging(now, None, 0)` resets it."""
        return Route(self.agent, self.chosen_at, now, self.explicit, candidate, counter, self.reason,
                     self.hint, self.hint_agent, self.hold_s)

    def because(self, reason: str) -> Route:
        """The same route, written by a decision of `reason`."""
        return Route(self.agent, self.chosen_at, self.last_active, self.explicit, self.candidate, self.counter, reason,
                     self.hint, self.hint_agent, self.hold_s)

    def hinted(self, hint: str | None, agent: str | None = None) -> Route:
        """The same route with this pending agent signal (`hinted(None)` clears it)."""
        return Route(self.agent, self.chosen_at, self.last_active, self.explicit, self.candidate, self.counter,
                     self.reason, hint, agent, self.hold_s)

    def holding(self, hold_s: float | None) -> Route:
        """The same route held by a human desk for `hold_s` seconds of inactivity (None: not held)."""
        return Route(self.agent, self.chosen_at, self.last_active, self.explicit, self.candidate, self.counter,
                     self.reason, self.hint, self.hint_agent, hold_s)
