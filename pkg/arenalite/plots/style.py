"""Shared plot defaults: a colour-blind-safe palette and figure/axes set-up."""

from __future__ import annotations

from typing import Any

# Okabe & Ito (2008) colour-blind-safe palette.
PALETTE = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000"]


def color(i: int) -> str:
    """The i-th palette colour, cycling."""
    return PALETTE[i % len(PALETTE)]


def figure_and_axes(ax: Any = None, figsize: tuple[float, float] | None = None,
                    default_size: tuple[float, float] = (7.0, 4.5)) -> tuple[Any, Any]:
    """Use the given axes (and its figure) or make a new figure without pyplot state."""
    if ax is not None:
        return ax.figure, ax
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize or default_size, layout="constrained")
    return fig, fig.add_subplot()
