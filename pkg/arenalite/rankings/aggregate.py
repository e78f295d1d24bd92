"""Aggregate ranking: one summary of each model's normalized scores over datasets.

``trimmed_mean`` (default) cuts 25 % of the datasets from each end before averaging
(the definition of ``scipy.stats.trim_mean(x, 0.25)``), so a few outlier datasets
cannot carry a model; ``mean`` and ``median`` are the plain alternatives. A point
estimate only: for intervals over seeds use :mod:`arenalite.rankings.iqm`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..params import check_choice
from ..results import Result

if TYPE_CHECKING:
    from ..benchmark import Benchmark

AGGREGATES = ("trimmed_mean", "mean", "median")
_LABELS = {"trimmed_mean": "Trimmed mean (25 %)", "mean": "Mean", "median": "Median"}


def trim_mean(x: np.ndarray, proportion: float = 0.25, axis: int = -1) -> np.ndarray:
    """Mean after cutting ``int(proportion * n)`` values from each end along ``axis``.

    Same definition as ``scipy.stats.trim_mean`` (n = 8 → the middle 4 values;
    n = 6 → the middle 4; n < 4 → the plain mean).
    """
    if not 0 <= proportion < 0.5:
        raise ValueError(f"proportion must be in [0, 0.5), got {proportion!r}")
    values = np.sort(np.asarray(x, dtype=float), axis=axis)
    n = values.shape[axis]
    if n == 0:
        raise ValueError("trim_mean needs at least one value")
    cut = int(proportion * n)
    return np.take(values, np.arange(cut, n - cut), axis=axis).mean(axis=axis)


def aggregate_scores(matrix: np.ndarray, agg: str = "trimmed_mean") -> np.ndarray:
    """Row-wise aggregate of a models × datasets matrix (no missing values)."""
    check_choice(agg, "agg", AGGREGATES)
    matrix = np.asarray(matrix, dtype=float)
    if matrix.ndim != 2 or matrix.shape[1] == 0:
        raise ValueError(f"need a models × datasets matrix with at least one dataset, "
                         f"got shape {matrix.shape}")
    if not np.isfinite(matrix).all():
        raise ValueError("the score matrix has missing or non-finite values; load with "
                         "drop_incomplete=True or select complete models")
    if agg == "trimmed_mean":
        return trim_mean(matrix, 0.25, axis=1)  # sorts the rows itself
    matrix = np.sort(matrix, axis=1)  # same multiset → bit-identical result (exact ties)
    if agg == "mean":
        return matrix.mean(axis=1)
    return np.median(matrix, axis=1)


def ranking_table(models: Sequence[str], values: np.ndarray, column: str,
                  extra: dict[str, np.ndarray] | None = None) -> pd.DataFrame:
    """``model, <column>[, extra…]`` sorted by ``column`` descending, ties by model name."""
    table = pd.DataFrame({"model": list(models), column: np.asarray(values, dtype=float),
                          **(extra or {})})
    return table.sort_values([column, "model"], ascending=[False, True], kind="stable",
                             ignore_index=True)


class AggregateResult(Result):
    """Aggregate ranking: ``.table`` has columns ``model, score`` (descending)."""

    method = "aggregate"

    def plot(self, ax: Any = None, figsize: tuple[float, float] | None = None,
             title: str | None = None,
             model_colors: Sequence[str] | dict[str, str] | None = None) -> Any:
        """One point per model, best on top; ``model_colors`` in table order or by name."""
        from ..plots.intervals import interval_plot

        label = _LABELS[self.params["agg"]]
        return interval_plot(self.table, "score", ax=ax, figsize=figsize,
                             title=title or f"{label} of normalized scores",
                             xlabel=f"{label.lower()} (1 = best)", model_colors=model_colors)


def aggregate_ranking(benchmark: Benchmark, agg: str = "trimmed_mean") -> AggregateResult:
    """Rank models by the ``agg`` of their normalized scores over datasets.

    Parameters
    ----------
    agg : {"trimmed_mean", "mean", "median"}
        How the datasets' normalized scores are combined per model. "trimmed_mean"
        (default) cuts 25 % at each end, as ``scipy.stats.trim_mean(x, 0.25)``.

    Returns
    -------
    AggregateResult
        ``.table``: model, score (higher is better, best first); ``.plot()``.
    """
    scores = benchmark.scores_
    values = aggregate_scores(scores.to_numpy(dtype=float), agg)
    return AggregateResult(ranking_table(scores.index, values, "score"), agg=agg)
