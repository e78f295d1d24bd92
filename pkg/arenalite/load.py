"""Loading a long score table into a :class:`~arenalite.benchmark.Benchmark`.

Flow: validate columns and values → resolve each dataset's metric and direction
→ normalize (:mod:`arenalite.normalize`) → Benchmark. Bad input raises a
``TypeError``/``ValueError`` naming the column, the value and the row.
"""

from __future__ import annotations

import warnings
from os import PathLike
from typing import Any

import numpy as np
import pandas as pd

from .benchmark import Benchmark, BenchmarkGroup
from .normalize import normalize
from .registry import get_metric


def load_csv(path: str | PathLike, **kwargs: Any) -> Benchmark | BenchmarkGroup:
    """Read a long-format CSV and load it like :func:`load_df`."""
    return load_df(pd.read_csv(path), **kwargs)


def load_df(
    df: pd.DataFrame,
    *,
    model: str = "model",
    dataset: str = "dataset",
    metric: str = "metric",
    score: str = "score",
    seed: str | None = None,
    metric_type_bounds: dict[str, tuple[float, Any]] | None = None,
    norm_ref_low: Any = None,
    norm_ref_high: Any = None,
    metric_direction: dict[str, str] | None = None,
    drop_incomplete: bool = False,
    condition_col: str | None = None,
) -> Benchmark | BenchmarkGroup:
    """Load a long table (one row per model, dataset[, seed]) into a Benchmark.

    With ``condition_col`` the rows are split by that column into a
    :class:`BenchmarkGroup` of independently normalized Benchmarks.
    """
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"df must be a pandas DataFrame, got {type(df).__name__}")
    options = dict(model=model, dataset=dataset, metric=metric, score=score, seed=seed,
                   metric_type_bounds=metric_type_bounds, norm_ref_low=norm_ref_low,
                   norm_ref_high=norm_ref_high, metric_direction=metric_direction,
                   drop_incomplete=drop_incomplete)
    if condition_col is None:
        return _load_one(df, **options)
    _require_columns(df, {"condition_col": condition_col})
    labels = pd.unique(df[condition_col])
    if len(labels) < 2:
        raise ValueError(
            f"column {condition_col!r} (condition_col) needs at least two condition labels, "
            f"found {list(labels)!r}"
        )
    return BenchmarkGroup(
        {label: _load_one(df[df[condition_col] == label], **options) for label in labels},
        condition_col,
    )


def _require_columns(df: pd.DataFrame, columns: dict[str, str]) -> None:
    for option, name in columns.items():
        if name not in df.columns:
            raise ValueError(
                f"column {name!r} (the {option}= column) not found in the frame; "
                f"columns are {list(df.columns)!r}"
            )


def _load_one(
    df: pd.DataFrame,
    *,
    model: str,
    dataset: str,
    metric: str,
    score: str,
    seed: str | None,
    metric_type_bounds: dict[str, tuple[float, Any]] | None,
    norm_ref_low: Any,
    norm_ref_high: Any,
    metric_direction: dict[str, str] | None,
    drop_incomplete: bool,
) -> Benchmark:
    if len(df) == 0:
        raise ValueError("the score frame is empty: no rows to load")
    columns = {"model": model, "dataset": dataset, "metric": metric, "score": score}
    if seed is not None:
        columns["seed"] = seed
    _require_columns(df, columns)
    long = pd.DataFrame({key: df[name].to_numpy() for key, name in columns.items()})
    long.index = df.index

    for key in ("model", "dataset", "metric") + (("seed",) if seed is not None else ()):
        missing = long[key].isna()
        if missing.any():
            row = long.index[missing.to_numpy().argmax()]
            raise ValueError(f"column {columns[key]!r} has a missing value in row {row!r}")
    long["model"] = long["model"].astype(str)
    long["dataset"] = long["dataset"].astype(str)
    long["metric"] = long["metric"].astype(str)
    long["score"] = _numeric_scores(long["score"], score)

    keys = ["model", "dataset"] + (["seed"] if seed is not None else [])
    dup = long.duplicated(keys, keep=False)
    if dup.any():
        first = long[dup].iloc[0]
        where = ", ".join(f"{columns[k]}={first[k]!r}" for k in keys)
        rows = list(long.index[dup][:5])
        raise ValueError(f"duplicate rows for ({where}) in rows {rows!r}; one row per "
                         f"({', '.join(columns[k] for k in keys)}) is allowed")

    metrics = long.groupby("dataset", sort=True)["metric"].unique()
    two = metrics[metrics.map(len) > 1]
    if len(two):
        ds = two.index[0]
        raise ValueError(f"dataset {ds!r} has more than one metric in column {metric!r}: "
                         f"{list(two.iloc[0])!r}; one metric per dataset is allowed")
    metrics = metrics.map(lambda values: values[0])
    metrics.name = "metric"

    directions = _directions(metrics, metric_direction, metric_type_bounds)
    long = _complete(long, drop_incomplete, columns)
    long, low, high = normalize(long, directions=directions, metrics=metrics,
                                metric_type_bounds=metric_type_bounds,
                                norm_ref_low=norm_ref_low, norm_ref_high=norm_ref_high)
    return Benchmark(long, directions=directions, metrics=metrics, has_seeds=seed is not None,
                     norm_low=low, norm_high=high)


