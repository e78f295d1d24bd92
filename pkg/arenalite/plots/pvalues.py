"""(Adjusted) p-values as points on a log axis against a significance level.

Points rather than bars: a bar on a log axis has no natural origin, and the smallest
(most significant) p-values would be the shortest bars.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .style import PALETTE, figure_and_axes, tick_labels


def pvalue_bars(labels: Any, p_values: Any, alpha: float, *, ax: Any = None,
                figsize: tuple[float, float] | None = None, title: str | None = None) -> Any:
    """One point per comparison on a log10 axis; points left of the dashed α line are
    significant (coloured), the others grey. Smallest p-value on top."""
    names, size = tick_labels(labels)
    p = np.asarray(p_values, dtype=float)
    order = np.argsort(p, kind="stable")[::-1]
    n = len(names)
    fig, ax = figure_and_axes(ax, figsize, default_size=(7.0, max(2.5, (0.4 if n <= 20 else 0.2)
                                                                    * n + 1.2)))
    y = np.arange(n)
    shown = np.clip(p[order], 1e-12, 1.0)
    colors = [PALETTE[0] if value < alpha else "#999999" for value in p[order]]
    ax.hlines(y, shown, 1.0, colors="#DDDDDD", linewidth=0.8, zorder=1)
    ax.scatter(shown, y, c=colors, s=30 if n <= 40 else 16, zorder=3)
    ax.set_xscale("log")
    ax.set_xlim(min(float(shown.min()), alpha) / 2, 1.3)
    ax.set_yticks(y, [names[i] for i in order], fontsize=size)
    ax.set_ylim(-0.7, n - 0.3)
    ax.axvline(alpha, color="#333333", linestyle="--", linewidth=1)
    ax.set_xlabel(f"Holm-adjusted p-value (log scale); dashed line: α = {alpha:g}")
    ax.set_title(title or "Adjusted p-values", wrap=True)
    ax.grid(axis="x", alpha=0.3)
    return fig
