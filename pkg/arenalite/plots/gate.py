"""Gate plot: per-dataset differences of each candidate, the median, 0 and the margin.

Differences are in each metric's raw units, so every metric gets its own panel with its
own x axis (an RMSE difference of 2 would flatten accuracy differences of 0.01 on a
shared one); panels are as tall as their number of candidates.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .style import PALETTE, axis_labels, figure_and_axes, shorten

VERDICT_COLOURS = {"superior": PALETTE[2], "non-inferior": PALETTE[0],
                   "inferior": PALETTE[5], "inconclusive": "#777777"}
ROW_HEIGHT = 0.5  # inches per candidate row
XLABEL = "candidate − reference in {} (> 0: better); red tick: −margin"


def gate_plot(table: pd.DataFrame, differences: pd.DataFrame, *, ax: Any = None,
              figsize: tuple[float, float] | None = None, title: str | None = None) -> Any:
    """One row per candidate and metric: dots = datasets, diamond = median, red tick = −margin.

    Without ``ax``, one panel per metric (own x axis, raw units); with ``ax``, every row
    in that one axes.
    """
    reference = str(table["reference"].iloc[0]) if len(table) else ""
    title = title or f"Non-inferiority gate against {shorten(reference, 40)}"
    metrics = list(dict.fromkeys(table["metric"]))
    if ax is not None or len(metrics) <= 1:
        fig, ax = figure_and_axes(ax, figsize,
                                  default_size=(8.0, max(2.5, ROW_HEIGHT * len(table) + 1.5)))
        unit = metrics[0] if len(metrics) == 1 else "raw units"
        _rows(ax, table, differences, XLABEL.format(unit), with_metric=True)
        ax.set_title(title)
        return fig
    from matplotlib.figure import Figure

    counts = [int((table["metric"] == m).sum()) for m in metrics]
    height = sum(ROW_HEIGHT * c + 0.9 for c in counts) + 0.6
    fig = Figure(figsize=figsize or (8.0, height), layout="constrained")
    axes = fig.subplots(len(metrics), 1, gridspec_kw={"height_ratios": counts})
    for panel, metric in zip(axes, metrics, strict=True):
        _rows(panel, table[table["metric"] == metric], differences,
              XLABEL.format(metric), with_metric=False)
        panel.set_title(metric, loc="left", fontsize=10)
    fig.suptitle(title)
    return fig


def _rows(ax: Any, table: pd.DataFrame, differences: pd.DataFrame, xlabel: str,
          with_metric: bool) -> None:
    """Draw ``table``'s rows top to bottom into ``ax``."""
    n = len(table)
    y = np.arange(n)[::-1]
    labels = []
    candidates = list(dict.fromkeys(table["candidate"].astype(str)))
    short = dict(zip(candidates, axis_labels(candidates, 40), strict=True))
    for row_y, row in zip(y, table.itertuples(index=False), strict=True):
        sel = (differences["candidate"] == row.candidate) & (differences["metric"] == row.metric)
        d = differences.loc[sel, "difference"].to_numpy(dtype=float)
        colour = VERDICT_COLOURS[row.verdict]
        jitter = np.linspace(-0.12, 0.12, d.size) if d.size > 1 else np.zeros(d.size)
        ax.scatter(d, row_y + jitter, s=14, color=colour, alpha=0.6, linewidths=0)
        ax.scatter([row.median_difference], [row_y], marker="D", s=50, color=colour,
                   edgecolors="black", zorder=3)
        ax.vlines(-row.margin, row_y - 0.3, row_y + 0.3, color=PALETTE[5], linewidth=2)
        name = short[str(row.candidate)] + (f" ({row.metric})" if with_metric else "")
        labels.append(f"{name}\n{row.verdict}, n = {row.n_datasets}")
    ax.axvline(0.0, color="#333333", linewidth=0.8)
    ax.set_yticks(y, labels, fontsize=8 if n > 20 else 9)
    ax.set_ylim(-0.7, n - 0.3)
    ax.set_xlabel(xlabel)
    ax.grid(axis="x", alpha=0.3)
