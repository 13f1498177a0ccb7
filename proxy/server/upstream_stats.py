"""The forwarding leg's counters as /stats JSON (issue #11 exports the same as Prometheus metrics).

    upstream_snapshot(dispatcher) -> {"failures": {agent: {kind: n}}, "pools": {agent: {...}},
                                      "late_answers": {outcome: n, "pending": n}}

Failure kinds: unreachable, pool_exhausted, timeout, error, reply_too_large, and `late_<kind>`
for an exchange that failed after its 504. Pools: each agent's `max_connections` and the
connections in use. Late answers: answered (a 2xx kept for the retry), failed, lost.
"""

from __future__ import annotations

from proxy.forwarding.dispatch import Dispatcher
from proxy.forwarding.leg import Leg

__all__ = ["upstream_snapshot"]


def upstream_snapshot(dispatcher: Dispatcher | None) -> dict[str, object]:
    """JSON-able counters of the dispatcher's leg (empty before the service started)."""
    if dispatcher is None:
        return {"failures": {}, "pools": {}, "late_answers": {}}
    failures: dict[str, dict[str, int]] = {}
    pools: dict[str, dict[str, int]] = {}
    leg = dispatcher.leg
    if isinstance(leg, Leg):
        for (agent, kind), n in sorted(leg.failures.items()):
            failures.setdefault(agent, {})[kind] = n
        pools = {agent: {"max_connections": limit, "in_use": leg.pools.in_use.get(agent, 0)}
                 for agent, limit in sorted(leg.pools.limits.items())}
    late = dispatcher.late
    return {"failures": failures, "pools": pools,
            "late_answers": {**dict(sorted(late.outcomes.items())), "pending": late.pending}}
