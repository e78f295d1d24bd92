"""Annotated heatmaps of a labelled matrix (win rates, ranks per method)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .style import figure_and_axes, tick_labels


def heatmap(
    matrix: pd.DataFrame,
    *,
    ax: Any = None,
    figsize: tuple[float, float] | None = None,
    title: str | None = None,
    colorbar_label: str | None = None,
    fmt: str = "{:.2f}",
    vmin: float | None = None,
    vmax: float | None = None,
    cmap: str = "cividis",
    xlabel: str | None = None,
    ylabel: str | None = None,
) -> Any:
    """Draw ``matrix`` cell by cell (NaN cells left blank), each cell annotated with ``fmt``.

    Rows are drawn top to bottom in the frame's order; the colour map defaults to the
    colour-blind-safe ``cividis``. The default size grows with the matrix (narrower
    cells beyond 20 rows or columns) and long names are shortened on the axes.
    """
    n_rows, n_cols = matrix.shape
    row_labels, row_size = tick_labels(matrix.index)
    col_labels, col_size = tick_labels(matrix.columns)
    width = 0.7 if n_cols <= 20 else 0.18
    height = 0.5 if n_rows <= 20 else 0.2
    default = (min(max(4.0, width * n_cols + 2.5 + 0.06 * max(map(len, row_labels))), 16.0),
               min(max(3.0, height * n_rows + 1.5 + 0.05 * max(map(len, col_labels))), 20.0))
    fig, ax = figure_and_axes(ax, figsize, default_size=default)
    values = matrix.to_numpy(dtype=float)
    image = ax.imshow(np.ma.masked_invalid(values), cmap=cmap, vmin=vmin, vmax=vmax,
                      aspect="auto")
    ax.set_xticks(np.arange(n_cols), col_labels, fontsize=col_size,
                  rotation=45 if n_cols <= 20 else 90, ha="right" if n_cols <= 20 else "center")
    ax.set_yticks(np.arange(n_rows), row_labels, fontsize=row_size)
    if n_rows * n_cols <= 400:
        rgba = image.cmap(image.norm(values))
        light = rgba[..., :3] @ np.array([0.299, 0.587, 0.114]) > 0.5
        for i, j in zip(*np.nonzero(np.isfinite(values)), strict=True):
            ax.text(j, i, fmt.format(values[i, j]), ha="center", va="center",
                    fontsize=min(8.0, row_size),
                    color="black" if light[i, j] else "white")
    bar = fig.colorbar(image, ax=ax)
    if colorbar_label:
        bar.set_label(colorbar_label)
    ax.set_xlabel(xlabel if xlabel is not None else (matrix.columns.name or ""))
    ax.set_ylabel(ylabel if ylabel is not None else (matrix.index.name or ""))
    ax.set_title(title or "")
    return fig
