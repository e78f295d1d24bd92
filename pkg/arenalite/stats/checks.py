"""Argument checks shared by the statistical methods, with messages that name the value."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from ..benchmark import Benchmark

MIN_DATASETS = 2


def check_alpha(alpha: Any) -> float:
    """``alpha`` must be a number strictly between 0 and 1."""
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float, np.floating, np.integer)):
        raise TypeError(f"alpha must be a number in (0, 1), got {alpha!r}")
    if not 0.0 < float(alpha) < 1.0:
        raise ValueError(f"alpha must lie strictly between 0 and 1, got {alpha!r}")
    return float(alpha)


def check_positive_int(value: Any, name: str) -> int:
    """``value`` must be an integer ≥ 1 (a count of samples or replicates)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def check_model(benchmark: Benchmark, name: Any, what: str) -> str:
    """``name`` must be one of the benchmark's models."""
    if not isinstance(name, str):
        raise TypeError(f"{what} must be a model name (str), got {name!r}")
    if name not in benchmark.models_:
        raise ValueError(f"{what} {name!r} not found in score matrix; it is not a model of this "
                         f"benchmark (models: {benchmark.models_!r})")
    return name


def check_shape(benchmark: Benchmark, method: str, min_models: int = 2,
                min_datasets: int = MIN_DATASETS) -> None:
    """Enough models and datasets for ``method``; every score finite."""
    k, n = len(benchmark.models_), len(benchmark.datasets_)
    if k < min_models:
        raise ValueError(f"{method} needs at least {min_models} models, got {k} "
                         f"({benchmark.models_!r})")
    if n < min_datasets:
        raise ValueError(f"{method} needs at least {min_datasets} datasets (datasets are the unit "
                         f"of replication), got {n} ({benchmark.datasets_!r})")
    check_finite(benchmark.scores_, "scores_")


def check_finite(frame: pd.DataFrame, name: str) -> None:
    """Every cell of a model × dataset frame is a finite number."""
    values = frame.to_numpy(dtype=float)
    bad = ~np.isfinite(values)
    if bad.any():
        i, j = np.argwhere(bad)[0]
        raise ValueError(f"{name} has a non-finite value {float(values[i, j])!r} for model "
                         f"{frame.index[i]!r} on dataset {frame.columns[j]!r}")
