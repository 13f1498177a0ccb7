"""Claim a request's deliveries: each distinct key once, waiting for the attempts in flight.

    claims = await claim_all(deliveries, keys, now, settle_s)    {key: Claim}, in key order

Raises `DeliveryUnconfirmed` when the shared state did not confirm one of them (the request
answers 503 `state_unavailable`), after giving back the keys it did hold (`fail` without an
answer: a waiter, or the platform's retry, claims them again).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from stickyroute.core.delivery import DeliveryKey
from stickyroute.forwarding.offload import chunks
from stickyroute.state.base import Claim, ClaimState, DeliveryLog, DeliveryUnconfirmed


async def claim_all(deliveries: DeliveryLog, keys: Sequence[DeliveryKey], now: float,
                    settle_s: float) -> dict[DeliveryKey, Claim]:
    """The claim of each of the distinct `keys`; one in flight is waited for at most `settle_s`
    seconds (`DeliveryLog.settle`). Raises DeliveryUnconfirmed (see the module docstring)."""
    claims: dict[DeliveryKey, Claim] = {}
    try:
        async for chunk in chunks(list(keys)):
            claims.update(zip(chunk, await deliveries.claim(chunk, now), strict=True))
        waiting = [k for k, c in claims.items() if c.state is ClaimState.IN_FLIGHT]
        if waiting:
            settled = await asyncio.gather(*(deliveries.settle(k, now, settle_s) for k in waiting),
                                           return_exceptions=True)
            failure: BaseException | None = None
            for key, outcome in zip(waiting, settled, strict=True):
                if isinstance(outcome, BaseException):
                    failure = failure or outcome
                else:
                    claims[key] = outcome
            if failure is not None:
                raise failure
    except DeliveryUnconfirmed:
        held = [k for k, c in claims.items() if c.state is ClaimState.FIRST]
        if held:
            await deliveries.fail(held, None, now)
        raise
    return claims
