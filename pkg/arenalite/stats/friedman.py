"""Friedman test, Nemenyi post-hoc test and the critical difference (Demšar 2006).

Pure functions on a datasets × models array. Datasets are the unit of
replication: each row is one dataset, already averaged over folds/seeds.
Rank 1 is the best model of a dataset; tied models share the average rank.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np


class FriedmanStats(NamedTuple):
    """Friedman χ² (tie-corrected) with its p-value, and the Iman-Davenport F form."""

    statistic: float
    p_value: float
    f_statistic: float
    f_p_value: float
    avg_ranks: np.ndarray
    n_datasets: int
    n_models: int


def rank_matrix(scores: np.ndarray) -> np.ndarray:
    """Rank the models within each dataset (row): 1 = highest score, ties averaged."""
    from scipy.stats import rankdata

    scores = np.asarray(scores, dtype=float)
    if scores.ndim != 2:
        raise ValueError(f"scores must be a 2-D datasets × models array, got shape {scores.shape}")
    if not np.isfinite(scores).all():
        row, col = np.argwhere(~np.isfinite(scores))[0]
        raise ValueError(f"scores has a non-finite value {float(scores[row, col])!r} "
                         f"at dataset row {row}, model column {col}")
    return rankdata(-scores, method="average", axis=1)


def friedman_test(ranks: np.ndarray) -> FriedmanStats:
    """Friedman's χ²_F on within-dataset ranks, corrected for ties, plus Iman-Davenport F_F.

    χ²_F = [12 / (N k (k+1)) Σ_j R_j² − 3 N (k+1)] / C with rank sums R_j and the tie
    correction C = 1 − Σ (t³ − t) / (N k (k² − 1)); F_F = (N−1) χ²_F / (N(k−1) − χ²_F)
    on (k−1, (k−1)(N−1)) degrees of freedom. When every dataset is a complete tie the
    statistic is 0 and p = 1; when the rankings agree perfectly F_F is infinite, p = 0.
    """
    from scipy.stats import chi2

    ranks = np.asarray(ranks, dtype=float)
    n, k = ranks.shape
    if n < 2 or k < 2:
        raise ValueError(f"the Friedman test needs at least 2 datasets and 2 models, "
                         f"got {n} datasets and {k} models")
    avg_ranks = ranks.mean(axis=0)
    raw = friedman_chi2(avg_ranks, n)
    correction = 1.0 - _tie_term(ranks) / (n * k * (k * k - 1))
    statistic = 0.0 if correction <= 1e-12 else max(raw / correction, 0.0)
    p_value = float(chi2.sf(statistic, k - 1))
    f_statistic, f_p_value = iman_davenport(statistic, n, k)
    return FriedmanStats(statistic, p_value, f_statistic, f_p_value, avg_ranks, n, k)


def friedman_chi2(avg_ranks: np.ndarray, n_datasets: int) -> float:
    """Demšar's χ²_F = 12 N / (k (k+1)) [Σ_j R_j² − k (k+1)² / 4] from average ranks.

    No tie correction: this is the textbook form used for published golden values.
    """
    avg_ranks = np.asarray(avg_ranks, dtype=float)
    k = avg_ranks.size
    return float(12.0 * n_datasets / (k * (k + 1))
                 * (np.sum(avg_ranks**2) - k * (k + 1) ** 2 / 4.0))


def iman_davenport(chi2_statistic: float, n_datasets: int, n_models: int) -> tuple[float, float]:
    """Iman-Davenport F_F = (N−1) χ²_F / (N(k−1) − χ²_F) and its p-value on (k−1, (k−1)(N−1)) df."""
    from scipy.stats import f

    n, k = n_datasets, n_models
    denominator = n * (k - 1) - chi2_statistic
    if denominator <= 1e-12 * n * k:
        return float("inf"), 0.0
    f_statistic = (n - 1) * chi2_statistic / denominator
    return float(f_statistic), float(f.sf(f_statistic, k - 1, (k - 1) * (n - 1)))


def _tie_term(ranks: np.ndarray) -> float:
    """Σ over datasets and tie groups of t³ − t (t = size of the tie group)."""
    ordered = np.sort(ranks, axis=1)
    starts = np.ones_like(ordered, dtype=bool)
    starts[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
    group_id = np.cumsum(starts.ravel()) - 1
    sizes = np.bincount(group_id).astype(float)
    return float(np.sum(sizes**3 - sizes))


def nemenyi_q(n_models: int, alpha: float = 0.05) -> float:
    """Critical value q_α of the Nemenyi test: studentized range quantile (df = ∞) / √2."""
    from scipy.stats import studentized_range

    if n_models < 2:
        raise ValueError(f"the Nemenyi test needs at least 2 models, got {n_models}")
    return float(studentized_range.ppf(1.0 - alpha, n_models, np.inf) / np.sqrt(2.0))


def critical_difference(n_models: int, n_datasets: int, alpha: float = 0.05) -> float:
    """Nemenyi critical difference CD = q_α √(k (k+1) / (6 N)) of average ranks."""
    if n_datasets < 1:
        raise ValueError(f"the critical difference needs at least 1 dataset, got {n_datasets}")
    k = n_models
    return nemenyi_q(k, alpha) * float(np.sqrt(k * (k + 1) / (6.0 * n_datasets)))


def nemenyi_pvalues(avg_ranks: np.ndarray, n_datasets: int) -> np.ndarray:
    """k × k matrix of Nemenyi p-values for every pair of average ranks (1 on the diagonal).

    The standardized difference |R_i − R_j| / √(k (k+1) / (6 N)) times √2 follows the
    studentized range distribution with k groups and infinite degrees of freedom; its
    survival function is evaluated once per distinct difference
    (:func:`studentized_range_sf`).
    """
    avg_ranks = np.asarray(avg_ranks, dtype=float)
    k = avg_ranks.size
    if k < 2:
        raise ValueError(f"the Nemenyi test needs at least 2 models, got {k}")
    scale = np.sqrt(k * (k + 1) / (6.0 * n_datasets))
    i, j = np.triu_indices(k, 1)
    q = np.abs(avg_ranks[i] - avg_ranks[j]) / scale * np.sqrt(2.0)
    distinct, inverse = np.unique(q, return_inverse=True)
    p = np.ones((k, k))
    p[i, j] = p[j, i] = studentized_range_sf(distinct, k)[inverse.reshape(-1)]
    return p


_Z_STEP = 0.05  # trapezoid step in z: the integral agrees with scipy to about 1e-13
_Q_STEP = 0.002  # Hermite node spacing in q: interpolation error below about 2e-12
_Q_TOP = 16.0  # above this the CDF is 1 to double precision for k up to 10,000
_CHUNK = 2_000_000  # q values × z nodes evaluated at once


def studentized_range_sf(q: np.ndarray, k: int) -> np.ndarray:
    """``scipy.stats.studentized_range.sf(q, k, np.inf)``, vectorized over ``q``.

    With infinite degrees of freedom the CDF is the single integral
    k ∫ φ(z) [Φ(z + q) − Φ(z)]^(k−1) dz, which scipy integrates with ``quad`` per value
    to an absolute 1e-11. Its integrand is smooth and negligible beyond |z| = 8.5, so
    the trapezoid rule on one fixed grid converges geometrically; all q share the grid.
    For more values than Hermite nodes, the CDF and its derivative (the density) are
    integrated at nodes ``_Q_STEP`` apart and interpolated by cubic Hermite polynomials.
    """
    q = np.minimum(np.asarray(q, dtype=float), _Q_TOP)
    flat = q.reshape(-1)
    nodes = np.arange(0.0, flat.max(initial=0.0) + 2 * _Q_STEP, _Q_STEP)
    if flat.size <= nodes.size:
        cdf = _range_cdf_pdf(flat, k)[0]
    else:
        at, slope = _range_cdf_pdf(nodes, k)
        i = np.minimum((flat // _Q_STEP).astype(np.int64), nodes.size - 2)
        t = (flat - nodes[i]) / _Q_STEP
        cdf = ((2 * t**3 - 3 * t**2 + 1) * at[i] + (t**3 - 2 * t**2 + t) * _Q_STEP * slope[i]
               + (3 * t**2 - 2 * t**3) * at[i + 1] + (t**3 - t**2) * _Q_STEP * slope[i + 1])
    return np.clip(1.0 - cdf, 0.0, 1.0).reshape(q.shape)


def _range_cdf_pdf(q: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """CDF and density of the range of k standard normals at each of ``q`` (trapezoid rule)."""
    from scipy.special import ndtr

    z = np.arange(-8.5, 8.5 + _Z_STEP / 2, _Z_STEP)
    phi = np.exp(-0.5 * z * z) / np.sqrt(2.0 * np.pi)
    cdf, pdf = np.empty(q.size), np.empty(q.size)
    per_chunk = max(1, _CHUNK // z.size)
    for first in range(0, q.size, per_chunk):
        upper = z + q[first:first + per_chunk, None]
        inside = ndtr(upper) - ndtr(z)
        power = inside ** (k - 2)
        cdf[first:first + per_chunk] = (power * inside) @ (_Z_STEP * k * phi)
        pdf[first:first + per_chunk] = ((power * np.exp(-0.5 * upper * upper))
                                        @ (_Z_STEP * k * (k - 1) * phi / np.sqrt(2.0 * np.pi)))
    return cdf, pdf


def cliques(avg_ranks: np.ndarray, significant: np.ndarray) -> list[tuple[int, int]]:
    """Maximal groups of models with no significant difference, as (first, last) positions.

    Positions refer to the models sorted by average rank (best first). A run
    first..last is a clique when its two extreme models do not differ
    significantly (the p-value falls with the rank gap, so no inner pair does
    either); runs contained in a longer run and single models are left out.
    """
    avg_ranks = np.asarray(avg_ranks, dtype=float)
    order = np.argsort(avg_ranks, kind="stable")
    sig = np.asarray(significant, dtype=bool)[np.ix_(order, order)]
    k = order.size
    not_sig = ~sig
    upper = np.triu(not_sig)
    # The farthest model j >= i that is not significantly different from i.
    last = np.where(upper, np.arange(k)[None, :], -1).max(axis=1)
    # A run (i, last[i]) is maximal when no earlier start reaches as far.
    reach_before = np.maximum.accumulate(np.concatenate([[-1], last[:-1]]))
    keep = (last > np.arange(k)) & (last > reach_before)
    return [(int(i), int(last[i])) for i in np.flatnonzero(keep)]
