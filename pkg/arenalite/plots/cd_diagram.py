"""Critical-difference diagram (Demšar 2006): average ranks on an axis, cliques as bars.

The better half of the models is labelled on the left, the rest on the right,
each joined to its average rank by an elbow line. Models whose average ranks do
not differ significantly (a clique) are joined by a thick bar under the axis.
Height grows with the number of models so that 20–80 models with long names stay
readable (names beyond 60 characters are shortened in the middle, rank labels thinned
past 20 models); labels sit outside the rank axis and constrained layout makes room.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .style import PALETTE, axis_labels, figure_and_axes

_ROW = 1.0          # vertical distance between label rows (data units)
_CLIQUE_ROW = 0.55  # vertical distance between clique bars


def cd_diagram(avg_ranks: pd.Series, cd: float, cliques: list[list[str]], *, ax: Any = None,
               figsize: tuple[float, float] | None = None, title: str | None = None) -> Any:
    """Draw the diagram for ``avg_ranks`` (Series indexed by model, best first)."""
    ranks = avg_ranks.sort_values(kind="stable")
    names = axis_labels(ranks.index, 60)
    values = ranks.to_numpy(dtype=float)
    k = len(values)
    n_left = (k + 1) // 2
    n_rows = max(n_left, k - n_left)
    clique_depth = len(cliques) * _CLIQUE_ROW
    longest = max(len(s) for s in names)
    default = (min(7.0 + 0.09 * longest, 14.0), 1.3 + 0.26 * (n_rows + 1) + 0.2 * len(cliques))
    fig, ax = figure_and_axes(ax, figsize, default_size=default)

    low, high = 1.0, float(max(k, 2))
    ax.plot([low, high], [0, 0], color="black", linewidth=1.2)
    ticks = np.arange(1, int(high) + 1)
    tick_len = 0.18
    ax.vlines(ticks, 0, tick_len, color="black", linewidth=1.0)
    step = 1 if k <= 20 else 5 if k <= 60 else 10  # rank labels that do not overlap
    for t in ticks[(ticks == 1) | (ticks % step == 0)]:
        ax.text(t, tick_len * 1.5, str(t), ha="center", va="bottom", fontsize=9)

    cd_y = 1.2
    ax.plot([low, low + cd], [cd_y, cd_y], color=PALETTE[5], linewidth=2.0)
    ax.vlines([low, low + cd], cd_y - 0.12, cd_y + 0.12, color=PALETTE[5], linewidth=2.0)
    ax.text(low + cd / 2, cd_y + 0.18, f"CD = {cd:.2f}", ha="center", va="bottom",
            fontsize=9, color=PALETTE[5])

    for depth, members in enumerate(cliques):
        member_ranks = ranks.loc[members].to_numpy(dtype=float)
        y = -(depth + 1) * _CLIQUE_ROW
        ax.plot([member_ranks.min() - 0.03, member_ranks.max() + 0.03], [y, y],
                color=PALETTE[0], linewidth=4.0, solid_capstyle="round")

    first_row = -clique_depth - _ROW
    for i, (name, value) in enumerate(zip(names, values, strict=True)):
        left = i < n_left
        row = i if left else k - 1 - i
        y = first_row - row * _ROW
        x_end = low - 0.15 if left else high + 0.15
        ax.plot([value, value, x_end], [0, y, y], color="#444444", linewidth=0.9)
        ax.text(x_end - 0.05 if left else x_end + 0.05, y, f"{name} ({value:.2f})",
                ha="right" if left else "left", va="center", fontsize=9)

    ax.set_xlim(low - 0.2, high + 0.2)
    ax.set_ylim(first_row - (n_rows - 1) * _ROW - 0.6, cd_y + 0.8)
    ax.axis("off")
    ax.set_title(title or "Critical-difference diagram (average rank, 1 = best)", fontsize=10)
    return fig
