"""Bump chart: each model's rank under each condition, joined by a line per model."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .style import color, figure_and_axes


def rank_bump_chart(ranks: pd.DataFrame, *, ax: Any = None,
                    figsize: tuple[float, float] | None = None, title: str | None = None) -> Any:
    """``ranks``: model × condition ranks (1 = best), rank 1 on top.

    Models are labelled at both ends as "rank. name"; tied models share one label.
    """
    k, c = ranks.shape
    longest = max(len(str(m)) for m in ranks.index)
    width = min(2.0 + 1.8 * c + 0.2 * longest, 18.0)
    fig, ax = figure_and_axes(ax, figsize, default_size=(width, max(3.0, 0.35 * k + 1.5)))
    x = np.arange(c)
    for i, (_, row) in enumerate(ranks.iterrows()):
        ax.plot(x, row.to_numpy(dtype=float), marker="o", color=color(i), linewidth=1.5)
    for column, position, align in ((ranks.columns[0], x[0] - 0.08, "right"),
                                    (ranks.columns[-1], x[-1] + 0.08, "left")):
        for rank, models in ranks.groupby(column, sort=True).groups.items():
            label = f"{rank:g}. " + ", ".join(str(m) for m in models)
            ax.text(position, rank, label, ha=align, va="center", fontsize=9)
    ax.set_xticks(x, [str(col) for col in ranks.columns])
    ax.set_xlim(-0.3, c - 0.7)
    ax.set_ylim(k + 0.5, 0.5)
    ax.set_yticks([])
    ax.set_xlabel("condition (rank 1 = best, on top)")
    ax.set_title(title or "Model ranks across conditions")
    for side in ("left", "right", "top"):
        ax.spines[side].set_visible(False)
    return fig
