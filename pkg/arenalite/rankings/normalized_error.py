"""Normalized error (TabArena): how far each model is from the best, in units of the field.

Per dataset, on seed-averaged raw scores turned into errors (lower is better), the cell
value is clip((err − best) / max(median − best, 1e-5), 0, 1) with best and median taken
over the models: 0 for the best model, 1 for the median model and everything worse. A
model's normalized error is the mean over datasets; lower is better. Only differences of
errors enter, so the metric's optimum is not needed: the error is the raw score for
lower-is-better metrics and minus the raw score for higher-is-better ones.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..results import Result

if TYPE_CHECKING:
    from ..benchmark import Benchmark

MIN_SPREAD = 1e-5  # floor of (median − best): a dataset where most models tie is not blown up


def error_matrix(benchmark: Benchmark) -> np.ndarray:
    """Seed-averaged errors (M × D, lower is better, up to a per-dataset shift)."""
    raw = benchmark.raw_.loc[benchmark.models_, benchmark.datasets_].to_numpy(dtype=float)
    higher = (benchmark.directions_.loc[benchmark.datasets_] == "max").to_numpy()
    return np.where(higher, -raw, raw)


def normalized_errors(err: np.ndarray) -> np.ndarray:
    """Per cell of an M × D error matrix: clip((err − best) / max(median − best, 1e-5), 0, 1)."""
    best = err.min(axis=0)
    spread = np.maximum(np.median(err, axis=0) - best, MIN_SPREAD)
    return np.clip((err - best) / spread, 0.0, 1.0)


class NormalizedErrorResult(Result):
    """Mean normalized error per model (lower is better), with the per-dataset values."""

    method = "normalized-error"

    def __init__(self, table: pd.DataFrame, *, per_dataset: pd.DataFrame, **params: Any) -> None:
        super().__init__(table, **params)
        self.per_dataset = per_dataset

    def plot(self, ax: Any = None, figsize: tuple[float, float] | None = None,
             title: str | None = None, model_colors: Any = None) -> Any:
        """One point per model, best (lowest) on top."""
        from ..plots.intervals import interval_plot

        return interval_plot(self.table, "normalized-error", ax=ax, figsize=figsize,
                             model_colors=model_colors,
                             title=title or "Normalized error (lower is better)",
                             xlabel="normalized error, mean over datasets "
                                    "(0 = best model, 1 = median or worse)")


def normalized_error_ranking(benchmark: Benchmark) -> NormalizedErrorResult:
    """Mean normalized error per model, ascending (see the module doc).

    No parameters: per dataset clip((err − best) / max(median − best, 1e-5), 0, 1),
    then the mean over datasets.

    Returns
    -------
    NormalizedErrorResult
        ``.table``: model, normalized-error (lower is better, best first);
        ``.per_dataset``: model, dataset, normalized-error; ``.plot()``.
    """
    value = normalized_errors(error_matrix(benchmark))
    names = np.asarray(benchmark.models_, dtype=object)
    mean = value.mean(axis=1)
    order = np.lexsort((names, mean))
    m, d = value.shape
    datasets = np.asarray(benchmark.datasets_, dtype=object)
    per_dataset = pd.DataFrame({"model": np.repeat(names, d), "dataset": np.tile(datasets, m),
                                "normalized-error": value.ravel()})
    return NormalizedErrorResult(pd.DataFrame({"model": names[order],
                                               "normalized-error": mean[order]}),
                                 per_dataset=per_dataset)
