"""The Yeo-Johnson transform and its maximum-likelihood λ, as scipy 1.17 and sklearn 1.9
compute them (``PowerTransformer(method="yeo-johnson")``), the one copy every model uses.

Users: TabPFN's regression target transform (``tabpfn.regression``, ``"safepower"`` /
``"power"``) and its reshape step's power presets (``tabpfn.preprocessing``), and the
``"power"`` normalisation of the TabICL-family wrappers. For ``tabpfn`` 9.2.0, sklearn's
``PowerTransformer`` fits λ with ``scipy.stats.yeojohnson`` (scipy's overflow-safe
``yeojohnson_normmax``) and the package's ``SafePowerTransformer`` with its own copy of that
same function, so both give the same λ here; both transform with ``scipy.stats.yeojohnson``
(sklearn 1.9 does not call the safe class's overridden ``_yeo_johnson_transform``).
"""

from __future__ import annotations

import numpy as np
from scipy import optimize

BRENT_XTOL = 1.48e-08
"""``yeojohnson_normmax``'s tolerance for its bounded search (``fminbound``)."""


def yeo_johnson(x: np.ndarray, lmbda: float) -> np.ndarray:
    """Yeo-Johnson transform of ``x`` at ``lmbda`` (float64, a new array; NaN stays NaN), in
    the expm1/log1p form scipy uses: x ≥ 0: expm1(λ·log1p(x))/λ (log1p(x) when |λ| < eps);
    else −expm1((2−λ)·log1p(−x))/(2−λ) (−log1p(−x) when |λ − 2| ≤ eps)."""
    x = np.asarray(x, dtype=np.float64)
    out = np.empty_like(x, dtype=np.float64)
    pos = x >= 0
    with np.errstate(over="ignore", invalid="ignore"):
        if abs(lmbda) < np.spacing(1.0):
            out[pos] = np.log1p(x[pos])
        else:
            out[pos] = np.expm1(lmbda * np.log1p(x[pos])) / lmbda
        if abs(lmbda - 2) > np.spacing(1.0):
            out[~pos] = -np.expm1((2 - lmbda) * np.log1p(-x[~pos])) / (2 - lmbda)
        else:
            out[~pos] = -np.log1p(-x[~pos])
    return out


def yeo_johnson_lambda(x: np.ndarray) -> float:
    """The maximum-likelihood λ of a 1-D sample, its NaN cells dropped first (sklearn's
    ``_yeo_johnson_optimize``): 1.0 for an all-zero sample, else scipy's ``fminbound``
    (xtol 1.48e-8) of the negative profile log-likelihood (+inf where the transformed
    variance is below the smallest normal float) between bounds that keep 20·max|x| from
    over- or underflowing."""
    x = np.asarray(x, dtype=np.float64)
    x = x[~np.isnan(x)]
    if np.all(x == 0):
        return 1.0
    n = len(x)
    signed_log = (np.sign(x) * np.log1p(np.abs(x))).sum()

    def neg_llf(lmbda: float) -> float:
        var = yeo_johnson(x, lmbda).var()
        if var < np.finfo(np.float64).tiny:
            return np.inf
        return n / 2 * np.log(var) - (lmbda - 1) * signed_log

    eps = np.finfo(np.float64).eps
    log1p_max = np.log1p(20 * np.max(np.abs(x)))
    lb = (np.log(np.finfo(np.float64).tiny) - np.log(eps)) / 2 / log1p_max
    ub = (np.log(np.finfo(np.float64).max) + np.log(eps)) / 2 / log1p_max
    if np.all(x < 0):
        lb, ub = 2 - ub, 2 - lb
    elif np.any(x < 0):
        lb, ub = max(2 - ub, lb), min(2 - lb, ub)
    with np.errstate(invalid="ignore", over="ignore"):
        return float(optimize.fminbound(neg_llf, lb, ub, xtol=BRENT_XTOL, disp=0))
