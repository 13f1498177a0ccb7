"""Sweep grid, Pareto front and plot (stickyroute/replay/sweep.py)."""

from __future__ import annotations

import io

from stickyroute.config.model import RoutingSettings, Strategy
from stickyroute.replay.metrics import Row
from stickyroute.replay.sweep import grid_settings, pareto_front, plot, run_sweep

BASE = RoutingSettings(strategy=Strategy.STICKY_HEURISTIC)


def test_pareto_front_drops_dominated_rows() -> None:
    rows = [Row("a", accuracy=90.0, classifier_calls_per_100=10.0),
            Row("b", accuracy=85.0, classifier_calls_per_100=12.0),   # dominated by a
            Row("c", accuracy=95.0, classifier_calls_per_100=20.0),
            Row("d", accuracy=80.0, classifier_calls_per_100=2.0),
            Row("e", accuracy=90.0, classifier_calls_per_100=10.0)]   # ties a: both kept
    assert [r.strategy for r in pareto_front(rows)] == ["d", "a", "e", "c"]


def test_grid_settings_are_the_product_in_order() -> None:
    grid = grid_settings(BASE, {"divergence_count": (1, 2), "sticky_bonus": (4, 20)})
    assert [(s.divergence_count, s.sticky_bonus) for s in grid] == [(1, 4), (1, 20), (2, 4), (2, 20)]


def test_sweep_front_on_a_tiny_grid(hand_corpus, hand_agents) -> None:
    # bonus 4 / divergence 1: 77.78% at 55.56 calls; bonus 4 / divergence 2: 44.44% at 44.44;
    # bonus 20 never diverges (taxi 12 < 20): 33.33% at 33.33 calls (one per conversation),
    # whatever the divergence count. Nothing dominates anything else but the equal pair.
    progress = io.StringIO()
    rows = run_sweep(hand_corpus, hand_agents,
                     grid_settings(BASE, {"divergence_count": (1, 2), "sticky_bonus": (4, 20)}),
                     progress=progress)
    assert [(r.accuracy, r.classifier_calls_per_100) for r in rows] == [
        (77.78, 55.56), (33.33, 33.33), (44.44, 44.44), (33.33, 33.33)]
    front = pareto_front(rows)
    assert [(r.settings["divergence_count"], r.settings["sticky_bonus"]) for r in front] == [
        (1, 20), (2, 20), (2, 4), (1, 4)]
    assert progress.getvalue() == "sweep 1/4\nsweep 2/4\nsweep 3/4\nsweep 4/4\n"  # not a terminal: one line per tenth


def test_plot_writes_a_png(tmp_path) -> None:
    rows = [Row("a", accuracy=90.0, classifier_calls_per_100=10.0), Row("b", accuracy=95.0, classifier_calls_per_100=20.0)]
    path = tmp_path / "sweep.png"
    plot(rows, str(path), {"seed defaults": rows[0]}, title="t")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
