"""State: everything that outlives a request, behind two async protocols with `now` passed in.

    base.py     ConversationState, DeliveryLog (protocols), Lease, Claim, ClaimState, DecisionMemo
    route.py    Route, ConversationKey (the values kept per conversation)
    memory.py   the embedded backend (one process; cachetools)

Backends are interchangeable and pass one contract suite (tests/state/).
"""

from proxy.state.base import (
    Claim,
    ClaimState,
    ConversationLimits,
    ConversationState,
    DecisionMemo,
    DeliveryKey,
    DeliveryLog,
    Lease,
    LeaseTimeout,
    limits_for,
)
from proxy.state.memory import MemoryConversationState, MemoryDeliveryLog
from proxy.state.route import ConversationKey, Route

__all__ = [
    "Claim", "ClaimState", "ConversationKey", "ConversationLimits", "ConversationState", "DecisionMemo",
    "DeliveryKey", "DeliveryLog", "Lease", "LeaseTimeout", "MemoryConversationState", "MemoryDeliveryLog", "Route",
    "limits_for",
]
