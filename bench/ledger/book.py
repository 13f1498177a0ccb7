"""The ledger: every update sent, every acknowledgement, every delivery an agent accepted.

    book = Ledger()
    book.sent(key, expected_agent_or_None, t)       the platform created the update
    book.attempt(key)                               one more POST carrying it
    book.acked(key, t)                              the platform got a 2xx for it
    book.received(key, agent, accepted, t)          an agent got it (accepted: it answered 2xx)
    book.counts(retrying=set_of_keys)               the figures below
    book.crash_rule(kills, lease_s, margin_s)       duplicates outside the crash rule (below)

An update is **delivered once** when exactly one agent accepted it exactly once, **duplicated**
when agents accepted it more than once in total, **lost** when no agent accepted it although the
platform got a 2xx or gave up, **pending** when it is still being retried. A receipt the agent
refused (500, 429, reset: the agent asks for the retry) is not a delivery. **Misrouted**: an
update whose route is deterministic (binding, thread route, explicit switch) accepted by another
agent. A late answer (an agent slower than the proxy's deadline, whose 2xx came after the 504)
counts once, as the one delivery of its update; the platform's retry is answered from the stored
answer and is not a second delivery.

**The crash rule** (a proxy process SIGKILLed with the Redis backend): an update may be accepted
twice only when its forward had started before a kill (its first acceptance came at most
`KILL_SLACK_S` after it, and it was not acknowledged before it), always by the same agent, and
its second acceptance comes at most `lease_s + margin_s` after the kill, or after the restarted
process serves again (a dead process's claims free within one claim lease; the margin is the
platform's retry delay and one forward).
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field


@dataclass
class _Update:
    expected: str | None
    sent_at: float
    attempts: int = 0
    acked_at: float | None = None


@dataclass(frozen=True)
class Counts:
    """The ledger's figures (latencies in milliseconds, first POST to first 2xx)."""

    sent: int
    acknowledged: int
    delivered_once: int
    duplicated: int
    lost: int
    pending: int
    retried: int
    misrouted: int
    refused_receipts: int
    p50_ms: float
    p99_ms: float
    extra_deliveries: int = 0
    problems: list[str] = field(default_factory=list)


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile of `values` (0.0 when empty)."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q / 100 * len(ordered)) - 1))]


KILL_SLACK_S = 0.5
"""How long after a kill an agent may still accept a forward the dead process had sent (its
answer was written before the agent saw the connection close)."""


class Ledger:
    """The book of one run (single event loop; not thread-safe)."""

    def __init__(self) -> None:
        self.updates: dict[str, _Update] = {}
        self.accepted: dict[str, list[str]] = defaultdict(list)
        self.accepted_at: dict[str, list[float]] = defaultdict(list)
        self.refused: dict[str, int] = defaultdict(int)
        self.unknown: list[str] = []

    def sent(self, key: str, expected: str | None, t: float) -> None:
        self.updates[key] = _Update(expected, t)

    def attempt(self, key: str) -> None:
        self.updates[key].attempts += 1

    def acked(self, key: str, t: float) -> None:
        update = self.updates[key]
        if update.acked_at is None:
            update.acked_at = t

    def received(self, key: str, agent: str, accepted: bool, t: float) -> None:
        if key not in self.updates:
            self.unknown.append(key)
        if accepted:
            self.accepted[key].append(agent)
            self.accepted_at[key].append(t)
        else:
            self.refused[key] += 1

    def crash_rule(self, kills: list[float], lease_s: float, margin_s: float,
                   back: list[float] | None = None) -> list[str]:
        """Every update accepted more than once that breaks the crash rule (module docstring),
        with why; [] when all duplicates are the kills' in-flight updates. `back[i]`: when a
        proxy served again after kill i (a restart; default: at once, another replica)."""
        broken = []
        for key, agents in self.accepted.items():
            if len(agents) < 2:
                continue
            times = self.accepted_at[key]
            acked = self.updates[key].acked_at if key in self.updates else None
            kill = next((k for k in kills if times[0] <= k + KILL_SLACK_S and (acked is None or acked > k)), None)
            if kill is None:
                broken.append(f"{key} accepted {len(agents)} times by {agents} at {times}: not in flight at a "
                              f"kill ({kills})")
            elif len(set(agents)) > 1:
                broken.append(f"{key} in flight at the kill at {kill:.2f} s reached two agents: {agents}")
            elif times[-1] > (due := max(kill, (back or kills)[kills.index(kill)]) + lease_s + margin_s):
                broken.append(f"{key} in flight at the kill at {kill:.2f} s was redelivered at {times[-1]:.2f} s, "
                              f"after {due:.2f} s (served again + claim lease {lease_s} s + {margin_s} s)")
        return broken

    def counts(self, retrying: set[str] | None = None) -> Counts:
        """The figures now; `retrying` are the keys the platforms still retry."""
        retrying = retrying or set()
        once = duplicated = lost = pending = retried = misrouted = extra = 0
        latencies = []
        problems = []
        for key, update in self.updates.items():
            agents = self.accepted.get(key, [])
            if update.attempts > 1:
                retried += 1
            if update.acked_at is not None:
                latencies.append((update.acked_at - update.sent_at) * 1000)
            if len(agents) == 1:
                once += 1
            elif len(agents) > 1:
                duplicated += 1
                extra += len(agents) - 1
                if len(problems) < 5:
                    problems.append(f"{key} accepted {len(agents)} times by {agents}")
            elif key in retrying:
                pending += 1
            else:
                lost += 1
                if len(problems) < 10:
                    problems.append(f"{key} lost (acked={update.acked_at is not None}, attempts={update.attempts})")
            if update.expected is not None and agents and any(a != update.expected for a in agents):
                misrouted += 1
                if len(problems) < 10:
                    problems.append(f"{key} expected {update.expected}, accepted by {agents}")
        acknowledged = sum(1 for u in self.updates.values() if u.acked_at is not None)
        if self.unknown:
            problems.append(f"{len(self.unknown)} receipt(s) of unknown update ids, e.g. {self.unknown[:3]}")
        return Counts(
            sent=len(self.updates), acknowledged=acknowledged, delivered_once=once, duplicated=duplicated,
            lost=lost, pending=pending, retried=retried, misrouted=misrouted,
            refused_receipts=sum(self.refused.values()), p50_ms=percentile(latencies, 50),
            p99_ms=percentile(latencies, 99), extra_deliveries=extra, problems=problems,
        )
