"""Normalization of raw scores to a common scale where 1 is best.

The user gives each dataset's raw range ``[low, high]`` (raw units, ``low < high``):
``norm_ref_low``/``norm_ref_high`` (a scalar, a model name meaning that model's
seed-averaged score, or a ``{dataset: value}`` dict; None means the observed
per-dataset min/max of the seed-averaged matrix, with a warning), or
``metric_type_bounds`` (``{metric: (low, high)}``, high may be a model name;
registered bounded metrics need no entry).

Higher-is-better datasets map ``low → 0`` and ``high → 1``. Lower-is-better datasets
are negated and the bounds flipped, so ``high → 0`` and ``low → 1``: with
``norm_ref_low=0, norm_ref_high=100`` an RMSE of 12 becomes (100 − 12) / 100 = 0.88.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from .params import check_number
from .registry import get_metric


def normalize(
    long: pd.DataFrame,
    *,
    directions: pd.Series,
    metrics: pd.Series,
    metric_type_bounds: Mapping[str, tuple[Any, Any]] | None,
    norm_ref_low: Any,
    norm_ref_high: Any,
) -> tuple[pd.DataFrame, pd.Series, pd.Series]:
    """Add a ``norm`` column to ``long``; return it with the per-dataset anchors.

    The returned ``norm_low``/``norm_high`` Series are the raw values that map to 0
    (worst end) and to 1 (best end); for a lower-is-better dataset ``norm_low`` is
    the larger raw value.
    """
    datasets = metrics.index
    raw_mean = long.groupby(["model", "dataset"], sort=False)["score"].mean()
    by_dataset = raw_mean.groupby(level="dataset")
    lowest, highest = by_dataset.min().loc[datasets], by_dataset.max().loc[datasets]
    if metric_type_bounds is not None:  # load_df rejects it combined with norm_ref_*
        low, high, fixed = _bounds_from_metric_types(metrics, metric_type_bounds, raw_mean)
    else:
        if norm_ref_low is None or norm_ref_high is None:
            given = (("norm_ref_low", norm_ref_low), ("norm_ref_high", norm_ref_high))
            which = [n for n, v in given if v is None]
            warnings.warn(f"{' and '.join(which)} not given: using the observed per-dataset "
                          "min/max of the (seed-averaged) scores, so normalized scores depend on "
                          "the models included; pass fixed bounds for stable results",
                          UserWarning, stacklevel=4)
        low = _resolve_reference(norm_ref_low, "norm_ref_low", datasets, raw_mean, lowest)
        high = _resolve_reference(norm_ref_high, "norm_ref_high", datasets, raw_mean, highest)
        fixed = pd.DataFrame({end: _is_fixed(ref) for end, ref in
                              (("low", norm_ref_low), ("high", norm_ref_high))}, index=datasets)

    option = "norm_ref_low/norm_ref_high" if metric_type_bounds is None else "metric_type_bounds"
    _check_order(low, high, directions, option)
    is_min = (directions.loc[datasets] == "min").to_numpy()
    zero_at = pd.Series(np.where(is_min, high, low), index=datasets, dtype=float)
    one_at = pd.Series(np.where(is_min, low, high), index=datasets, dtype=float)
    _warn_unbracketed(lowest, highest, low, high, zero_at, one_at, fixed, metrics, option)
    out = long.copy()
    out["norm"] = normalize_values(out["score"].to_numpy(dtype=float),
                                   out["dataset"].map(zero_at).to_numpy(dtype=float),
                                   out["dataset"].map(one_at).to_numpy(dtype=float))
    return out, zero_at.rename("norm_low"), one_at.rename("norm_high")


def normalize_values(score: np.ndarray, zero_at: np.ndarray, one_at: np.ndarray) -> np.ndarray:
    """Linear map sending ``zero_at → 0`` and ``one_at → 1`` (element-wise)."""
    return (score - zero_at) / (one_at - zero_at) + 0.0  # + 0.0 turns -0.0 into 0.0


def _is_fixed(ref: Any) -> bool:
    """A fixed number or {dataset: number} dict (not a model name, not None = observed)."""
    return ref is not None and not isinstance(ref, str)


def _warn_unbracketed(lowest: pd.Series, highest: pd.Series, low: pd.Series, high: pd.Series,
                      zero_at: pd.Series, one_at: pd.Series, fixed: pd.DataFrame,
                      metrics: pd.Series, option: str) -> None:
    """Warn when fixed numeric references leave a dataset's scores outside [0, 1].

    A reference that is a model name is relative by design (models beyond it are
    expected), so only numeric ends are checked, against the seed-averaged scores
    (``lowest``/``highest`` per dataset; every Series in the same dataset order).
    """
    outside = ((fixed["low"] & (lowest < low)) | (fixed["high"] & (highest > high))).to_numpy()
    if not outside.any():
        return
    norm_a = normalize_values(lowest.to_numpy(), zero_at.to_numpy(), one_at.to_numpy())
    norm_b = normalize_values(highest.to_numpy(), zero_at.to_numpy(), one_at.to_numpy())
    names = low.index[outside]
    shown = "; ".join(
        f"dataset {ds!r} ({metrics[ds]}): scores {lowest[ds]:.4g} to {highest[ds]:.4g}, "
        f"references {low[ds]:.4g} to {high[ds]:.4g}, normalized "
        f"{min(norm_a[k], norm_b[k]):.3g} to {max(norm_a[k], norm_b[k]):.3g}"
        for k, ds in zip(np.flatnonzero(outside)[:5], names[:5], strict=True))
    more = f"; and {len(names) - 5} more" if len(names) > 5 else ""
    warnings.warn(f"{option} do not bracket the scores of {len(names)} dataset(s), so their "
                  f"normalized scores leave [0, 1] and weigh on the aggregate and IQM rankings: "
                  f"{shown}{more}. Give references per dataset ({{dataset: value}}), "
                  "metric_type_bounds per metric, or None for the observed min/max",
                  UserWarning, stacklevel=5)


def _check_order(low: pd.Series, high: pd.Series, directions: pd.Series, option: str) -> None:
    bad = low.to_numpy() >= high.to_numpy()
    if bad.any():
        ds = low.index[bad.argmax()]
        lo, hi = float(low[ds]), float(high[ds])
        if lo == hi:
            raise ValueError(f"dataset {ds!r}: {option} give equal bounds (low = high = "
                             f"{lo!r}), e.g. because every model has the same score; "
                             "cannot normalize; give bounds that differ")
        flip = (" (for a lower-is-better dataset the low bound is the best raw value, "
                "e.g. 0 for an error)" if directions[ds] == "min" else "")
        raise ValueError(f"dataset {ds!r}: {option} give low = {lo!r} and "
                         f"high = {hi!r}; the raw low bound must be below the high "
                         f"bound{flip}")


def _resolve_reference(
    ref: Any,
    option: str,
    datasets: pd.Index,
    raw_mean: pd.Series,
    observed: pd.Series,
) -> pd.Series:
    if ref is None:
        return observed.loc[datasets].astype(float)
    if isinstance(ref, (Mapping, pd.Series)):
        given = {str(k): v for k, v in ref.items()}
        missing = [d for d in datasets if d not in given]
        if missing:
            raise ValueError(f"{option} has no value for dataset(s) {missing!r}; "
                             f"it gives values for {sorted(given)!r}")
        return pd.Series({d: check_number(given[d], f"{option} for dataset {d!r}")
                          for d in datasets}, dtype=float)
    if isinstance(ref, str):
        return _model_scores(ref, option, datasets, raw_mean)
    if isinstance(ref, (int, float, np.number, bool, np.bool_)):
        return pd.Series(check_number(ref, option), index=datasets, dtype=float)
    raise TypeError(f"{option} must be a number, a model name or a {{dataset: value}} dict, "
                    f"got {type(ref).__name__} {ref!r}")


def _model_scores(model: str, option: str, datasets: pd.Index, raw_mean: pd.Series) -> pd.Series:
    models = set(raw_mean.index.get_level_values("model"))
    if model not in models:
        raise ValueError(f"{option}: reference model {model!r} not found in score matrix; "
                         f"models are {sorted(models)!r}")
    per_ds = raw_mean.xs(model, level="model")
    missing = [d for d in datasets if d not in per_ds.index]
    if missing:
        raise ValueError(f"{option}: reference model {model!r} has no score on dataset(s) "
                         f"{missing!r}")
    return per_ds.loc[datasets].astype(float)


def _bounds_from_metric_types(
    metrics: pd.Series,
    metric_type_bounds: Mapping[str, tuple[Any, Any]],
    raw_mean: pd.Series,
) -> tuple[pd.Series, pd.Series, pd.DataFrame]:
    """Per-dataset low/high from the metric table or registry, and which ends are numbers."""
    table = {str(k).lower(): v for k, v in metric_type_bounds.items()}
    low, high, fixed = {}, {}, {}
    for ds, name in metrics.items():
        key = name.lower()
        option = f"metric_type_bounds[{name!r}]"
        if key in table:
            pair = table[key]
            if isinstance(pair, str) or not isinstance(pair, (tuple, list)) or len(pair) != 2:
                raise TypeError(f"{option} must be a (low, high) pair, got {pair!r}")
            low[ds], high[ds] = (
                float(_model_scores(v, f"{option} {end}", pd.Index([ds]), raw_mean).iloc[0])
                if isinstance(v, str) else check_number(v, f"{option} {end} for dataset {ds!r}")
                for end, v in zip(("low", "high"), pair, strict=True)
            )
            fixed[ds] = {end: _is_fixed(v) for end, v in zip(("low", "high"), pair, strict=True)}
            continue
        spec = get_metric(name)
        if spec is None:
            raise ValueError(f"Unknown metric '{name}' (dataset {ds!r}) is neither registered "
                             "nor listed in metric_type_bounds")
        lo, hi = spec.bounds
        if not math.isfinite(hi):
            raise ValueError(f"metric '{name}' (dataset {ds!r}) has no natural upper bound; list "
                             f"it in metric_type_bounds, e.g. {{'{key}': (0, 'baseline_model')}}")
        if not math.isfinite(lo):
            raise ValueError(f"metric '{name}' (dataset {ds!r}) has no natural lower bound; list "
                             f"it in metric_type_bounds, e.g. {{'{key}': (0, {hi})}}")
        low[ds], high[ds] = lo, hi
        fixed[ds] = {"low": True, "high": True}
    return (pd.Series(low, dtype=float).loc[metrics.index],
            pd.Series(high, dtype=float).loc[metrics.index],
            pd.DataFrame.from_dict(fixed, orient="index").loc[metrics.index])
