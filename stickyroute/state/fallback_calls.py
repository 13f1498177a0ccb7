"""The three ways a fallback wrapper calls the shared backend, each counting what it did not
serve (`BackendHealth.fell_back`; see `stickyroute.state.fallback`).

    answered(health, operation, call)            (True, result), or (False, None): not answered
    either(health, operation, shared, local)     shared, else local (counted)
    quietly(health, operation, write)            a write that may be lost (counted, never raised)
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

from stickyroute.state.base import StateUnavailable
from stickyroute.state.health import BackendHealth

T = TypeVar("T")


async def answered(health: BackendHealth, operation: str, call: Callable[[], Awaitable[T]]
                   ) -> tuple[bool, T | None]:
    """(True, result) when the backend answered; (False, None) when it failed and is still up
    (counted as `timeout`, the caller answers without it). Raises nothing; when the failure
    declared an outage, (False, None) with `health.up` False."""
    try:
        return True, await call()
    except StateUnavailable as exc:
        health.failed(exc)
        if health.up:
            health.fell_back(operation, "timeout")
        return False, None


async def either(health: BackendHealth, operation: str | None, shared: Callable[[], Awaitable[T]],
                  local: Callable[[], Awaitable[T]]) -> T:
    """`shared()` while the backend is up and answers, else `local()`, counted under `operation`
    (None: a view, not counted during an outage)."""
    if health.up:
        try:
            return await shared()
        except StateUnavailable as exc:
            health.failed(exc)
            if health.up and operation is not None:
                health.fell_back(operation, "timeout")
                return await local()
    if operation is not None:
        health.fell_back(operation, "outage")
    return await local()


async def quietly(health: BackendHealth, operation: str, write: Callable[[], Awaitable[None]], *,
                   always: bool = False) -> None:
    """A write to the shared backend that may be lost (never raised, counted); skipped while
    degraded unless `always` (a lease taken on the shared backend is given back there)."""
    if not health.up and not always:
        health.fell_back(operation, "outage")
        return
    try:
        await write()
    except StateUnavailable as exc:
        health.failed(exc)
        health.fell_back(operation, "timeout" if health.up else "outage")
