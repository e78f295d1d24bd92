"""Rank sensitivity: do two conditions (e.g. frozen vs fine-tuned) rank the models alike?

For each condition of a :class:`~arenalite.benchmark.BenchmarkGroup` the models are
scored over datasets — by an aggregate of the normalized scores (``agg="trimmed_mean"``,
the default as in ``aggregate_ranking``; ``"mean"``; ``"median"``) or by average rank
(``agg="avg_rank"``, 1 = best on a dataset, ties averaged) — and Kendall's τ-b measures
the agreement of the two orderings (Spearman's ρ is reported beside it). The interval
is a percentile bootstrap over datasets: datasets are resampled with replacement
(:mod:`.bootstrap`'s unit counts, as for Elo and IQM), all replicates at once. When
both conditions have the same datasets the same resample is used for both (paired);
otherwise each is resampled on its own.
"""

from __future__ import annotations

import warnings
from itertools import combinations
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..params import check_choice, check_confidence, check_int, make_rng
from ..rankings.aggregate import trim_mean
from ..results import Result
from .bootstrap import percentile_interval, unit_counts, unit_rows
from .friedman import rank_matrix

if TYPE_CHECKING:
    from ..benchmark import Benchmark, BenchmarkGroup

AGGS = ("trimmed_mean", "mean", "median", "avg_rank")
_CHUNK_ELEMENTS = 4_000_000


def kendall_tau_b(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Kendall's τ-b between the last axes of ``x`` and ``y`` (vectorized over leading axes).

    τ-b = (concordant − discordant) / √((n0 − ties_x)(n0 − ties_y)), n0 = k(k−1)/2.
    Undefined (NaN) where either side is entirely tied.
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    k = x.shape[-1]
    i, j = np.triu_indices(k, 1)
    dx = np.sign(x[..., i] - x[..., j])
    dy = np.sign(y[..., i] - y[..., j])
    n0 = i.size
    denominator = np.sqrt((n0 - np.sum(dx == 0, axis=-1)) * (n0 - np.sum(dy == 0, axis=-1)))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denominator > 0, np.sum(dx * dy, axis=-1) / denominator, np.nan)


def per_dataset_matrix(benchmark: Benchmark, models: list[str], agg: str) -> np.ndarray:
    """datasets × models: within-dataset ranks (negated, so higher = better) or scores."""
    values = benchmark.scores_.loc[models].to_numpy(dtype=float).T
    if agg == "avg_rank":
        return -rank_matrix(values)
    return values


def summarize(values: np.ndarray, agg: str, axis: int = -2) -> np.ndarray:
    """Per-model summary over the datasets axis: higher = better for every ``agg``."""
    if agg == "trimmed_mean":
        return trim_mean(values, 0.25, axis=axis)
    if agg == "median":
        return np.median(values, axis=axis)
    return values.mean(axis=axis)


