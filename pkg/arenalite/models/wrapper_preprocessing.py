"""The numeric preprocessing of the TabICL-family scikit-learn wrappers, in numpy/scipy.

``tabicl`` 2.2.0's and Google ``tabfm`` 1.0.1's ``PreprocessingPipeline`` are the same
rules (defined in docs/models.md, "TabICL preprocessing and ensemble"); both models'
``preprocessing`` modules take them from here:

* :func:`impute_means` / :func:`impute`: sklearn ``SimpleImputer(strategy="mean")``;
* :func:`standard_scaler_stats`: sklearn ``StandardScaler``'s mean and scale;
* :func:`fit_pipeline` / :func:`transform`: one normalisation method's pipeline fitted on
  the training rows: a z-score with ``std + 1e-6`` clipped to ±100 (``CustomStandardScaler``),
  for ``"power"`` a Yeo-Johnson transform (sklearn ``PowerTransformer``: lambdas by scipy's
  bounded Brent search, :mod:`arenalite.models.yeo_johnson`, then a ``StandardScaler``), and
  the soft outlier clipping at ``outlier_threshold`` robust stds (``OutlierRemover``).

Everything runs in float64 (the packages' dtype for float64 input).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .yeo_johnson import yeo_johnson, yeo_johnson_lambda

NORM_METHODS = ("none", "power")
"""The normalisation methods reproduced (the packages also have quantile/robust ones)."""
SCALE_EPSILON = 1e-6
"""Added to the column std of the first z-score (``CustomStandardScaler``)."""
Z_CLIP = 100.0
"""The first z-score is clipped to [−Z_CLIP, Z_CLIP]."""
STD_FLOOR = 1e-6
"""The outlier stage's stds are at least this (``OutlierRemover``)."""
_EPS64 = np.finfo(np.float64).eps


@dataclass(frozen=True)
class PowerFit:
    """A fitted sklearn ``PowerTransformer(method="yeo-johnson", standardize=True)``."""

    lambdas: np.ndarray  # F, float64; 1.0 for (near-)constant columns
    constant: np.ndarray  # F, bool: columns left untransformed in fit (lambda forced to 1)
    mean: np.ndarray  # F, its StandardScaler's mean
    scale: np.ndarray  # F, its StandardScaler's scale (1 where the variance is ~0)


@dataclass(frozen=True)
class PipelineFit:
    """One fitted ``PreprocessingPipeline`` (a normalisation method) and its train output."""

    method: str  # "none" or "power"
    z_mean: np.ndarray  # F, first z-score mean
    z_scale: np.ndarray  # F, first z-score std + 1e-6
    z_min: np.ndarray  # F, column minima of the train z-scores (fallback clip bounds)
    z_max: np.ndarray  # F, column maxima of the train z-scores
    power: PowerFit | None  # the Yeo-Johnson stage, None for "none"
    lower: np.ndarray  # F, outlier stage: mean − threshold·std
    upper: np.ndarray  # F, outlier stage: mean + threshold·std
    x_train: np.ndarray  # n × F, float64: the transformed training rows


def impute_means(x_train: np.ndarray) -> np.ndarray:
    """The training column means over the non-NaN values; 0 for an all-NaN column.

    sklearn ``SimpleImputer(strategy="mean")``: a masked mean, sum of the present values
    times 1.0 divided by their count (an all-NaN column is 0 here; whether it is kept is
    the caller's rule: ``keep_empty_features``).
    """
    missing = np.isnan(x_train)
    means = np.ma.mean(np.ma.masked_array(x_train, mask=missing), axis=0)
    out = np.array(np.ma.getdata(means), dtype=x_train.dtype)
    out[np.ma.getmaskarray(means)] = 0.0
    return out


def impute(x: np.ndarray, means: np.ndarray) -> np.ndarray:
    """Replace each NaN by its column's training mean (a new array)."""
    return np.where(np.isnan(x), means[np.newaxis, :], x)


