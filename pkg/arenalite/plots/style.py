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
    head = max_len // 2  # the longer half when max_len - 1 is odd
    return name[:head] + "…" + name[len(name) - (max_len - 1 - head):]


def axis_labels(names: Sequence[Any], max_len: int) -> list[str]:
    """``names`` shortened in the middle to ``max_len`` characters (:func:`shorten`); names
    whose labels would clash (configurations that differ only mid-name) are shortened
    less, two characters at a time, until every label stands for one name."""
    texts = [str(name) for name in names]
    labels = [shorten(text, max_len) for text in texts]
    length = max_len
    while True:
        owners: dict[str, set[str]] = {}
        for text, label in zip(texts, labels, strict=True):
            owners.setdefault(label, set()).add(text)
        clashing = {label for label, owned in owners.items() if len(owned) > 1}
        if not clashing:
            return labels
        length += 2
        labels = [shorten(text, length) if label in clashing else label
                  for text, label in zip(texts, labels, strict=True)]


def tick_labels(names: Sequence[Any], max_label: int = 40) -> tuple[list[str], float]:
    """Axis labels for ``names`` (:func:`axis_labels`) and a font size that shrinks with
    their count, so 80 model names stay legible without overlapping."""
    n = len(names)
    size = 9.0 if n <= 20 else 7.0 if n <= 40 else 5.5
    return axis_labels(names, max_label), size
