"""Plots of Bayesian signed-rank results: P(row better) heatmap and stacked bars per model."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .style import PALETTE, figure_and_axes, shorten, tick_labels


def probability_matrix(table: pd.DataFrame, models: list[str]) -> np.ndarray:
    """models × models matrix of P(row better than column); NaN where no pair was compared."""
    index = {m: i for i, m in enumerate(models)}
    a = table["model_a"].map(index).to_numpy(dtype=int)
    b = table["model_b"].map(index).to_numpy(dtype=int)
    matrix = np.full((len(models), len(models)), np.nan)
    matrix[a, b] = table["p_a_better"].to_numpy(dtype=float)
    matrix[b, a] = table["p_b_better"].to_numpy(dtype=float)
    return matrix


def bayes_heatmap(table: pd.DataFrame, models: list[str], rope: float, *, ax: Any = None,
                  figsize: tuple[float, float] | None = None, title: str | None = None) -> Any:
    """Heatmap of P(row model better than column model); rows sorted by mean probability.

    Cells not compared (the diagonal, pairs left out) are blank. Values are written
    in the cells when there are at most 15 models.
    """
    matrix = probability_matrix(table, models)
    # every compared pair fills both (a, b) and (b, a): a kept row is never all NaN
    keep = np.flatnonzero(np.isfinite(matrix).any(axis=1))
    matrix = matrix[np.ix_(keep, keep)]
    names = [models[i] for i in keep]
    order = np.argsort(-np.nanmean(matrix, axis=1), kind="stable")
    matrix = matrix[np.ix_(order, order)]
    names = [names[i] for i in order]
    k = len(names)
    labels, size = tick_labels(names)
    side = min(3.0 + 0.45 * k, 14.0)
    fig, ax = figure_and_axes(ax, figsize, default_size=(side + 1.5, side))
    image = ax.imshow(np.ma.masked_invalid(matrix), cmap="viridis", vmin=0.0, vmax=1.0,
                      aspect="auto")
    ax.set_xticks(np.arange(k), labels, fontsize=size, rotation=45 if k <= 20 else 90,
                  ha="right" if k <= 20 else "center")
    ax.set_yticks(np.arange(k), labels, fontsize=size)
    ax.set_xlabel("column model")
    ax.set_ylabel("row model")
    if k <= 15:
        rows, cols = np.nonzero(np.isfinite(matrix))
        for r, c in zip(rows, cols, strict=True):
            value = matrix[r, c]
            ax.text(c, r, f"{value:.2f}", ha="center", va="center", fontsize=8,
                    color="black" if value > 0.6 else "white")
    fig.colorbar(image, ax=ax, label="P(row better than column)")
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
