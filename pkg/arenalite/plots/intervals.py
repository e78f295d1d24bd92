"""Ratings as points with interval whiskers, one row per model, readable with 80 models.

Used by every rating that has an interval (Elo, the leaderboard, IQM, …). Points do not
suggest a quantity rising from an arbitrary origin as bars from 1000 would, and
whiskers drawn as plain segments also show intervals that do not contain the point.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .style import PALETTE, axis_labels, figure_and_axes, model_colors_for

ROW_HEIGHT = 0.22  # inches per model row
CROWDED = 40  # rows above which tick labels get a smaller font


def interval_plot(
    table: pd.DataFrame,
    value: str,
    *,
    low: str | None = None,
    high: str | None = None,
    label: str = "model",
    ax: Any = None,
    figsize: tuple[float, float] | None = None,
    title: str | None = None,
    xlabel: str | None = None,
    reference_line: float | None = None,
    model_colors: Any = None,
    max_label: int = 40,
) -> Any:
    """Draw one row per ``table`` row, first row on top, and return the Figure.

    - ``value``: column of the point estimates (a dot per row).
    - ``low`` / ``high``: columns of the interval ends, both or neither; the whisker is
      the segment between them (drawn even when it does not contain the point).
    - ``label``: column of the row names; names longer than ``max_label`` characters
      are shortened in the middle with "…" on the axis only, less where two labels
      would otherwise be equal (:func:`.style.axis_labels`).
    - ``reference_line``: x of a dashed vertical guide (e.g. 1000 for Elo), or None.
    - ``model_colors``: a {name: colour} dict or a list in table order (default: one
      palette colour for all).
    - ``ax`` / ``figsize``: draw into existing axes, or a new figure of that size (by
      default 7 in wide and ``ROW_HEIGHT`` in per row).
    """
    if (low is None) != (high is None):
        raise ValueError(f"interval_plot needs both low and high columns or neither, got "
                         f"low={low!r}, high={high!r}")
    names = [str(v) for v in table[label]]
    n = len(names)
    colors = (PALETTE[0] if model_colors is None else model_colors_for(model_colors, names))
    fig, ax = figure_and_axes(ax, figsize,
                              default_size=(7.0, max(2.5, ROW_HEIGHT * n + 1.2)))
    y = np.arange(n)[::-1]
    points = table[value].to_numpy(dtype=float)
    ends = [points]
    if low is not None:
        lo = table[low].to_numpy(dtype=float)
        hi = table[high].to_numpy(dtype=float)
        ax.hlines(y, lo, hi, colors=colors, linewidth=1.6, alpha=0.8, zorder=2)
        ends += [lo, hi]
    ax.scatter(points, y, s=22 if n > CROWDED else 36, c=colors, edgecolors="#222222",
               linewidths=0.5, zorder=3)
    ax.set_yticks(y, axis_labels(names, max_label), fontsize=7 if n > CROWDED else 9)
    ax.set_ylim(-0.7, n - 0.3)
    if reference_line is not None:
        ax.axvline(reference_line, color="#777777", linewidth=0.8, linestyle="--", zorder=1)
    span = np.concatenate(ends)
    span = span[np.isfinite(span)]
    if span.size:
        lo_x, hi_x = float(span.min()), float(span.max())
        pad = 0.05 * (hi_x - lo_x if hi_x > lo_x else 1.0)
        ax.set_xlim(lo_x - pad, hi_x + pad)
    ax.grid(axis="x", alpha=0.3)
    ax.grid(axis="y", alpha=0.12)
    ax.set_axisbelow(True)
    ax.set_xlabel(xlabel or value)
    ax.set_title(title or f"{value} by {label}")
    return fig
