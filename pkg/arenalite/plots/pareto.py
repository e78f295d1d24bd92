"""Elo against inference time: the leaderboard's Pareto figure (TabArena's most-read plot
after its table)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .style import PALETTE, figure_and_axes, shorten

MARKERS = ("o", "s", "^", "D", "v", "P")
OFF_FRONT = "#8C8C8C"
FRONT_WITH_VARIANTS = "#333333"
"""The front's line when colours tell models apart (a palette colour would read as a model)."""
TIME_LABELS = {
    "median_time_infer_s_per_1K": "inference time per 1K rows (s), median over datasets",
    "time_infer_s_per_1K": "inference time per 1K rows (s), mean over datasets",
    "median_time_infer_s": "inference time (s), median over datasets",
    "time_infer_s": "inference time (s), mean over datasets",
}
MAX_LABELS = 20
"""With more models than this, only the Pareto-optimal ones are labelled."""


def pareto_plot(table: pd.DataFrame, time: str, front: np.ndarray, *,
                variants: pd.DataFrame | None = None, ax: Any = None,
                figsize: tuple[float, float] | None = None, title: str | None = None,
                anchor: str | None = None, level: str = "95 %") -> Any:
    """Elo with its ``level`` whiskers (``elo-``/``elo+``) against ``time`` on a log axis.

    ``front`` marks the Pareto-optimal rows, joined by a line in time order and labelled.
    With ``variants`` (per model its ``base`` model and ``runner``) a base model's runners
    share a colour, each runner has its marker, and a dotted line joins them.
    """
    seconds = table[time].to_numpy(dtype=float)
    if not (np.isfinite(seconds) & (seconds > 0)).all():
        k = int(np.argmax(~(np.isfinite(seconds) & (seconds > 0))))
        raise ValueError(f"model {table['model'].iloc[k]!r} has {time} = {seconds[k]!r}; a log "
                         "axis needs times > 0")
    models = table["model"].astype(str).to_numpy()
    elo = table["elo"].to_numpy(dtype=float)
    err = np.vstack([table["elo-"].to_numpy(dtype=float), table["elo+"].to_numpy(dtype=float)])
    fig, ax = figure_and_axes(ax, figsize, default_size=(7.5, 5.0))
    colours, markers = _styles(models, front, variants)
    for k in range(len(models)):
        ax.errorbar(seconds[k], elo[k], yerr=err[:, k:k + 1], fmt=markers[k], color=colours[k],
                    markersize=7 if front[k] else 6, elinewidth=1.0, capsize=2.5,
                    markeredgecolor="black" if front[k] else colours[k], zorder=3)
    if variants is not None:
        for _, rows in variants.loc[models].reset_index().groupby("base", sort=True):
            if len(rows) > 1:
                at = np.flatnonzero(np.isin(models, rows["model"].to_numpy()))
                at = at[np.argsort(seconds[at])]
                ax.plot(seconds[at], elo[at], linestyle=":", linewidth=1.0,
                        color=colours[at[0]], zorder=2)
    on = np.flatnonzero(front)
    on = on[np.argsort(seconds[on])]
    front_colour = PALETTE[0] if variants is None else FRONT_WITH_VARIANTS
    ax.plot(seconds[on], elo[on], color=front_colour, linewidth=1.6, zorder=2,
            label="Pareto front (no other model is both faster and rated higher)")
    label_all = len(models) <= MAX_LABELS
    shown = [k for k in range(len(models)) if front[k] or label_all]
    for k, (offset, align) in zip(shown, label_offsets(np.log10(seconds[shown]), elo[shown]),
                                  strict=True):
        ax.annotate(shorten(models[k], 28), (seconds[k], elo[k]), xytext=offset,
                    textcoords="offset points", ha=align, fontsize=8 if front[k] else 7,
                    color="black" if front[k] else "#555555",
                    fontweight="bold" if front[k] else "normal")
    ax.set_xscale("log")
    ax.margins(x=0.15, y=0.08)
    ax.set_xlabel(TIME_LABELS.get(time, time) + " (log scale)")
    scale = f", anchored on {anchor}" if anchor else ""
    ax.set_ylabel(f"Elo ({level} interval{scale})")
    ax.grid(True, which="major", linewidth=0.4, color="#DDDDDD")
    if variants is not None:
        for runner, marker in _runner_markers(variants).items():
            ax.plot([], [], linestyle="none", marker=marker, color="#444444",
                    label=f"runner: {runner}")
    ax.legend(loc="lower right", fontsize=8, frameon=False)
    ax.set_title(title or "Elo against inference time: the Pareto front")
    return fig


LABEL_SPOTS = (((6, 5), "left"), ((6, -13), "left"), ((-6, 5), "right"), ((-6, -13), "right"))
"""Where a point's label may go (offset in points, alignment), in order of preference."""


def label_offsets(x: np.ndarray, y: np.ndarray) -> list[tuple[tuple[int, int], str]]:
    """A label spot per point, avoiding spots that sit on a neighbour's label: points closer
    than 15 % of the x range and 6 % of the y range take the next free spot."""
    span_x = max(float(np.ptp(x)), 1e-12) if x.size else 1.0
    span_y = max(float(np.ptp(y)), 1e-12) if y.size else 1.0
    placed: list[tuple[float, float, int]] = []
    out = []
    for k in np.argsort(x, kind="stable"):
        near = {spot for px, py, spot in placed
                if abs(px - x[k]) < 0.15 * span_x and abs(py - y[k]) < 0.06 * span_y}
        spot = next((i for i in range(len(LABEL_SPOTS)) if i not in near), 0)
        placed.append((float(x[k]), float(y[k]), spot))
        out.append((int(k), LABEL_SPOTS[spot]))
    return [spot for _, spot in sorted(out)]


def _runner_markers(variants: pd.DataFrame) -> dict[str, str]:
    runners = sorted(variants["runner"].astype(str).unique())
    return {r: MARKERS[i % len(MARKERS)] for i, r in enumerate(runners)}


def _styles(models: np.ndarray, front: np.ndarray,
            variants: pd.DataFrame | None) -> tuple[list[str], list[str]]:
    """Colour and marker per model: by base model and runner with variants, else the front
    in the palette's first colour and the rest grey."""
    if variants is None:
        return ([PALETTE[0] if f else OFF_FRONT for f in front], ["o"] * len(models))
    rows = variants.loc[models]
    bases = sorted(rows["base"].unique())
    colour = {b: PALETTE[i % len(PALETTE)] for i, b in enumerate(bases)}
    marker = _runner_markers(variants)
    return ([colour[b] for b in rows["base"]], [marker[str(r)] for r in rows["runner"]])
