"""Horizontal bars of (adjusted) p-values against a significance level."""

from __future__ import annotations

from typing import Any

import numpy as np

from .style import PALETTE, figure_and_axes


def pvalue_bars(labels: Any, p_values: Any, alpha: float, *, ax: Any = None,
                figsize: tuple[float, float] | None = None, title: str | None = None) -> Any:
    """One bar per comparison on a log10 axis; bars left of the dashed α line are
    significant (coloured), the others grey. Smallest p-value on top."""
    labels = [str(label) for label in labels]
    p = np.asarray(p_values, dtype=float)
    order = np.argsort(p, kind="stable")[::-1]
    n = len(labels)
    fig, ax = figure_and_axes(ax, figsize, default_size=(7.0, max(2.5, 0.4 * n + 1.2)))
    y = np.arange(n)
    shown = np.clip(p[order], 1e-12, 1.0)
    colors = [PALETTE[0] if value < alpha else "#BBBBBB" for value in p[order]]
    ax.barh(y, shown, color=colors)
    ax.set_xscale("log")
    ax.set_yticks(y, [labels[i] for i in order])
    ax.axvline(alpha, color="#333333", linestyle="--", linewidth=1, label=f"α = {alpha:g}")
    ax.set_xlabel("Holm-adjusted p-value (log scale)")
    ax.legend(loc="lower right")
    ax.set_title(title or "Adjusted p-values")
    ax.grid(axis="x", alpha=0.3)
    return fig