def standard_scaler_stats(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and scale of sklearn's ``StandardScaler`` fitted on ``x`` (n × F, no NaN).

    The corrected two-pass variance of ``_incremental_mean_and_var`` accumulated in
    float64; a column whose variance is within the two-pass error bound
    (var ≤ n·eps·var + (n·mean·eps)²) gets scale 1.
    """
    n = x.shape[0]
    total = np.sum(x.astype(np.float64, copy=False), axis=0)
    count = np.full(x.shape[1], float(n))
    mean = total / count
    temp = x - total / count
    correction = np.sum(temp, axis=0)
    temp **= 2
    var = (np.sum(temp, axis=0) - correction ** 2 / count) / count
    constant = var <= n * _EPS64 * var + (n * mean * _EPS64) ** 2
    scale = np.sqrt(var)
    scale[constant] = 1.0
    return mean, scale


def fit_power(x: np.ndarray) -> tuple[PowerFit, np.ndarray]:
    """Fit the Yeo-Johnson stage on ``x`` (n × F float64) and return it with ``x`` transformed.

    Per column, a column sklearn deems constant (``_is_constant_feature`` on its float64
    mean and variance) keeps lambda 1 and is left as is; the others get their lambda and
    are transformed. Then a ``StandardScaler`` is fitted on the result and applied.
    """
    n = x.shape[0]
    mean = np.mean(x, axis=0, dtype=np.float64)
    var = np.var(x, axis=0, dtype=np.float64)
    constant = var <= n * _EPS64 * var + (n * mean * _EPS64) ** 2
    out = np.array(x, dtype=np.float64, order="C")
    lambdas = np.ones(x.shape[1])
    for i in np.flatnonzero(~constant):  # one scalar search per feature
        lambdas[i] = yeo_johnson_lambda(out[:, i])
        out[:, i] = yeo_johnson(out[:, i], lambdas[i])
    s_mean, s_scale = standard_scaler_stats(out)
    return PowerFit(lambdas, constant, s_mean, s_scale), (out - s_mean) / s_scale


def power_columns(fit: PowerFit, x: np.ndarray) -> np.ndarray:
    """Yeo-Johnson transform of every column at its lambda (lambda 1 included), unscaled."""
    out = np.empty_like(x, dtype=np.float64)
    for i, lmbda in enumerate(fit.lambdas):
        out[:, i] = yeo_johnson(x[:, i], lmbda)
    return out


def apply_power(fit: PowerFit, x: np.ndarray) -> np.ndarray:
    """Transform rows with a fitted Yeo-Johnson stage, then its StandardScaler."""
    return (power_columns(fit, x) - fit.mean) / fit.scale


def _outlier_bounds(x: np.ndarray, threshold: float) -> tuple[np.ndarray, np.ndarray]:
    ddof = 1 if x.shape[0] > 1 else 0
    mean = np.nanmean(x, axis=0)
    std = np.maximum(np.nanstd(x, axis=0, ddof=ddof), STD_FLOOR)
    outside = (x < (mean - threshold * std)[np.newaxis, :]) | \
              (x > (mean + threshold * std)[np.newaxis, :])
    clean = np.where(outside, np.nan, x)
    mean = np.nanmean(clean, axis=0)
    std = np.maximum(np.nanstd(clean, axis=0, ddof=ddof), STD_FLOOR)
    return mean - threshold * std, mean + threshold * std


def soft_clip(x: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """``OutlierRemover.transform``: x ← max(L − log1p|x|, x), then min(U + log1p|x|, x)."""
    x = np.maximum(-np.log1p(np.abs(x)) + lower, x)
    return np.minimum(np.log1p(np.abs(x)) + upper, x)


def fit_pipeline(x_train: np.ndarray, method: str, outlier_threshold: float = 4.0) -> PipelineFit:
    """Fit one ``PreprocessingPipeline`` on the (imputed, filtered) training rows (float64)."""
    if method not in NORM_METHODS:
        raise ValueError(f"norm method must be one of {NORM_METHODS}, got {method!r}")
    z_mean = np.mean(x_train, axis=0)
    z_scale = np.std(x_train, axis=0) + SCALE_EPSILON
    z = np.clip((x_train - z_mean) / z_scale, -Z_CLIP, Z_CLIP)
    z_min, z_max = np.min(z, axis=0), np.max(z, axis=0)
    power = None
    if method == "power":
        power, z = fit_power(z)
    lower, upper = _outlier_bounds(z, outlier_threshold)
    return PipelineFit(method, z_mean, z_scale, z_min, z_max, power, lower, upper,
                       soft_clip(z, lower, upper))


def transform(fit: PipelineFit, x: np.ndarray) -> np.ndarray:
    """Apply a fitted pipeline to new rows (imputed, filtered, float64).

    When the Yeo-Johnson stage overflows to ±inf anywhere (a value far outside the
    training range), the package clips all z-scores to the training minima/maxima and
    transforms again; so does this.
    """
    z = np.clip((x - fit.z_mean) / fit.z_scale, -Z_CLIP, Z_CLIP)
    if fit.power is not None:
        out = power_columns(fit.power, z)
        if np.isinf(out).any():
            out = power_columns(fit.power, np.clip(z, fit.z_min, fit.z_max))
        z = (out - fit.power.mean) / fit.power.scale
    return soft_clip(z, fit.lower, fit.upper)
