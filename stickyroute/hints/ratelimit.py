"""A token bucket per agent for the agent API (`[hints] rate_per_s`, burst of the same size).

Time is an argument (seconds on the caller's clock); one event loop, no lock needed.
"""

from __future__ import annotations

__all__ = ["AgentRateLimit"]


class AgentRateLimit:
    """`rate_per_s` calls per second per agent, up to `rate_per_s` (at least 1) at once."""

    def __init__(self, rate_per_s: float) -> None:
        self.rate_per_s = rate_per_s
        self.burst = max(1.0, rate_per_s)
        self._buckets: dict[str, tuple[float, float]] = {}
        """agent -> (tokens left, when counted)"""

    def take(self, agent: str, now: float) -> bool:
        """True when `agent` may call at `now` (one token spent), else False."""
        tokens, at = self._buckets.get(agent, (self.burst, now))
        tokens = min(self.burst, tokens + max(0.0, now - at) * self.rate_per_s)
        if tokens < 1.0:
            self._buckets[agent] = (tokens, now)
            return False
        self._buckets[agent] = (tokens - 1.0, now)
        return True
