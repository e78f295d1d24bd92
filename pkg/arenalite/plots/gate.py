"""Gate plot: per-dataset differences of each candidate, the median, 0 and the margin."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .style import PALETTE, figure_and_axes

VERDICT_COLOURS = {"superior": PALETTE[2], "non-inferior": PALETTE[0],
                   "inferior": PALETTE[5], "inconclusive": "#777777"}


def gate_plot(table: pd.DataFrame, differences: pd.DataFrame, *, ax: Any = None,
              figsize: tuple[float, float] | None = None, title: str | None = None) -> Any:
    """One row per candidate and metric: dots = datasets, diamond = median, red tick = −margin.

    Differences are in the metric's raw units, positive = candidate better.
    """
    n = len(table)
    fig, ax = figure_and_axes(ax, figsize, default_size=(7.5, max(2.5, 0.6 * n + 1.5)))
    y = np.arange(n)[::-1]
    labels = []
    for row_y, row in zip(y, table.itertuples(index=False), strict=True):
        sel = (differences["candidate"] == row.candidate) & (differences["metric"] == row.metric)
        d = differences.loc[sel, "difference"].to_numpy(dtype=float)
        colour = VERDICT_COLOURS[row.verdict]
        jitter = np.linspace(-0.12, 0.12, d.size) if d.size > 1 else np.zeros(d.size)
        ax.scatter(d, row_y + jitter, s=14, color=colour, alpha=0.6, linewidths=0)
        ax.scatter([row.median_difference], [row_y], marker="D", s=50, color=colour,
                   edgecolors="black", zorder=3)
        ax.vlines(-row.margin, row_y - 0.3, row_y + 0.3, color=PALETTE[5], linewidth=2)
        labels.append(f"{row.candidate} ({row.metric})\n{row.verdict}, n = {row.n_datasets}")
    ax.axvline(0.0, color="#333333", linewidth=0.8)
    ax.set_yticks(y, labels)
    ax.set_ylim(-0.7, n - 0.3)
    ax.set_xlabel("candidate − reference (raw units, > 0 = better); red tick = −margin")
    reference = table["reference"].iloc[0] if n else ""
    ax.set_title(title or f"Non-inferiority gate against {reference}")
    ax.grid(axis="x", alpha=0.3)
    return fig
