"""Improvability (TabArena): how far, relatively, each model's error is from the best one.

Raw error per cell: optimum − score for higher-is-better metrics, score − optimum for
lower-is-better ones, with the optimum from the metric registry (a dataset marked
``"min"`` whose metric is unknown is an error with optimum 0; a registered metric read
against its registered direction, e.g. TabArena's ``metric_error`` of ROC AUC, is its
distance form with optimum 0, see :func:`arenalite.registry.oriented`). Per dataset the cell
value is (error − best) / error × 100 (0 where the error is 0); a model's improvability
is the mean over datasets, lower is better.

Normalized improvability is the headroom regret (L − L*) / (L_dummy − L*) × 100 with a
zero-signal anchor L_dummy per dataset, macro-averaged over all datasets and separately
over classification and regression datasets.

Anchors are given in the metric's own raw units (like a score; they are turned into
errors the same way): the scores of a ``dummy`` model in the data, a ``{dataset: value}``
dict, or, with ``dummy=None``, the registry's numeric zero-signal anchors (0.5 for AUC,
0 for R², 0.25 for Brier). Dataset-specific anchors (majority rate, prevalence, σ_y,
ln K) must come from ``dummy``.

Task of a dataset (for the separate averages), decided from its metric's registry entry:
classification when the metric is bounded within [0, 1] (accuracy, F1, IoU, AUC, AP,
1 − AUC, …), when its anchor is class-based (majority rate, prevalence, ln K) or when it
is log loss / NLL / Brier; regression for every other registered metric (R², RMSE, MAE,
MSE, MAPE, CRPS, Gaussian NLL). Datasets with unregistered metrics count only overall.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..params import check_bool, check_number
from ..registry import get_metric, oriented
from ..results import Result

if TYPE_CHECKING:
    from ..benchmark import Benchmark

CLASS_ANCHORS = ("majority_rate", "prevalence", "ln_k")
CLASS_LOSSES = ("logloss", "log_loss", "nll", "brier")


def task_of(metric: str) -> str | None:
    """"classification", "regression" or None (unregistered metric); see the module doc."""
    spec = get_metric(metric)
    if spec is None:
        return None
    low, high = spec.bounds
    if (0.0 <= low and high <= 1.0) or spec.anchor in CLASS_ANCHORS or spec.name in CLASS_LOSSES:
        return "classification"
    return "regression"


def optima(metrics: pd.Series, directions: pd.Series) -> np.ndarray:
    """The error optimum of every dataset's metric; ValueError when it is unknown."""
    out = np.empty(len(metrics))
    for k, (ds, name) in enumerate(metrics.items()):
        spec = get_metric(name)
        direction = directions[ds]
        if spec is None:
            if direction != "min":
                raise ValueError(f"Unknown metric '{name}' (dataset {ds!r}): improvability needs "
                                 "the metric's optimum; register it with register_metric(...) "
                                 "or mark the dataset metric_direction='min' (optimum 0)")
            out[k] = 0.0
            continue
        optimum = oriented(spec, direction)[0]
        if not math.isfinite(optimum):
            raise ValueError(f"metric {name!r} (dataset {ds!r}) has no finite optimum "
                             f"({optimum}); improvability is undefined for it")
        out[k] = optimum
    return out


def errors(raw: np.ndarray, optimum: np.ndarray, higher_is_better: np.ndarray) -> np.ndarray:
    """Error per cell of an M × D raw matrix: distance of each score from the optimum."""
    return np.where(higher_is_better, optimum - raw, raw - optimum)


