"""Performance-profile step plot: one line per model on a log10 τ axis."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .style import figure_and_axes, model_colors_for

LINESTYLES = ("-", "--", "-.", ":")


def profile_plot(
    taus: np.ndarray,
    rho: pd.DataFrame,
    aup: pd.Series,
    *,
    ax: Any = None,
    figsize: tuple[float, float] | None = None,
    title: str | None = None,
    model_colors: Any = None,
) -> Any:
    """Draw ρ_i(τ) as right-continuous steps against log10 τ, legend labelled with AUP.

    The lines run on to a small margin past the largest ratio so the last step shows.
    ``model_colors``: a {model: colour} dict or a list in column order (default palette).
    """
    colors = model_colors_for(model_colors, list(rho.columns))
    fig, ax = figure_and_axes(ax, figsize, default_size=(7.5, 4.5))
    x = np.log10(taus)
    end = x[-1] + max(0.05 * x[-1], 0.01)
    x_line = np.append(x, end)
    for k, model in enumerate(rho.columns):
        values = rho[model].to_numpy(dtype=float)
        ax.step(x_line, np.append(values, values[-1]), where="post", color=colors[k],
                linestyle=LINESTYLES[(k // 8) % len(LINESTYLES)], linewidth=1.6,
                label=f"{model} (AUP {aup[model]:.3f})")
    ax.set_xlim(0.0, end)
    ax.set_ylim(0.0, 1.02)
    ax.set_xlabel("log10(τ): ratio to the best score on each dataset")
    ax.set_ylabel("share of datasets within τ of the best")
    ax.set_title(title or "Performance profiles (higher and further left is better)")
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right", fontsize=8)
    return fig
