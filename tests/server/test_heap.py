"""stickyroute/server/heap.py: the collector tuned once a serving process has started."""

from __future__ import annotations

import gc

from stickyroute.server.heap import GEN0_THRESHOLD, settle_heap


def test_settle_heap_freezes_start_up_and_raises_the_young_threshold() -> None:
    before = gc.get_threshold()
    try:
        settle_heap()
        frozen = gc.get_freeze_count()
        assert (gc.get_threshold(), frozen > 0) == ((GEN0_THRESHOLD, before[1], before[2]), True)
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)
