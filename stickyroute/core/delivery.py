"""The values of a platform delivery: its key, and the first decision it keeps for its retries."""

from __future__ import annotations

from dataclasses import dataclass

DeliveryKey = tuple[str, str]
"""(channel name, delivery id): Telegram `update_id`, WhatsApp wamid, status id + status..."""


@dataclass(frozen=True, slots=True)
class DecisionMemo:
    """The first decision of a delivery: later attempts go to the same agent with this reason."""

    agent: str
    reason: str
