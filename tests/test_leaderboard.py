"""Leaderboard (TabArena's table), normalized error, and the interval plot."""

from __future__ import annotations

import matplotlib
import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure

from arenalite.plots.intervals import axis_labels, interval_plot, shorten

matplotlib.use("Agg")


# ---- the interval plot --------------------------------------------------------------------
def test_shorten_cuts_the_middle_and_keeps_labels_distinct():
    assert shorten("abcdefghij", 5) == "ab…ij"
    assert shorten("abcdefghij", 6) == "abc…ij"
    assert shorten("short", 40) == "short"
    same_ends = ["prefix-" + str(i) * 30 + "-suffix" for i in range(3)]
    assert axis_labels(same_ends, 12) == same_ends  # cutting would merge them: kept whole


def test_interval_plot_points_whiskers_and_80_rows():
    n = 80
    values = np.linspace(1300, 700, n)
    table = pd.DataFrame({"model": [f"model-{i}-" + "x" * 60 for i in range(n)],
                          "elo": values, "low": values - 30, "high": values + 20})
    fig = interval_plot(table, "elo", low="low", high="high", reference_line=1000.0,
                        title="Elo", xlabel="rating")
    ax = fig.axes[0]
    assert isinstance(fig, Figure) and ax.get_title() == "Elo" and ax.get_xlabel() == "rating"
    segments = ax.collections[0].get_segments()
    assert len(segments) == n
    top = segments[0]  # first table row is drawn on top (largest y)
    assert top[0][0] == pytest.approx(1270) and top[1][0] == pytest.approx(1320)
    assert top[0][1] == n - 1
    assert np.allclose(ax.collections[1].get_offsets()[:, 0], values)
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert len(labels) == n and all(len(t) <= 40 for t in labels) and len(set(labels)) == n
    assert fig.get_size_inches()[1] > 15  # grows with the number of rows


def test_interval_plot_without_interval_and_into_given_axes():
    table = pd.DataFrame({"model": ["a", "b"], "score": [2.0, 1.0]})
    ax = Figure().add_subplot()
    fig = interval_plot(table, "score", ax=ax, model_colors={"a": "#000000", "b": "#E69F00"})
    assert fig is ax.figure and len(ax.collections) == 1
    with pytest.raises(ValueError, match="low and high"):
        interval_plot(table, "score", low="score")
