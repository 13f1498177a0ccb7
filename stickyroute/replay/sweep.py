"""Grid sweep over the routing knobs, the Pareto front (accuracy vs. classifier calls), a PNG plot.

Grid: every combination of `GRID` values (a dict knob -> values) applied to a base
RoutingSettings (strategy sticky_heuristic). A row is on the Pareto front when no other row
has accuracy >= and calls <= with one of them strictly better. The plot (matplotlib, Agg)
shows every setting (grey), the front (line) and the shipped defaults / seed (marked).
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any, TextIO

from stickyroute.config.model import Agent, RoutingSettings
from stickyroute.replay.corpus import Conversation
from stickyroute.replay.metrics import Row, row
from stickyroute.replay.runner import play, settings_dict

GRID: dict[str, tuple[object, ...]] = {
    "confidence_threshold": (6, 12),
    "sticky_bonus": (0, 4, 6),
    "divergence_count": (1, 2),
    "first_message_margin": (None, 0),
    "early_confirm_margin": (None, 0),
    "keyword_switch_margin": (None, 6, 12),
    "contest_confirm": (False, True),
}
"""The default sweep grid (knob -> values); 288 settings."""


def grid_settings(base: RoutingSettings, grid: Mapping[str, Sequence[object]]) -> list[RoutingSettings]:
    """Every combination of the grid's values applied to `base` (in grid order)."""
    names = list(grid)
    combos: list[dict[str, Any]] = [dict(zip(names, values, strict=True))
                                    for values in itertools.product(*(grid[n] for n in names))]
    return [replace(base, **combo) for combo in combos]


def pareto_front(rows: Iterable[Row]) -> list[Row]:
    """Rows not dominated in (accuracy up, classifier_calls_per_100 down), sorted by calls."""
    rows = list(rows)
    front = []
    for r in rows:
        dominated = any(
            o.accuracy >= r.accuracy and o.classifier_calls_per_100 <= r.classifier_calls_per_100
            and (o.accuracy > r.accuracy or o.classifier_calls_per_100 < r.classifier_calls_per_100)
            for o in rows
        )
        if not dominated:
            front.append(r)
    return sorted(front, key=lambda r: (r.classifier_calls_per_100, r.accuracy))


def _report(progress: TextIO, done: int, total: int) -> None:
    """A progress bar redrawn in place on a terminal; one line per tenth of the grid otherwise."""
    if progress.isatty():
        filled = 30 * done // total
        progress.write(f"\rsweep [{'#' * filled}{'.' * (30 - filled)}] {done}/{total}")
    elif done == total or done % max(1, total // 10) == 0:
        progress.write(f"sweep {done}/{total}\n")
    progress.flush()


def run_sweep(conversations: Sequence[Conversation], agents: Sequence[Agent], settings: Sequence[RoutingSettings],
              judge: str = "oracle", seed: int = 0, gap_s: float = 30.0,
              progress: TextIO | None = None) -> list[Row]:
    """One row per setting (named `sweep:<n>`); a progress counter on `progress` (None: silent)."""

    async def main() -> list[Row]:
        rows = []
        for n, s in enumerate(settings, start=1):
            _played, tally = await play(conversations, agents, s, judge, seed, gap_s)
            rows.append(row(f"sweep:{n}", settings_dict(s), tally))
            if progress is not None:
                _report(progress, n, len(settings))
        if progress is not None and progress.isatty():
            progress.write("\n")
        return rows

    return asyncio.run(main())


def plot(rows: Sequence[Row], path: str, marked: Mapping[str, Row], title: str = "") -> None:
    """Write a PNG: every row (grey dots), the Pareto front (line), `marked` rows labelled."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5), dpi=110)
    ax.scatter([r.classifier_calls_per_100 for r in rows], [r.accuracy for r in rows], s=12, c="0.6",
               label="settings")
    front = pareto_front(rows)
    ax.plot([r.classifier_calls_per_100 for r in front], [r.accuracy for r in front], "-o", c="tab:blue",
            ms=4, label="Pareto front")
    for (label, r), colour in zip(marked.items(), ("tab:red", "tab:green", "tab:orange", "tab:purple"), strict=False):
        ax.scatter([r.classifier_calls_per_100], [r.accuracy], s=80, marker="*", c=colour, label=label, zorder=3)
    ax.set_xlabel("classifier calls per 100 messages")
    ax.set_ylabel("accuracy (%)")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def front_table(front: Sequence[Row]) -> str:
    """The Pareto front as a plain text table."""
    lines = ["accuracy  calls/100  false/100  settings"]
    previous: tuple[float, float, float] | None = None
    alike = 0
    for r in front:
        figures = (r.accuracy, r.classifier_calls_per_100, r.false_switches_per_100)
        if figures == previous:  # settings that differ only in knobs with no effect here
            alike += 1
            continue
        if alike:
            lines[-1] += f"  (+{alike} alike)"
        previous, alike = figures, 0
        knobs = ", ".join(f"{k}={v}" for k, v in r.settings.items() if k != "strategy")
        lines.append(f"{r.accuracy:8.2f}  {r.classifier_calls_per_100:9.2f}  {r.false_switches_per_100:9.2f}  {knobs}")
    if alike:
        lines[-1] += f"  (+{alike} alike)"
    return "\n".join(lines)
