"""Horizontal bar charts of a ranking, with optional confidence intervals."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .style import PALETTE, figure_and_axes, model_colors_for


def ranking_bars(
    table: pd.DataFrame,
    value: str,
    *,
    ci: tuple[str, str] | None = None,
    ax: Any = None,
    figsize: tuple[float, float] | None = None,
    title: str | None = None,
    xlabel: str | None = None,
    reference_line: float | None = None,
    model_colors: Any = None,
) -> Any:
    """One bar per model (first table row on top), whiskers from the ``ci`` columns.

    ``model_colors``: a {model: colour} dict or a list in table order (default: one colour).
    """
    n = len(table)
    colors = (PALETTE[0] if model_colors is None
              else model_colors_for(model_colors, list(table["model"])))
    fig, ax = figure_and_axes(ax, figsize, default_size=(7.0, max(2.5, 0.4 * n + 1.2)))
    y = np.arange(n)[::-1]
    values = table[value].to_numpy(dtype=float)
    xerr = None
    if ci is not None:
        low = table[ci[0]].to_numpy(dtype=float)
        high = table[ci[1]].to_numpy(dtype=float)
        xerr = np.vstack([values - low, high - values])
    left = reference_line if reference_line is not None else 0.0
    ax.barh(y, values - left, left=left, xerr=xerr, color=colors, alpha=0.85,
            error_kw={"ecolor": "#333333", "capsize": 3, "linewidth": 1})
    ax.set_yticks(y, table["model"].astype(str))
    ax.set_xlabel(xlabel or value)
    if reference_line is not None:
        ax.axvline(reference_line, color="#777777", linewidth=0.8, linestyle="--")
    if ci is not None:
        lo = np.nanmin(np.concatenate([values, low]))
        hi = np.nanmax(np.concatenate([values, high]))
        pad = 0.05 * (hi - lo if hi > lo else 1.0)
        ax.set_xlim(min(lo, left) - pad, hi + pad)
    ax.set_title(title or f"{value} by model")
    ax.grid(axis="x", alpha=0.3)
    return fig
