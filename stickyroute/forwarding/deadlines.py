"""The forwarding leg's deadlines of one channel, from `[upstream]` or `[channels.<name>.upstream]`.

    Deadlines.of(upstream) -> Deadlines

The platform gets its answer (or a 504) `connect_timeout_s + timeout_s` after forwarding started;
with late answers (`late_answer_s` > 0) the exchange goes on that much longer. Slack and Discord
give 3 seconds and LINE about 2: a channel of theirs can set its own, shorter deadlines.
"""

from __future__ import annotations

from dataclasses import dataclass

from stickyroute.config.model import UpstreamSettings

__all__ = ["Deadlines"]


@dataclass(frozen=True, slots=True)
class Deadlines:
    """One channel's deadlines (seconds): the platform's answer after `answer_s`, the late answer
    awaited `late_answer_s` more, a free pooled connection awaited `wait_s` (and a socket's
    connect as long); the whole exchange bounded by `exchange_s`, and by `idle_s` without a byte
    from the agent."""

    answer_s: float
    late_answer_s: float
    wait_s: float
    exchange_s: float
    idle_s: float

    @classmethod
    def of(cls, upstream: UpstreamSettings) -> Deadlines:
        answer_s = upstream.connect_timeout_s + upstream.timeout_s
        late = upstream.late_answer_s
        read = upstream.timeout_s if late <= 0 else upstream.timeout_s + late
        return cls(answer_s, late, upstream.connect_timeout_s, answer_s + max(late, 0.0), read)
