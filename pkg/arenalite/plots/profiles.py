"""Performance-profile step plot: one line per model on a log-scaled τ axis (raw ratios).

With many models the lines of the best :data:`MAX_COLOURED` (by AUP) are drawn in the
palette and the others in thin grey, under one legend entry, so the leaders stay
readable with 80 models; the AUP table lists every model. The legend moves outside
the axes when it is long or the names are.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .style import axis_labels, figure_and_axes, model_colors_for

LINESTYLES = ("-", "--", "-.", ":")
MAX_COLOURED = 10
"""Above this many models only the best MAX_COLOURED (by AUP) get a colour and a legend entry."""
GREY = "#b8b8b8"


NICE_RATIOS = np.unique(np.concatenate([[1.01, 1.02, 1.05, 1.1, 1.2, 1.3],
                                        np.outer([1, 1.5, 2, 3, 5], 10.0 ** np.arange(7)).ravel()]))
"""Tick candidates for the τ axis."""


def ratio_ticks(end: float, min_gap: float = 0.12) -> np.ndarray:
    """Round ratios from 1 to ``end``, at least ``min_gap`` of the log span apart."""
    span = np.log10(end)
    keep = [1.0]
    for tick in NICE_RATIOS[(NICE_RATIOS > 1.0) & (NICE_RATIOS <= end)]:
        if np.log10(tick / keep[-1]) >= min_gap * span:
            keep.append(float(tick))
    if len(keep) == 1:
        keep.append(float(f"{end:.6g}"))
    return np.array(keep)


SHOWN_SHARE = 0.98
"""The default τ axis ends where this share of all model × dataset ratios lies within τ."""


def view_end(taus: np.ndarray, rho: np.ndarray, share: float = SHOWN_SHARE) -> float:
    """Where the τ axis ends by default: the smallest breakpoint at which ``share`` of all
    model × dataset ratios are within τ (ρ averaged over models, T × M ``rho``), so that a
    few far-off ratios do not squeeze every profile into the axis's first tenth."""
    within = np.asarray(rho, dtype=float).mean(axis=1)
    return float(taus[min(int(np.searchsorted(within, share - 1e-12)), len(taus) - 1)])


def profile_plot(
    taus: np.ndarray,
    rho: pd.DataFrame,
    aup: pd.Series,
    *,
    ax: Any = None,
    figsize: tuple[float, float] | None = None,
    title: str | None = None,
    model_colors: Any = None,
    max_label: int = 40,
    tau_max: float | None = None,
) -> Any:
    """Draw ρ_i(τ) as right-continuous steps against τ on a log axis, legend with AUP.

    ``rho``'s columns are the models best first (by AUP). The axis runs to ``tau_max``;
    by default to :func:`view_end` (where 98 % of the ratios lie), and the label says
    where it was cut; the lines run on to a small margin past it so the last step shows.
    AUP is always the area up to the largest ratio. ``model_colors``: a
    {model: colour} dict or a list in column order; given, every model gets its colour.
    Names longer than ``max_label`` characters are shortened in the middle.
    """
    models = list(rho.columns)
    n = len(models)
    coloured = n if model_colors is not None or n <= MAX_COLOURED + 2 else MAX_COLOURED
    colors = model_colors_for(model_colors, models[:coloured])  # all of them when given
    outside = coloured > 8 or max(len(str(m)) for m in models) > 30
    fig, ax = figure_and_axes(ax, figsize, default_size=(10.0 if outside else 7.5, 4.8))
    largest = float(taus[-1])
    shown = view_end(taus, rho.to_numpy()) if tau_max is None else float(tau_max)
    end = shown * 1.05 if shown > 1.0 else 1.05
    x = np.append(taus, max(end, largest))
    labels = axis_labels(models[:coloured], max_label)
    for k in range(n - 1, -1, -1):  # the best drawn last, on top
        model = models[k]
        values = rho[model].to_numpy(dtype=float)
        y = np.append(values, values[-1])
        if k < coloured:
            ax.step(x, y, where="post", color=colors[k], linewidth=1.6,
                    linestyle=LINESTYLES[(k // 8) % len(LINESTYLES)],
                    label=f"{labels[k]} (AUP {aup[model]:.3f})", zorder=3)
        else:
            ax.step(x, y, where="post", color=GREY, linewidth=0.7, zorder=2,
                    label=f"{n - coloured} other models" if k == coloured else None)
    ax.set_xscale("log")
    ax.set_xlim(1.0, end)
    ticks = ratio_ticks(end)
    ax.set_xticks(ticks, [f"{t:g}" for t in ticks])
    ax.set_xticks([], minor=True)
    ax.set_ylim(0.0, 1.02)
    cut = (f"\naxis cut at τ = {shown:.3g}, {SHOWN_SHARE:.0%} of the ratios; the largest is "
           f"{largest:.3g}" if tau_max is None and shown < largest else "")
    ax.set_xlabel(f"τ: ratio to the best score on each dataset (log scale){cut}")
    ax.set_ylabel("share of datasets within τ of the best")
    ax.set_title(title or "Performance profiles (higher and further left is better)")
    ax.grid(alpha=0.3)
    handles, labels = ax.get_legend_handles_labels()
    place = ({"loc": "upper left", "bbox_to_anchor": (1.01, 1.0), "fontsize": 7, "frameon": False}
             if outside else {"loc": "lower right", "fontsize": 8})
    ax.legend(handles[::-1], labels[::-1], **place)  # drawn worst first: reversed, best first
    return fig
