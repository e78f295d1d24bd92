"""Frequentist comparison: Friedman + Nemenyi for all pairs, or Wilcoxon + Holm against a reference.

Runs on the normalized per-dataset matrix ``benchmark.scores_`` (seeds/folds are
already averaged: datasets are the unit of replication, Demšar 2006). Ranks are
invariant to the per-dataset normalization, so the result equals the one on raw
scores with each dataset's direction applied.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..params import check_alpha, check_model, check_shape
from ..results import Result
from .friedman import cliques, critical_difference, friedman_test, nemenyi_pvalues, rank_matrix
from .wilcoxon import holm, signed_rank_test

if TYPE_CHECKING:
    from ..benchmark import Benchmark


class FrequentistResult(Result):
    """Friedman/Nemenyi (and, with a reference, Wilcoxon/Holm) results.

    Attributes: ``friedman_statistic`` (tie-corrected χ²_F), ``friedman_p`` (also
    ``friedman_p_value``, evaluma's name), ``iman_davenport_f`` and
    ``iman_davenport_p`` (F_F form), ``avg_ranks`` (Series, best first), ``cd``
    (Nemenyi critical difference at ``alpha``), ``nemenyi_p`` (model × model
    DataFrame), ``cliques`` (lists of models whose average ranks do not differ
    significantly).
    """

    method = "frequentist"

    def __init__(self, table: pd.DataFrame, *, friedman_statistic: float, friedman_p: float,
                 iman_davenport_f: float, iman_davenport_p: float, avg_ranks: pd.Series,
                 cd: float, nemenyi_p: pd.DataFrame, cliques: list[list[str]],
                 n_datasets: int, **params: Any) -> None:
        super().__init__(table, **params)
        self.friedman_statistic = friedman_statistic
        self.friedman_p = friedman_p
        self.friedman_p_value = friedman_p
        self.iman_davenport_f = iman_davenport_f
        self.iman_davenport_p = iman_davenport_p
        self.avg_ranks = avg_ranks
        self.cd = cd
        self.nemenyi_p = nemenyi_p
        self.cliques = cliques
        self.n_datasets = n_datasets

    def plot(self, ax: Any = None, figsize: tuple[float, float] | None = None,
             title: str | None = None) -> Any:
        """All pairs: the critical-difference diagram (average ranks, CD bar, cliques as
        thick bars). Reference mode: Holm-adjusted p-value of each model against the
        reference, with the α line."""
        alpha = self.params["alpha"]
        if self.params.get("reference") is not None:
            from ..plots.pvalues import pvalue_bars

            return pvalue_bars(self.table["model_b"], self.table["p_adjusted"], alpha,
                               ax=ax, figsize=figsize,
                               title=title or (f"Wilcoxon + Holm against "
                                               f"{self.params['reference']}, α = {alpha:g}"))
        from ..plots.cd_diagram import cd_diagram

        if title is None:
            title = (f"Critical difference (Nemenyi, α = {alpha:g}, "
                     f"N = {self.n_datasets} datasets; Friedman p = {self.friedman_p:.3g})")
        return cd_diagram(self.avg_ranks, self.cd, self.cliques, ax=ax, figsize=figsize,
                          title=title)


def frequentist_comparison(benchmark: Benchmark, reference: str | None = None,
                           alpha: float = 0.05) -> FrequentistResult:
    """Friedman test with Nemenyi all-pairs comparisons, or Wilcoxon + Holm against ``reference``.

    All pairs: one row per model pair in the Benchmark's model order (the order of
    ``bayesian_comparison``, so the two tables merge on model_a, model_b), ``rank_diff``
    the absolute difference of average ranks, ``p_value`` Nemenyi's, ``significant``
    when p < alpha (equivalently rank_diff > cd). With ``reference``: model_a is the
    reference and model_b each other model, tested by a two-sided Wilcoxon signed-rank
    test on the per-dataset normalized scores, Holm-adjusted; ``w_statistic`` =
    min(W+, W−). A Friedman p-value not below alpha is reported with a warning: the
    post-hoc tests then lack the omnibus test's support.

    Parameters
    ----------
    reference : str or None
        None (default): Friedman + Nemenyi on all pairs. A model name: Wilcoxon
        signed-rank tests of every other model against it, Holm-adjusted.
    alpha : float
        Significance level, strictly between 0 and 1 (default 0.05).

    Returns
    -------
    FrequentistResult
        ``.table`` as above; ``.friedman_statistic``, ``.friedman_p``, ``.avg_ranks``,
        ``.cd`` (critical difference); ``.plot()``: the critical-difference diagram, or
        the adjusted p-values against ``reference``.
    """
    alpha = check_alpha(alpha)
    check_shape(benchmark, "frequentist_comparison")
    if reference is not None:
        check_model(benchmark, reference, "reference")
    scores = benchmark.scores_
    models = list(scores.index)
    values = scores.to_numpy(dtype=float).T  # datasets × models
    stats = friedman_test(rank_matrix(values))
    n, k = stats.n_datasets, stats.n_models
    if not stats.p_value < alpha:
        warnings.warn(f"the Friedman test does not reject equal performance (p = "
                      f"{stats.p_value:.3g} >= alpha = {alpha:g}): the post-hoc comparisons "
                      "are reported, but the omnibus test does not support any difference",
                      UserWarning, stacklevel=3)
    p_matrix = nemenyi_pvalues(stats.avg_ranks, n)
    cd = critical_difference(k, n, alpha)
    order = np.argsort(stats.avg_ranks, kind="stable")
    avg_ranks = pd.Series(stats.avg_ranks[order], index=[models[i] for i in order],
                          name="avg_rank")
    avg_ranks.index.name = "model"
    groups = [[models[i] for i in order[a:b + 1]]
              for a, b in cliques(stats.avg_ranks, p_matrix < alpha)]

    if reference is None:
        table = _all_pairs_table(models, stats.avg_ranks, p_matrix, alpha)
    else:
        table = _reference_table(values, models, reference, alpha)
    return FrequentistResult(
        table,
        friedman_statistic=stats.statistic, friedman_p=stats.p_value,
        iman_davenport_f=stats.f_statistic, iman_davenport_p=stats.f_p_value,
        avg_ranks=avg_ranks, cd=cd,
        nemenyi_p=pd.DataFrame(p_matrix, index=models, columns=models),
        cliques=groups, n_datasets=n, reference=reference, alpha=alpha,
    )


def _all_pairs_table(models: list[str], avg_ranks: np.ndarray, p_matrix: np.ndarray,
                     alpha: float) -> pd.DataFrame:
    a, b = np.triu_indices(len(models), 1)  # the order of itertools.combinations
    names = np.asarray(models, dtype=object)
    p = p_matrix[a, b]
    return pd.DataFrame({
        "model_a": names[a],
        "model_b": names[b],
        "rank_diff": np.abs(avg_ranks[b] - avg_ranks[a]),
        "p_value": p,
        "significant": p < alpha,
    })


def _reference_table(values: np.ndarray, models: list[str], reference: str,
                     alpha: float) -> pd.DataFrame:
    ref = models.index(reference)
    others = [i for i in range(len(models)) if i != ref]
    tests = [signed_rank_test(values[:, i] - values[:, ref]) for i in others]
    p = np.array([t.p_value for t in tests])
    adjusted = holm(p)
    return pd.DataFrame({
        "model_a": reference,
        "model_b": [models[i] for i in others],
        "w_statistic": [t.statistic for t in tests],
        "p_value": p,
        "p_adjusted": adjusted,
        "significant": adjusted < alpha,
    })
