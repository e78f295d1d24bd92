"""Normalization of raw scores to a common scale where 1 is best.

Per dataset, ``norm = (score - low) / (high - low)`` for higher-is-better metrics;
lower-is-better datasets are negated first (bounds flipped) so 1 is always best.
Bounds come from ``norm_ref_low``/``norm_ref_high`` (a scalar, a model name or a
``{dataset: value}`` dict; None means the observed min/max, with a warning) or
from ``metric_type_bounds`` (``{metric: (low, high)}``, high may be a model name).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd

from .registry import get_metric


def normalize(
    long: pd.DataFrame,
    *,
    directions: pd.Series,
    metrics: pd.Series,
    metric_type_bounds: dict[str, tuple[float, Any]] | None,
    norm_ref_low: Any,
    norm_ref_high: Any,
) -> tuple[pd.DataFrame, pd.Series, pd.Series]:
    """Add a ``norm`` column to ``long``; return it with the per-dataset bounds used.

    The bounds are in raw units and refer to the *worst* (low) and *best* (high)
    ends: for a lower-is-better metric ``low`` is the larger raw value.
    """
    datasets = metrics.index
    raw_mean = long.groupby(["model", "dataset"], sort=False)["score"].mean()
    if metric_type_bounds is not None:
        if norm_ref_low is not None or norm_ref_high is not None:
            raise ValueError("metric_type_bounds cannot be combined with norm_ref_low/norm_ref_high")
        low, high = _bounds_from_metric_types(metrics, directions, metric_type_bounds, raw_mean)
    else:
        observed_worst = {}
        observed_best = {}
        for ds in datasets:
            values = long.loc[long["dataset"] == ds, "score"]
            if directions[ds] == "max":
                observed_worst[ds], observed_best[ds] = values.min(), values.max()
            else:
                observed_worst[ds], observed_best[ds] = values.max(), values.min()
        if norm_ref_low is None or norm_ref_high is None:
            which = [n for n, v in (("norm_ref_low", norm_ref_low), ("norm_ref_high", norm_ref_high))
                     if v is None]
            warnings.warn(f"{' and '.join(which)} not given: using the observed per-dataset "
                          "worst/best score, so normalized scores depend on the models included",
                          UserWarning, stacklevel=5)
        low = _resolve_reference(norm_ref_low, "norm_ref_low", datasets, raw_mean, observed_worst)
        high = _resolve_reference(norm_ref_high, "norm_ref_high", datasets, raw_mean, observed_best)

    span = high - low
    zero = span[span == 0]
    if len(zero):
        ds = zero.index[0]
        raise ValueError(f"dataset {ds!r}: normalization bounds are equal (low = high = {low[ds]!r}); "
                         "cannot normalize; give norm_ref_low/norm_ref_high that differ")
    lo = long["dataset"].map(low).to_numpy(dtype=float)
    sp = long["dataset"].map(span).to_numpy(dtype=float)
    out = long.copy()
    out["norm"] = (out["score"].to_numpy(dtype=float) - lo) / sp
    return out, low.rename("norm_low"), high.rename("norm_high")


def _resolve_reference(
    ref: Any,
    option: str,
    datasets: pd.Index,
    raw_mean: pd.Series,
    observed: dict[str, float],
) -> pd.Series:
    if ref is None:
        return pd.Series(observed, dtype=float).loc[datasets]
    if isinstance(ref, dict):
        missing = [d for d in datasets if d not in ref]
        if missing:
            raise ValueError(f"{option} has no value for dataset(s) {missing!r}")
        return pd.Series({d: _finite(ref[d], option, d) for d in datasets}, dtype=float)
    if isinstance(ref, str):
        return _model_scores(ref, option, datasets, raw_mean)
    if isinstance(ref, (int, float, np.integer, np.floating)) and not isinstance(ref, bool):
        return pd.Series(_finite(ref, option, None), index=datasets, dtype=float)
    raise TypeError(f"{option} must be a number, a model name or a {{dataset: value}} dict, "
                    f"got {type(ref).__name__} {ref!r}")


def _finite(value: Any, option: str, dataset: str | None) -> float:
    where = f" for dataset {dataset!r}" if dataset is not None else ""
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise TypeError(f"{option}{where} must be numeric, got {value!r}") from None
    if not np.isfinite(number):
        raise ValueError(f"{option}{where} must be finite, got {value!r}")
    return number


def _model_scores(model: str, option: str, datasets: pd.Index, raw_mean: pd.Series) -> pd.Series:
    models = raw_mean.index.get_level_values("model")
    if model not in set(models):
        raise ValueError(f"{option} model {model!r} not found in score matrix; "
                         f"models are {sorted(set(models))!r}")
    per_ds = raw_mean.xs(model, level="model")
    missing = [d for d in datasets if d not in per_ds.index]
    if missing:
        raise ValueError(f"{option} model {model!r} has no score on dataset(s) {missing!r}")
    return per_ds.loc[datasets].astype(float)


def _bounds_from_metric_types(
    metrics: pd.Series,
    directions: pd.Series,
    metric_type_bounds: dict[str, tuple[float, Any]],
    raw_mean: pd.Series,
) -> tuple[pd.Series, pd.Series]:
    table = {str(k).lower(): v for k, v in metric_type_bounds.items()}
    low, high = {}, {}
    for ds, name in metrics.items():
        key = name.lower()
        if key in table:
            pair = table[key]
            if not isinstance(pair, (tuple, list)) or len(pair) != 2:
                raise TypeError(f"metric_type_bounds[{name!r}] must be a (low, high) pair, got {pair!r}")
            lo, hi = pair
        else:
            spec = get_metric(name)
            if spec is None or not spec.bounded:
                raise ValueError(f"metric {name!r} (dataset {ds!r}) has no natural upper bound; "
                                 "list it in metric_type_bounds")
            lo, hi = spec.bounds
        worst = _finite(lo, f"metric_type_bounds[{name!r}] low", ds)
        if isinstance(hi, str):
            best = float(_model_scores(hi, f"metric_type_bounds[{name!r}] high",
                                       pd.Index([ds]), raw_mean).iloc[0])
        else:
            best = _finite(hi, f"metric_type_bounds[{name!r}] high", ds)
        if directions[ds] == "min" and not isinstance(hi, str):
            worst, best = best, worst
        low[ds], high[ds] = worst, best
    return pd.Series(low, dtype=float), pd.Series(high, dtype=float)
