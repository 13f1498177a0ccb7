"""Agent signals (issue #12): hints and handoffs from an agent's webhook reply or the agent API.

    token.py      ConversationTokens: the signed, expiring X-Stickyroute-Conversation reference
    reply.py      take_signals(reply, sender): read and strip X-Stickyroute-Hint / -Handoff
    ratelimit.py  AgentRateLimit: the agent API's token bucket per agent
    service.py    AgentSignals: request headers, signals from replies, POST /v1/hints

The semantics (what a hint or handoff does per strategy) live in the pure engine:
`stickyroute.routing.signals`.
"""

from stickyroute.hints.ratelimit import AgentRateLimit
from stickyroute.hints.reply import HANDOFF_HEADER, HINT_HEADER, parse_hint, take_signals
from stickyroute.hints.service import CONVERSATION_HEADER, AgentSignals
from stickyroute.hints.token import ConversationTokens, TokenClaims, TokenRejected

__all__ = ["CONVERSATION_HEADER", "HANDOFF_HEADER", "HINT_HEADER", "AgentRateLimit", "AgentSignals",
           "ConversationTokens", "TokenClaims", "TokenRejected", "parse_hint", "take_signals"]
