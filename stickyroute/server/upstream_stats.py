"""The forwarding leg's pools and the late answers as /stats JSON (failures by kind are counted
by the accounting, `stickyroute.observe`, and shown from its counters).

    leg_snapshot(dispatcher) -> {"pools": {agent: {"max_connections", "in_use"}},
                                 "late_answers": {outcome: n, "pending": n}}

Pools: each agent's `max_connections` and the connections in use. Late answers: answered (a 2xx
kept for the retry), failed, lost, and how many are still awaited.
"""

from __future__ import annotations

from stickyroute.forwarding.dispatch import Dispatcher
from stickyroute.forwarding.leg import Leg

__all__ = ["leg_snapshot"]


def leg_snapshot(dispatcher: Dispatcher) -> dict[str, object]:
    """JSON-able pools of the dispatcher's leg (none for a substituted leg) and its late answers."""
    leg = dispatcher.leg
    pools: dict[str, dict[str, int]] = {}
    if isinstance(leg, Leg):
        pools = {agent: {"max_connections": limit, "in_use": leg.pools.in_use.get(agent, 0)}
                 for agent, limit in sorted(leg.pools.limits.items())}
    late = dispatcher.late
    return {"pools": pools, "late_answers": {**dict(sorted(late.outcomes.items())), "pending": late.pending}}
