"""State backends under the contract suite, and the constants the contract tests share.

`conversations` is a ConversationState with TTL `TTL_S` and room for `MAX_CONVERSATIONS` routes
on channels `telegram` and `whatsapp`, keeping `RECENT` texts per conversation; `deliveries` a
DeliveryLog keeping answers `DELIVERY_TTL_S`. Add a backend by adding its name to `BACKENDS` and
a branch to the two factories: the contract tests run on it unchanged.
"""

from __future__ import annotations

from proxy.state.base import ConversationLimits, ConversationState, DeliveryLog
from proxy.state.memory import MemoryConversationState, MemoryDeliveryLog

T0 = 1_700_000_000.0
TTL_S = 1800.0
MAX_CONVERSATIONS = 1000
RECENT = 2
DELIVERY_TTL_S = 24 * 3600.0
CHANNELS = ("telegram", "whatsapp")
BACKENDS = ["memory"]


def make_conversations(backend: str, recent: int = RECENT) -> ConversationState:
    limits = {channel: ConversationLimits(TTL_S, MAX_CONVERSATIONS) for channel in CHANNELS}
    if backend == "memory":
        return MemoryConversationState(limits, recent_messages=recent)
    raise ValueError(backend)


def make_deliveries(backend: str) -> DeliveryLog:
    if backend == "memory":
        return MemoryDeliveryLog(ttl_s=DELIVERY_TTL_S)
    raise ValueError(backend)