def _numeric_scores(values: pd.Series, column: str) -> pd.Series:
    numeric = pd.to_numeric(values, errors="coerce")
    bad = numeric.isna() & values.notna()
    if bad.any():
        row = values.index[bad.to_numpy().argmax()]
        raise ValueError(f"column {column!r} has a non-numeric value {values[row]!r} in row {row!r}")
    numeric = numeric.astype(float)
    nonfinite = ~np.isfinite(numeric.to_numpy())
    if nonfinite.any():
        row = values.index[nonfinite.argmax()]
        raise ValueError(f"column {column!r} has a non-finite value {values[row]!r} in row {row!r}")
    return numeric


def _directions(
    metrics: pd.Series,
    metric_direction: dict[str, str] | None,
    metric_type_bounds: dict[str, Any] | None,
) -> pd.Series:
    given = dict(metric_direction or {})
    for ds, direction in given.items():
        if ds not in metrics.index:
            raise ValueError(f"metric_direction names dataset {ds!r}, which is not in the data")
        if direction not in ("max", "min"):
            raise ValueError(f"metric_direction[{ds!r}] must be 'max' or 'min', got {direction!r}")
    out = {}
    unknown = []
    listed = {str(k).lower() for k in (metric_type_bounds or {})}
    for ds, name in metrics.items():
        if ds in given:
            out[ds] = given[ds]
            continue
        spec = get_metric(name)
        if spec is not None:
            out[ds] = spec.direction
        elif metric_type_bounds is not None and name.lower() not in listed:
            raise ValueError(f"Unknown metric '{name}' (dataset {ds!r}) is neither registered "
                             f"nor listed in metric_type_bounds")
        else:
            out[ds] = "max"
            unknown.append(name)
    if unknown:
        warnings.warn(f"Unknown metric '{sorted(set(unknown))[0]}' treated as higher-is-better "
                      f"(unknown metrics: {sorted(set(unknown))!r}); pass metric_direction or "
                      "register_metric to say otherwise", UserWarning, stacklevel=4)
    return pd.Series(out, name="direction").loc[metrics.index]


def _complete(long: pd.DataFrame, drop_incomplete: bool, columns: dict[str, str]) -> pd.DataFrame:
    present = pd.crosstab(long["model"], long["dataset"]) > 0
    if present.to_numpy().all():
        return long
    missing = [(m, d) for m, d in zip(*np.nonzero(~present.to_numpy()), strict=True)]
    names = [(present.index[m], present.columns[d]) for m, d in missing]
    if not drop_incomplete:
        shown = ", ".join(f"({m!r}, {d!r})" for m, d in names[:10])
        more = f" and {len(names) - 10} more" if len(names) > 10 else ""
        raise ValueError(f"missing (model, dataset) cells: {shown}{more}; pass "
                         "drop_incomplete=True to drop the models that miss datasets")
    incomplete = sorted({m for m, _ in names})
    warnings.warn(f"dropping incomplete models {incomplete!r}", UserWarning, stacklevel=4)
    kept = long[~long["model"].isin(incomplete)]
    if kept.empty:
        raise ValueError("drop_incomplete=True dropped every model: no model has all datasets")
    return kept