def bootstrap_tau(a: np.ndarray, b: np.ndarray, agg: str, n_bootstrap: int,
                  rng: np.random.Generator, paired: bool) -> np.ndarray:
    """τ-b of the per-model summaries of ``a`` and ``b`` on ``n_bootstrap`` dataset resamples."""
    out = np.empty(n_bootstrap)
    chunk = max(1, _CHUNK_ELEMENTS // max(a.size, b.size))
    for first in range(0, n_bootstrap, chunk):
        size = min(chunk, n_bootstrap - first)
        rows_a = unit_rows(unit_counts(a.shape[0], size, rng))
        rows_b = rows_a if paired else unit_rows(unit_counts(b.shape[0], size, rng))
        out[first:first + size] = kendall_tau_b(summarize(a[rows_a], agg),
                                                summarize(b[rows_b], agg))
    return out


def spearman_rho(x: np.ndarray, y: np.ndarray) -> float:
    """Spearman's ρ: the Pearson correlation of the average ranks of ``x`` and ``y``."""
    rx = pd.Series(x).rank().to_numpy()
    ry = pd.Series(y).rank().to_numpy()
    rx, ry = rx - rx.mean(), ry - ry.mean()
    denominator = np.sqrt((rx**2).sum() * (ry**2).sum())
    return float((rx * ry).sum() / denominator) if denominator > 0 else float("nan")


class SensitivityResult(Result):
    """τ-b per pair of conditions with its interval (``.table``); ``.ranks`` model ×
    condition (1 = best). For a single pair also ``.tau``, ``.tau_ci``, ``.rho`` and
    ``.per_model`` (model, both ranks, delta_rank; largest moves first)."""

    method = "rank_sensitivity"

    def __init__(self, table: pd.DataFrame, *, ranks: pd.DataFrame, rho: float | None,
                 **params: Any) -> None:
        super().__init__(table, **params)
        self.ranks = ranks
        self.agg = params.get("agg")
        self.rho = rho
        single = len(self.table) == 1
        self.tau = float(self.table.loc[0, "tau"]) if single else None
        self.tau_ci = ((float(self.table.loc[0, "CI_low"]), float(self.table.loc[0, "CI_high"]))
                       if single else None)

    @property
    def per_model(self) -> pd.DataFrame:
        """Each model's rank under the first and last condition and the change between them."""
        first, last = self.ranks.columns[0], self.ranks.columns[-1]
        table = pd.DataFrame({"model": self.ranks.index,
                              f"rank_{first}": self.ranks[first].to_numpy(),
                              f"rank_{last}": self.ranks[last].to_numpy()})
        table["delta_rank"] = table[f"rank_{last}"] - table[f"rank_{first}"]
        order = np.lexsort((table["model"].to_numpy(dtype=str),
                            -table["delta_rank"].abs().to_numpy()))
        return table.iloc[order].reset_index(drop=True)

    def plot(self, ax: Any = None, figsize: tuple[float, float] | None = None,
             title: str | None = None) -> Any:
        """Bump chart of each model's rank across the conditions."""
        from ..plots.sensitivity import rank_bump_chart

        if title is None and len(self.table) == 1:
            row = self.table.iloc[0]
            title = (f"Rank sensitivity: Kendall τ-b = {row.tau:.2f} "
                     f"[{row.CI_low:.2f}, {row.CI_high:.2f}] ({self.agg})")
        return rank_bump_chart(self.ranks, ax=ax, figsize=figsize, title=title)


def rank_sensitivity(group: BenchmarkGroup, condition_a: Any = None, condition_b: Any = None,
                     *, agg: str = "trimmed_mean", n_bootstrap: int = 1000,
                     confidence: float = 0.95, random_state: Any = None) -> SensitivityResult:
    """Kendall τ-b between the model rankings of two conditions, with a bootstrap interval.

    Without conditions, every pair of the group's conditions is compared (one row
    each). Both conditions must hold the same models.

    Parameters
    ----------
    condition_a, condition_b : condition labels or None
        The two conditions to compare; None (both) compares every pair.
    agg : {"trimmed_mean", "mean", "median", "avg_rank"}
        The ranking each condition gives: models ordered by this aggregate over datasets.
    n_bootstrap : int
        Bootstrap replicates over datasets (paired when both conditions hold the same
        datasets) for the interval; at least 1.
    confidence : float
        Level of the percentile interval, strictly between 0 and 1 (default 0.95).
    random_state : None, int or numpy Generator
        Seed of the bootstrap.

    Returns
    -------
    SensitivityResult
        ``.table``: condition_a, condition_b, tau, CI_low, CI_high, rho, n_models,
        n_datasets_a, n_datasets_b, paired, n_undefined; ``.ranks``; ``.plot()``.
    """
    check_choice(agg, "agg", AGGS)
    n_bootstrap = check_int(n_bootstrap, "n_bootstrap")
    confidence = check_confidence(confidence)
    pairs = _condition_pairs(group, condition_a, condition_b)
    models = _common_models(group, pairs)
    if len(models) < 2:
        raise ValueError(f"rank_sensitivity needs at least 2 models, got {models!r}")
    rng = make_rng(random_state)
    matrices = {c: per_dataset_matrix(group[c], models, agg)
                for c in dict.fromkeys(c for pair in pairs for c in pair)}
    summaries = {c: summarize(m, agg, axis=0) for c, m in matrices.items()}
    n_datasets = {c: m.shape[0] for c, m in matrices.items()}
    small = sorted(c for c, n in n_datasets.items() if n < 5)
    if small:
        warnings.warn(f"condition(s) {small!r} have fewer than 5 datasets: the bootstrap "
                      "interval over datasets is unreliable", UserWarning, stacklevel=3)
    rows = []
    for first, second in pairs:  # a few condition pairs; replicates are vectorized
        a, b = matrices[first], matrices[second]
        tau = float(kendall_tau_b(summaries[first], summaries[second]))
        if not np.isfinite(tau):
            raise ValueError(f"Kendall τ-b of conditions {first!r} and {second!r} is undefined: "
                             "every model has the same score in one of them")
        paired = group[first].datasets_ == group[second].datasets_
        boot = bootstrap_tau(a, b, agg, n_bootstrap, rng, paired)
        defined = boot[np.isfinite(boot)]
        if defined.size == 0:
            raise ValueError(f"every bootstrap replicate of conditions {first!r} and {second!r} "
                             "ties all models; τ-b has no interval")
        low, high = percentile_interval(defined, confidence)
        rows.append({"condition_a": first, "condition_b": second, "tau": tau,
                     "CI_low": float(low), "CI_high": float(high),
                     "rho": spearman_rho(summaries[first], summaries[second]),
                     "n_models": len(models), "n_datasets_a": a.shape[0],
                     "n_datasets_b": b.shape[0], "paired": paired,
                     "n_undefined": int(boot.size - defined.size)})
    ranks = pd.DataFrame({c: pd.Series(-summaries[c], index=models).rank(method="min")
                          for c in matrices})
    ranks.index.name = "model"
    table = pd.DataFrame(rows)
    rho = float(table.loc[0, "rho"]) if len(table) == 1 else None
    return SensitivityResult(table, ranks=ranks, rho=rho, agg=agg, n_bootstrap=n_bootstrap,
                             confidence=confidence, random_state=random_state)


def _condition_pairs(group: BenchmarkGroup, a: Any, b: Any) -> list[tuple[Any, Any]]:
    known = group.conditions_
    if a is None and b is None:
        return list(combinations(known, 2))
    if a is None or b is None:
        raise ValueError("give both condition_a and condition_b, or neither (all pairs)")
    for name, value in (("condition_a", a), ("condition_b", b)):
        if value not in known:
            raise ValueError(f"{name} {value!r} not found; known conditions: {known!r}")
    if a == b:
        raise ValueError(f"condition_a and condition_b are both {a!r}; give two conditions")
    return [(a, b)]


def _common_models(group: BenchmarkGroup, pairs: list[tuple[Any, Any]]) -> list[str]:
    conditions = list(dict.fromkeys(c for pair in pairs for c in pair))
    models = group[conditions[0]].models_
    for c in conditions[1:]:
        other = group[c].models_
        if set(other) != set(models):
            only_first = sorted(set(models) - set(other))
            only_other = sorted(set(other) - set(models))
            raise ValueError(f"conditions {conditions[0]!r} and {c!r} hold different models: "
                             f"only in {conditions[0]!r}: {only_first!r}, only in {c!r}: "
                             f"{only_other!r}; select the same models in both")
    return list(models)
