"""Plots of the AUROC vs AUPRC audit: per-subgroup bars and per-mistake gains."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .style import axis_labels, color, figure_and_axes


def subgroup_bars(table: pd.DataFrame, *, ax: Any = None,
                  figsize: tuple[float, float] | None = None, title: str | None = None) -> Any:
    """AUROC and AUPRC side by side per group; chance levels 0.5 (AUROC) and prevalence (AUPRC)."""
    n = len(table)
    fig, ax = figure_and_axes(ax, figsize, default_size=(max(5.0, 1.4 * n + 2.5) + 2.5, 4.5))
    x = np.arange(n)
    width = 0.38
    auroc = table["auroc"].to_numpy(dtype=float)
    auprc = table["auprc"].to_numpy(dtype=float)
    prevalence = table["prevalence"].to_numpy(dtype=float)
    ax.bar(x - width / 2, auroc, width, color=color(0), label="AUROC")
    ax.bar(x + width / 2, auprc, width, color=color(1), label="AUPRC")
    ax.hlines(prevalence, x + 0.02, x + width, color="#000000", linewidth=2,
              label="AUPRC chance level (prevalence)")
    ax.axhline(0.5, color="#777777", linewidth=0.8, linestyle="--",
               label="AUROC chance level (0.5)")
    names = axis_labels(table["group"], 24)
    labels = [f"{g}\nprev. {p:.2f}" for g, p in zip(names, prevalence, strict=True)]
    ax.set_xticks(x, labels)
    ax.set_ylim(0.0, 1.05)
    ax.set_ylabel("metric value")
    ax.set_xlabel("subgroup (by descending prevalence)")
    ax.set_title(title or "AUROC and AUPRC by subgroup")
    if ax.figure.get_layout_engine() is not None:  # our own figure: legend beside the bars
        ax.figure.legend(loc="outside right upper", fontsize="small", frameon=False)
    else:
        ax.legend(loc="lower left", fontsize="small")
    ax.grid(axis="y", alpha=0.3)
    return fig


def mistake_gain_lines(table: pd.DataFrame, *, ax: Any = None,
                       figsize: tuple[float, float] | None = None, title: str | None = None) -> Any:
    """Gain in AUROC and AUPRC from fixing each mistake, against the mistake's score."""
    fig, ax = figure_and_axes(ax, figsize)
    x = table["score_negative"].to_numpy(dtype=float)
    ax.plot(x, table["auroc_gain"].to_numpy(dtype=float), marker="o", linestyle="-",
            color=color(0), label="AUROC gain")
    ax.plot(x, table["auprc_gain"].to_numpy(dtype=float), marker="s", linestyle="-",
            color=color(1), label="AUPRC gain")
    ax.set_xlabel("score of the mis-ordered pair (upper score)")
    ax.set_ylabel("metric gain from swapping the pair")
    ax.set_title(title or "Gain from fixing each adjacent ranking mistake")
    ax.legend(fontsize="small")
    ax.grid(alpha=0.3)
    return fig
