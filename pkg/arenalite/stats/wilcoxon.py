"""Wilcoxon signed-rank test on paired differences, and Holm's step-down correction.

Pure functions on 1-D arrays of per-dataset differences. The p-value follows the
rules of ``scipy.stats.wilcoxon(method="auto", zero_method="wilcox",
correction=False)`` (scipy ≥ 1.15) so that results agree with scipy, but do not
depend on the installed scipy version (Pyodide ships an older one):

- zero differences are dropped (Wilcoxon's convention);
- no ties and no zeros, n ≤ 50: the exact null distribution of W+;
- ties or zeros, n ≤ 13 (n counting the zeros): the exact permutation distribution
  of W+ over all 2^n sign flips (zeros contribute nothing);
- otherwise the normal approximation with the tie-corrected variance.
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

import numpy as np

from ..params import check_choice

ALTERNATIVES = ("two-sided", "greater", "less")
_EXACT_MAX_N = 50
_PERMUTATION_MAX_N = 13


class SignedRank(NamedTuple):
    """W statistic (min(W+, W−) two-sided, W+ one-sided), p-value, and counts."""

    statistic: float
    p_value: float
    w_plus: float
    w_minus: float
    n_nonzero: int


def signed_rank_test(d: np.ndarray, alternative: str = "two-sided") -> SignedRank:
    """Wilcoxon signed-rank test of H0: the differences ``d`` are symmetric about 0.

    ``alternative="greater"`` tests H1: the median difference is above 0. When
    every difference is 0 there is no evidence either way: W = 0 and p = 1.
    """
    from scipy.stats import norm, rankdata

    check_choice(alternative, "alternative", ALTERNATIVES)
    d = np.asarray(d, dtype=float)
    if d.ndim != 1 or d.size == 0:
        raise ValueError(f"differences must be a non-empty 1-D array, got shape {d.shape}")
    if not np.isfinite(d).all():
        i = int(np.flatnonzero(~np.isfinite(d))[0])
        raise ValueError(f"differences has a non-finite value {float(d[i])!r} at position {i}")
    n_total = d.size
    nonzero = d[d != 0]
    m = nonzero.size
    if m == 0:
        return SignedRank(0.0, 1.0, 0.0, 0.0, 0)
    ranks = rankdata(np.abs(nonzero))
    positive = nonzero > 0
    w_plus = float(ranks[positive].sum())
    w_minus = float(ranks[~positive].sum())
    _, tie_sizes = np.unique(ranks, return_counts=True)
    has_ties = tie_sizes.size < m
    has_zeros = m < n_total

    if not (has_ties or has_zeros) and n_total <= _EXACT_MAX_N:
        p_greater = _exact_sf(m, int(np.floor(w_plus)))
        p_less = _exact_cdf(m, int(np.ceil(w_plus)))
    elif n_total <= _PERMUTATION_MAX_N:
        null = _sign_flip_sums(ranks)
        tol = 1e-9 * max(1.0, w_plus)
        p_greater = float(np.mean(null >= w_plus - tol))
        p_less = float(np.mean(null <= w_plus + tol))
    else:
        mean = m * (m + 1) / 4.0
        var = (m * (m + 1) * (2 * m + 1) - np.sum(tie_sizes**3 - tie_sizes) / 2.0) / 24.0
        z = (w_plus - mean) / np.sqrt(var)
        p_greater = float(norm.sf(z))
        p_less = float(norm.cdf(z))

    if alternative == "greater":
        return SignedRank(w_plus, p_greater, w_plus, w_minus, m)
    if alternative == "less":
        return SignedRank(w_plus, p_less, w_plus, w_minus, m)
    p = min(1.0, 2.0 * min(p_greater, p_less))
    return SignedRank(min(w_plus, w_minus), p, w_plus, w_minus, m)


@lru_cache(maxsize=64)
def _exact_counts(n: int) -> np.ndarray:
    """Number of subsets of {1..n} with each sum 0..n(n+1)/2 (the null law of W+ × 2^n)."""
    counts = np.zeros(n * (n + 1) // 2 + 1, dtype=np.float64)
    counts[0] = 1.0
    for i in range(1, n + 1):  # n ≤ 50 steps of a vectorized shift-and-add
        counts[i:] = counts[i:] + counts[:-i].copy()
    return counts


def _exact_sf(n: int, w: int) -> float:
    """P(W+ ≥ w) under H0 with n untied nonzero differences."""
    counts = _exact_counts(n)
    return float(counts[max(w, 0):].sum() / counts.sum())


def _exact_cdf(n: int, w: int) -> float:
    """P(W+ ≤ w) under H0 with n untied nonzero differences."""
    counts = _exact_counts(n)
    return float(counts[: max(w + 1, 0)].sum() / counts.sum())


def _sign_flip_sums(ranks: np.ndarray) -> np.ndarray:
    """W+ under every one of the 2^m sign assignments of the given ranks."""
    m = ranks.size
    bits = (np.arange(2**m)[:, None] >> np.arange(m)[None, :]) & 1
    return bits @ ranks


def min_attainable_p(n: int, alternative: str = "two-sided") -> float:
    """The smallest p-value the exact signed-rank test can give with n nonzero differences."""
    if n <= 0:
        return 1.0
    one_sided = 0.5**n
    return min(1.0, 2.0 * one_sided) if alternative == "two-sided" else one_sided


def holm(p_values: np.ndarray) -> np.ndarray:
    """Holm's step-down adjusted p-values (controls the family-wise error rate).

    Sorted ascending, p_(i) becomes max_{j ≤ i} min(1, (m − j + 1) p_(j)).
    """
    p = np.asarray(p_values, dtype=float)
    if p.ndim != 1:
        raise ValueError(f"p_values must be a 1-D array, got shape {p.shape}")
    if p.size and (not np.isfinite(p).all() or p.min() < 0 or p.max() > 1):
        raise ValueError(f"p_values must lie in [0, 1], got {p!r}")
    m = p.size
    order = np.argsort(p, kind="stable")
    stepped = np.minimum(1.0, (m - np.arange(m)) * p[order])
    adjusted = np.empty(m)
    adjusted[order] = np.maximum.accumulate(stepped)
    return adjusted
