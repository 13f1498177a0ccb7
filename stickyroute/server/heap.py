"""The garbage collector of a serving process: tuned once the process has started.

    settle_heap()    after start-up: collect, freeze what start-up made, raise the young threshold

What start-up builds (modules, the config, rules, compiled keyword tables) lives as long as the
process: `gc.freeze()` moves it out of every later collection, so a full collection scans only
what requests made. A webhook allocates a few thousand container objects that almost all die
before the request ends; with CPython's default young threshold (700 allocations) several young
collections run per request, scanning the live request's objects each time. `GEN0_THRESHOLD`
lets most of them die first (chosen by measurement: docs "Performance"). Memory cost: at most
that many young objects awaiting a collection.
"""

from __future__ import annotations

import gc

__all__ = ["GEN0_THRESHOLD", "settle_heap"]

GEN0_THRESHOLD = 10_000
"""Allocations (minus deallocations) of container objects between young collections."""


def settle_heap() -> None:
    """Collect, freeze the survivors (start-up's objects) and set the young threshold."""
    gc.collect()
    gc.freeze()
    _gen0, gen1, gen2 = gc.get_threshold()
    gc.set_threshold(GEN0_THRESHOLD, gen1, gen2)
