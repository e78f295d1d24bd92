"""Plots of Bayesian signed-rank results: P(row better) and P(equivalent) heatmaps, stacked bars."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from .style import PALETTE, figure_and_axes, shorten, tick_labels


def probability_matrix(table: pd.DataFrame, models: list[str],
                       column: str = "better") -> np.ndarray:
    """models × models matrix of P(row better than column), or with ``column="equiv"`` of
    P(row and column practically equivalent); NaN where no pair was compared."""
    index = {m: i for i, m in enumerate(models)}
    a = table["model_a"].map(index).to_numpy(dtype=int)
    b = table["model_b"].map(index).to_numpy(dtype=int)
    matrix = np.full((len(models), len(models)), np.nan)
    if column == "equiv":
        matrix[a, b] = matrix[b, a] = table["p_equiv"].to_numpy(dtype=float)
    else:
        matrix[a, b] = table["p_a_better"].to_numpy(dtype=float)
        matrix[b, a] = table["p_b_better"].to_numpy(dtype=float)
    return matrix


def bayes_heatmap(table: pd.DataFrame, models: list[str], rope: float, *, ax: Any = None,
                  figsize: tuple[float, float] | None = None, title: str | None = None,
                  order: Sequence[str] | None = None) -> Any:
    """Heatmaps of P(row model better than column model) and of P(practically equivalent).

    Rows and columns follow ``order`` (e.g. the leaderboard's; models not in it follow),
    else the mean probability of being better. P(column better) is the mirrored cell of
    the first map, so the two maps show all three outcomes. With ``ax`` only the first map
    is drawn there. Cells not compared (the diagonal, pairs left out) are blank; values
    are written in the cells when there are at most 15 models. Beyond 20 models the
    maps are stacked, each as wide as the figure, so that 80 names stay legible.
    """
    better = probability_matrix(table, models)
    # every compared pair fills both (a, b) and (b, a): a kept row is never all NaN
    keep = np.flatnonzero(np.isfinite(better).any(axis=1))
    names = [models[i] for i in keep]
    if order is not None:
        rank = {m: i for i, m in enumerate(order)}
        positions = np.array([rank.get(m, len(rank)) for m in names], dtype=float)
        picked = np.argsort(positions, kind="stable")
    else:
        sub = better[np.ix_(keep, keep)]
        picked = np.argsort(-np.nanmean(sub, axis=1), kind="stable")
    index = keep[picked]
    names = [models[i] for i in index]
    maps = [(better[np.ix_(index, index)], "P(row better than column)"),
            (probability_matrix(table, models, "equiv")[np.ix_(index, index)],
             f"P(practically equivalent, within ±{rope:g})")]
    k = len(names)
    labels, size = tick_labels(names)
    # inches per cell: at 80 models each map still fits a 10-inch page, labels at 5.5 pt
    cell = 0.45 if k <= 15 else 0.3 if k <= 20 else 0.14 if k <= 40 else 0.09
    side = max(3.0, cell * k + 0.07 * max(map(len, labels)) + 0.6)
    stacked = k > 20
    if ax is not None:
        fig, axes = ax.figure, [ax]
        maps = maps[:1]
    else:
        from matplotlib.figure import Figure

        shape = (2, 1) if stacked else (1, 2)
        default = (side + 1.4, 2 * side + 1.6) if stacked else (2 * side + 2.8, side + 0.8)
        fig = Figure(figsize=figsize or default, layout="constrained")
        axes = list(fig.subplots(*shape).ravel())
    for axis, (matrix, label) in zip(axes, maps, strict=False):
        image = axis.imshow(np.ma.masked_invalid(matrix), cmap="viridis", vmin=0.0, vmax=1.0,
                            aspect="equal" if ax is None else "auto")
        axis.set_xticks(np.arange(k), labels, fontsize=size, rotation=45 if k <= 20 else 90,
                        ha="right" if k <= 20 else "center")
        axis.set_yticks(np.arange(k), labels, fontsize=size)
        axis.set_xlabel("column model")
        axis.set_ylabel("row model")
        axis.set_title(label, fontsize=10)
        if k <= 15:
            rows, cols = np.nonzero(np.isfinite(matrix))
            for r, c in zip(rows, cols, strict=True):
                value = matrix[r, c]
                axis.text(c, r, f"{value:.2f}", ha="center", va="center", fontsize=8,
                          color="black" if value > 0.6 else "white")
        fig.colorbar(image, ax=axis, label="posterior probability", shrink=0.8)
    where = "" if order is None else ", leaderboard order"
    heading = title or f"Bayesian signed-rank test, ROPE ±{rope:g}{where}"
    if ax is None:
        fig.suptitle(heading)
    else:
        ax.set_title(title or f"Bayesian signed-rank test: P(row better), ROPE ±{rope:g}")
    return fig


def bayes_stacked_bars(table: pd.DataFrame, reference: str, rope: float, *, ax: Any = None,
                       figsize: tuple[float, float] | None = None,
                       title: str | None = None) -> Any:
    """One horizontal bar per model: P(model better), P(equivalent), P(reference better).

    ``table`` is the reference mode's: the reference in ``model_a``, each model in ``model_b``.
    """
    order = table.sort_values(["p_b_better", "p_equiv"], ascending=False, kind="stable")
    n = len(order)
    fig, ax = figure_and_axes(ax, figsize, default_size=(7.5, max(2.5, (0.45 if n <= 20 else 0.2)
                                                                    * n + 1.5)))
    y = np.arange(n)[::-1]
    left = np.zeros(n)
    parts = [("p_b_better", "model better", PALETTE[0]),
             ("p_equiv", f"equivalent (±{rope:g})", "#BBBBBB"),
             ("p_a_better", f"{shorten(str(reference), 30)} better", PALETTE[5])]
    for column, label, colour in parts:
        values = order[column].to_numpy(dtype=float)
        ax.barh(y, values, left=left, color=colour, label=label, edgecolor="white")
        left = left + values
    labels, size = tick_labels(order["model_b"])
    ax.set_yticks(y, labels, fontsize=size)
    ax.set_xlim(0, 1)
    ax.set_ylim(-0.7, n - 0.3)
    ax.set_xlabel("posterior probability")
    if ax.figure.get_layout_engine() is not None:  # our own figure: legend under the axes
        ax.figure.legend(loc="outside lower center", ncol=3, frameon=False)
    else:
        ax.legend(loc="lower right", fontsize=8)
    ax.set_title(title or f"Bayesian signed-rank test against {reference}")
    return fig
