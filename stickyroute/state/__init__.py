"""State: everything that outlives a request, behind async protocols with `now` passed in.

    base.py     the per-message step: ConversationState, DeliveryLog (protocols), Lease, Claim,
                ClaimState, LeaseTimeout, StateUnavailable (the values kept, Route, ConversationKey,
                DeliveryKey and DecisionMemo, live in `stickyroute.core`)
    steps.py    DeliverySteps: one update of one conversation in two steps (begin, finish)
    catalogue.py  RouteCatalogue: routes outside a decision (list, count, read one, compare-and-set), for
                admin, agent hints, reloads and stats; RouteState: both faces in one backend
    views.py    RouteViews: count, census, scan, prune, route_of, written once over any catalogue
    budget.py   ClassifierBudget, SwitchBudget (protocols), TokenBucket, MemoryBudget, MemorySwitchBudget
    memory.py   the embedded backend (one process; cachetools)
    redis/      the shared backend (replicas and workers; redis-py asyncio, Lua scripts)
    health.py   BackendHealth: degraded or not, one log line per change, gauge, recovery ping
    fallback.py the shared backend while healthy, this process's memory otherwise
    fallback_steps.py  the same for DeliverySteps
    build.py    build_state(config): what `[state]` asks for; probe() for `stickyroute check`

Backends are interchangeable and pass one contract suite (tests/state/).
"""

from stickyroute.state.base import (
    Claim,
    ClaimState,
    ConversationLimits,
    ConversationState,
    DeliveryLog,
    Lease,
    LeaseTimeout,
    StateUnavailable,
    limits_for,
)
from stickyroute.state.budget import ClassifierBudget, MemoryBudget, MemorySwitchBudget, SwitchBudget, TokenBucket
from stickyroute.state.build import StateBackends, build_state
from stickyroute.state.catalogue import RouteCatalogue, RouteState
from stickyroute.state.memory import MemoryConversationState, MemoryDeliveryLog
from stickyroute.state.views import RouteViews

__all__ = [
    "Claim",
    "ClaimState",
    "ClassifierBudget",
    "ConversationLimits",
    "ConversationState",
    "DeliveryLog",
    "Lease",
    "LeaseTimeout",
    "MemoryBudget",
    "MemoryConversationState",
    "MemoryDeliveryLog",
    "MemorySwitchBudget",
    "RouteCatalogue",
    "RouteState",
    "RouteViews",
    "StateBackends",
    "StateUnavailable",
    "SwitchBudget",
    "TokenBucket",
    "build_state",
    "limits_for",
]