def relative_improvability(err: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(error − best) / error × 100 per cell (0 where error is 0), and best per dataset."""
    best = err.min(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        value = np.where(err > 0, (err - best) / np.where(err > 0, err, 1.0) * 100.0, 0.0)
    return value, best


def headroom_regret(err: np.ndarray, dummy_err: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(L − L*) / (L_dummy − L*) × 100 per cell, and L* per dataset (denominators > 0)."""
    best = err.min(axis=0)
    return (err - best) / (dummy_err - best) * 100.0, best


class ImprovabilityResult(Result):
    """Mean improvability per model (lower is better) with the per-dataset values."""

    method = "improvability"

    def __init__(self, table: pd.DataFrame, *, per_dataset: pd.DataFrame, **params: Any) -> None:
        super().__init__(table, **params)
        self.per_dataset = per_dataset

    def plot(self, ax: Any = None, figsize: tuple[float, float] | None = None,
             title: str | None = None, model_colors: Any = None) -> Any:
        """One point per model, best (lowest) on top; ``model_colors`` in table order or by name."""
        from ..plots.intervals import interval_plot

        kind = "Normalized improvability" if self.params.get("normalized") else "Improvability"
        return interval_plot(self.table, "improvability", ax=ax, figsize=figsize,
                             title=title or f"{kind} (lower is better)",
                             xlabel=f"{kind.lower()} (%), mean over datasets",
                             model_colors=model_colors)


def _check_errors(err: np.ndarray, raw: np.ndarray, rows: list[str], datasets: list[str],
                  optimum: np.ndarray) -> None:
    bad = err < 0
    if bad.any():
        i, j = (int(v[0]) for v in np.nonzero(bad))
        raise ValueError(f"{rows[i]} on dataset {datasets[j]!r} has score {float(raw[i, j])!r} "
                         f"beyond the metric optimum {float(optimum[j])!r}; improvability needs "
                         "errors >= 0")


def _dummy_scores(benchmark: Benchmark, dummy: Any, datasets: list[str]) -> np.ndarray:
    """Anchor scores (raw metric units) per dataset from a model name, dict or the registry."""
    if isinstance(dummy, str):
        if dummy not in benchmark.models_:
            raise ValueError(f"dummy model {dummy!r} not found in score matrix; "
                             f"models are {benchmark.models_!r}")
        return benchmark.raw_.loc[dummy, datasets].to_numpy(dtype=float)
    if isinstance(dummy, dict):
        extra = [d for d in dummy if d not in datasets]
        if extra:
            raise ValueError(f"dummy names dataset(s) {extra!r} that are not in the benchmark")
        missing = [d for d in datasets if d not in dummy]
        if missing:
            raise ValueError(f"dummy has no anchor value for dataset(s) {missing!r}")
        return np.array([check_number(dummy[d], f"dummy[{d!r}]") for d in datasets])
    if dummy is not None:
        raise TypeError(f"dummy must be a model name, a {{dataset: value}} dict or None, "
                        f"got {type(dummy).__name__} {dummy!r}")
    out = np.empty(len(datasets))
    needs = []
    for k, d in enumerate(datasets):
        spec = get_metric(benchmark.metrics_[d])
        anchor = None if spec is None else oriented(spec, benchmark.directions_[d])[1]
        if isinstance(anchor, (int, float)):
            out[k] = float(anchor)
        else:
            needs.append(f"{d!r} ({benchmark.metrics_[d]}: {anchor or 'no anchor'})")
    if needs:
        raise ValueError("normalized improvability needs a zero-signal anchor for dataset(s) "
                         f"{', '.join(needs)}; pass dummy= a dummy model name or a "
                         "{dataset: value} dict")
    return out


def improvability_ranking(
    benchmark: Benchmark,
    normalized: bool = False,
    dummy: str | dict[str, float] | None = None,
) -> ImprovabilityResult:
    """Mean improvability per model, ascending (see the module doc for both variants).

    Parameters
    ----------
    normalized : bool
        False (default): TabArena's (error − best) / error × 100 per dataset. True:
        headroom regret (error − best) / (anchor error − best) × 100 against a
        zero-signal anchor, also averaged over classification and regression datasets.
    dummy : str, {dataset: value} or None
        With ``normalized=True``: the model whose scores are the anchors, or the anchor
        raw score per dataset; None uses the metric registry's anchors where they exist.

    Returns
    -------
    ImprovabilityResult
        ``.table``: model, improvability (percent, lower is better, best first);
        ``.per_dataset``: model, dataset, error, best_error, improvability; ``.plot()``.
    """
    check_bool(normalized, "normalized")
    if dummy is not None and not normalized:
        raise ValueError(f"dummy={dummy!r} is only used with normalized=True")
    datasets = benchmark.datasets_
    optimum = optima(benchmark.metrics_.loc[datasets], benchmark.directions_.loc[datasets])
    higher = (benchmark.directions_.loc[datasets] == "max").to_numpy()
    models = [m for m in benchmark.models_ if not (isinstance(dummy, str) and m == dummy)]
    anchor = _dummy_scores(benchmark, dummy, datasets) if normalized else None
    if not models:
        raise ValueError(f"improvability needs at least one model besides the dummy {dummy!r}")
    raw = benchmark.raw_.loc[models, datasets].to_numpy(dtype=float)
    err = errors(raw, optimum, higher)
    _check_errors(err, raw, [f"model {m!r}" for m in models], datasets, optimum)

    columns: dict[str, Any] = {}
    if normalized:
        dummy_err = errors(anchor, optimum, higher)
        _check_errors(dummy_err[None], anchor[None], ["the dummy anchor"], datasets, optimum)
        best = err.min(axis=0)
        flat = dummy_err <= best
        if flat.any():
            j = int(np.argmax(flat))
            raise ValueError(f"dataset {datasets[j]!r}: the dummy anchor's error "
                             f"{float(dummy_err[j])!r} is not above the best model's error "
                             f"{float(best[j])!r}; normalized improvability has no headroom "
                             "to divide by")
        value, best = headroom_regret(err, dummy_err)
        tasks = np.array([task_of(benchmark.metrics_[d]) for d in datasets], dtype=object)
        columns["improvability"] = value.mean(axis=1)
        for task in ("classification", "regression"):
            chosen = tasks == task
            if chosen.any():
                columns[f"improvability_{task}"] = value[:, chosen].mean(axis=1)
    else:
        value, best = relative_improvability(err)
        columns["improvability"] = value.mean(axis=1)

    names = np.asarray(models, dtype=object)
    order = np.lexsort((names, columns["improvability"]))
    table = pd.DataFrame({"model": names[order], **{k: v[order] for k, v in columns.items()}})
    m, d = err.shape
    per = {
        "model": np.repeat(names, d),
        "dataset": np.tile(np.asarray(datasets, dtype=object), m),
        "error": err.ravel(),
        "best_error": np.tile(best, m),
        "improvability": value.ravel(),
    }
    if normalized:
        per["dummy_error"] = np.tile(dummy_err, m)
        per["task"] = np.tile(tasks, m)
    return ImprovabilityResult(table, per_dataset=pd.DataFrame(per), normalized=bool(normalized),
                               dummy=dummy)
