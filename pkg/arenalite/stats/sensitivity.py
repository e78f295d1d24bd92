"""Rank sensitivity: do two conditions (e.g. frozen vs fine-tuned) rank the models alike?

For each condition of a :class:`~arenalite.benchmark.BenchmarkGroup` the models are
scored over datasets — by average rank (``by="avg_rank"``, 1 = best on a dataset,
ties averaged) or by mean normalized score (``by="mean"``) — and Kendall's τ-b
measures the agreement of the two orderings. The interval is a percentile
bootstrap over datasets: datasets are resampled with replacement (multinomial
counts, all replicates at once). When both conditions have the same datasets the
same resample is used for both (paired); otherwise each is resampled on its own.
"""

from __future__ import annotations

from itertools import combinations
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..results import Result
from .friedman import rank_matrix

if TYPE_CHECKING:
    from ..benchmark import Benchmark, BenchmarkGroup

BY = ("avg_rank", "mean")


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


def per_dataset_matrix(benchmark: Benchmark, models: list[str], by: str) -> np.ndarray:
    """datasets × models: within-dataset ranks (negated, so higher = better) or scores."""
    values = benchmark.scores_.loc[models].to_numpy(dtype=float).T
    if by == "avg_rank":
        return -rank_matrix(values)
    return values


def bootstrap_tau(a: np.ndarray, b: np.ndarray, n_bootstrap: int, rng: np.random.Generator,
                  paired: bool) -> np.ndarray:
    """τ-b of the column means of ``a`` and ``b`` for ``n_bootstrap`` dataset resamples."""
    counts_a = rng.multinomial(a.shape[0], np.full(a.shape[0], 1.0 / a.shape[0]),
                               size=n_bootstrap)
    counts_b = counts_a if paired else rng.multinomial(
        b.shape[0], np.full(b.shape[0], 1.0 / b.shape[0]), size=n_bootstrap)
    return kendall_tau_b(counts_a @ a / a.shape[0], counts_b @ b / b.shape[0])


class SensitivityResult(Result):
    """τ-b per pair of conditions with its interval; ``.ranks`` model × condition (1 = best)."""

    method = "rank_sensitivity"

    def __init__(self, table: pd.DataFrame, *, ranks: pd.DataFrame, **params: Any) -> None:
        super().__init__(table, **params)
        self.ranks = ranks

    def plot(self, ax: Any = None, figsize: tuple[float, float] | None = None,
             title: str | None = None) -> Any:
        """Bump chart of each model's rank across the conditions."""
        from ..plots.sensitivity import rank_bump_chart

        if title is None and len(self.table) == 1:
            row = self.table.iloc[0]
            title = (f"Rank sensitivity: Kendall τ-b = {row.tau:.2f} "
                     f"[{row.CI_low:.2f}, {row.CI_high:.2f}]")
        return rank_bump_chart(self.ranks, ax=ax, figsize=figsize, title=title)


def rank_sensitivity(group: BenchmarkGroup, condition_a: Any = None, condition_b: Any = None,
                     *, by: str = "avg_rank", n_bootstrap: int = 1000, confidence: float = 0.95,
                     random_state: Any = None) -> SensitivityResult:
    """Kendall τ-b between the model rankings of two conditions, with a bootstrap interval.

    Without conditions, every pair of the group's conditions is compared (one row
    each). Both conditions must hold the same models.
    """
    if by not in BY:
        raise ValueError(f"by must be one of {BY}, got {by!r}")
    if isinstance(n_bootstrap, bool) or not isinstance(n_bootstrap, (int, np.integer)) \
            or n_bootstrap < 1:
        raise ValueError(f"n_bootstrap must be a positive integer, got {n_bootstrap!r}")
    if not isinstance(confidence, (int, float)) or not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie strictly between 0 and 1, got {confidence!r}")
    pairs = _condition_pairs(group, condition_a, condition_b)
    models = _common_models(group, pairs)
    if len(models) < 2:
        raise ValueError(f"rank_sensitivity needs at least 2 models, got {models!r}")
    rng = np.random.default_rng(random_state)
    matrices = {c: per_dataset_matrix(group[c], models, by)
                for c in dict.fromkeys(c for pair in pairs for c in pair)}
    rows = []
    for first, second in pairs:  # a few condition pairs; replicates are vectorized
        a, b = matrices[first], matrices[second]
        tau = float(kendall_tau_b(a.mean(axis=0), b.mean(axis=0)))
        if not np.isfinite(tau):
            raise ValueError(f"Kendall τ-b of conditions {first!r} and {second!r} is undefined: "
                             "every model has the same score in one of them")
        paired = group[first].datasets_ == group[second].datasets_
        boot = bootstrap_tau(a, b, int(n_bootstrap), rng, paired)
        defined = boot[np.isfinite(boot)]
        if defined.size == 0:
            raise ValueError(f"every bootstrap replicate of conditions {first!r} and {second!r} "
                             "ties all models; τ-b has no interval")
        tail = (1.0 - confidence) / 2.0
        low, high = np.quantile(defined, [tail, 1.0 - tail])
        rows.append({"condition_a": first, "condition_b": second, "tau": tau,
                     "CI_low": float(low), "CI_high": float(high), "n_models": len(models),
                     "n_datasets_a": a.shape[0], "n_datasets_b": b.shape[0], "paired": paired,
                     "n_undefined": int(boot.size - defined.size)})
    conditions = list(matrices)
    ranks = pd.DataFrame(
        {c: pd.Series(-matrices[c].mean(axis=0), index=models).rank(method="min")
         for c in conditions})
    ranks.index.name = "model"
    return SensitivityResult(pd.DataFrame(rows), ranks=ranks, by=by, n_bootstrap=n_bootstrap,
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
