"""Shared plot defaults: a colour-blind-safe palette and figure/axes set-up."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
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


def model_colors_for(model_colors: Sequence[str] | Mapping[str, str] | None,
                     models: Sequence[str]) -> list[str]:
    """One colour per model: from a {model: colour} dict, a list in ``models`` order, or
    the palette when ``model_colors`` is None (evaluma's ``model_colors=`` argument)."""
    models = list(models)
    if model_colors is None:
        return [color(k) for k in range(len(models))]
    if isinstance(model_colors, Mapping):
        missing = [m for m in models if m not in model_colors]
        if missing:
            raise ValueError(f"model_colors has no colour for model(s) {missing!r}")
        return [model_colors[m] for m in models]
    if isinstance(model_colors, str):
        raise TypeError(f"model_colors must be a list of colours or a {{model: colour}} dict, "
                        f"got the string {model_colors!r}")
    colors = list(model_colors)
    if len(colors) != len(models):
        raise ValueError(f"model_colors needs one colour per model ({len(models)}), "
                         f"got {len(colors)}")
    return colors


def shorten(name: str, max_len: int) -> str:
    """``name`` cut in the middle with "…" when longer than ``max_len`` characters."""
    if len(name) <= max_len:
        return name
    head = (max_len - 1) // 2 + (max_len - 1) % 2
    return name[:head] + "…" + name[len(name) - (max_len - 1 - head):]


def tick_labels(names: Sequence[Any], max_label: int = 40) -> tuple[list[str], float]:
    """Axis labels for ``names`` (long ones shortened in the middle) and a font size that
    shrinks with their count, so 80 model names stay legible without overlapping."""
    n = len(names)
    size = 9.0 if n <= 20 else 7.0 if n <= 40 else 5.5
    return [shorten(str(name), max_label) for name in names], size
