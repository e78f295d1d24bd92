"""TabPFN v3 regression targets and output aggregation, as ``TabPFNRegressor`` (tabpfn 9.2.0).

Numpy and scipy only. The two entry points the predictor calls:

- ``fit_target(y_train, transform_name) -> (TargetFit, y_member)``: z-scores ``y_train``
  (float64, ``np.std`` with ddof 0, + 1e-20), then fits and applies the member's target
  transform (an entry of ``REGRESSION_Y_PREPROCESS_TRANSFORMS``: ``None``, ``"safepower"``,
  ``"power"``, ``"log"``, ``"1_plus_log"``, ``"exp"``). ``y_member`` (float32) is the
  member's model input ``y_train``.
- ``predict_from_logits(member_logits, fits, borders, temperature, output_type="mean",
  quantiles=None, repair_nan_borders=True)`` (``temperature``: the checkpoint's
  ``SOFTMAX_TEMPERATURE``; ``repair_nan_borders``: ``FIX_NAN_BORDERS_AFTER_TARGET_TRANSFORM``):
  the members' raw logits (each ``(M, num_buckets)``), their fits and the checkpoint's
  borders to ``predict``'s output, in y's units: ``"mean"``, ``"median"``,
  ``"mode"`` (``(M,)`` float64), ``"quantiles"`` (a list of ``(M,)``, default levels 0.1 … 0.9),
  ``"main"`` (a dict of the four).

The steps in between are separate pure functions: ``member_borders`` (the borders mapped back
through the inverse target transform and repaired), ``rebin_matrix`` / ``member_probabilities``
(a member's distribution re-binned onto the common borders), ``aggregate`` (mean over members,
log), and ``decode`` (the bar distribution's mean, median, mode and quantiles). The dtypes follow
the package: the borders and the probabilities are float32, the re-binning weights float64 cast
to float32, and the decoded value is scaled back to y's units in float64.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import special

from ..yeo_johnson import yeo_johnson, yeo_johnson_lambda
from .layers import softmax

TARGET_TRANSFORMS = (None, "safepower", "power", "log", "1_plus_log", "exp")
"""The target transforms ported (``REGRESSION_Y_PREPROCESS_TRANSFORMS`` entries)."""
NAN_BORDER_LIMIT = 1e3  # REGRESSION_NAN_BORDER_LIMIT_UPPER / -LOWER
DEFAULT_QUANTILES = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
OUTPUT_TYPES = ("mean", "median", "mode", "quantiles", "main")
_F32 = np.float32


@dataclass(frozen=True)
class TargetFit:
    """One member's fitted target side: the z-scoring and the target transform."""

    mean: float  # y_train_mean_
    std: float  # y_train_std_ (np.std + 1e-20)
    transform_name: str | None
    lmbda: float = 1.0  # Yeo-Johnson λ ("safepower", "power")
    scaler_mean: float = 0.0  # the StandardScaler after the power transform
    scaler_scale: float = 1.0


# ---------------------------------------------------------------- the target transforms


def _finite_or_mean(x: np.ndarray) -> np.ndarray:
    """±inf → NaN → the mean of the finite values (the package's guard around its scaler)."""
    x = np.where(np.isfinite(x), x, np.nan)
    if np.isnan(x).any():
        x = np.where(np.isnan(x), np.nanmean(x) if (~np.isnan(x)).any() else 0.0, x)
    return x


def _yeo_johnson_inverse_power(x: np.ndarray, lmbda: float) -> np.ndarray:
    """sklearn's inverse Yeo-Johnson (``"power"``) of float32 borders, in its power form:
    float64 arithmetic, float32 result (overflow → inf)."""
    x64 = x.astype(np.float64)
    pos = x64 >= 0
    out = np.empty_like(x64)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        if abs(lmbda) < np.spacing(1.0):
            out[pos] = np.exp(x64[pos]) - 1
        else:
            out[pos] = np.power(x64[pos] * lmbda + 1, 1 / lmbda) - 1
        if abs(lmbda - 2) > np.spacing(1.0):
            out[~pos] = 1 - np.power(-(2 - lmbda) * x64[~pos] + 1, 1 / (2 - lmbda))
        else:
            out[~pos] = 1 - np.exp(-x64[~pos])
        return out.astype(np.float32)


def _yeo_johnson_inverse(x: np.ndarray, lmbda: float) -> np.ndarray:
    """The package's overflow-safe inverse Yeo-Johnson (``"safepower"``) of float32 borders:
    float64 arithmetic, the expm1 argument clipped below log(float32 max), float32 result."""
    x64 = x.astype(np.float64)
    pos = x64 >= 0
    out = np.empty_like(x64)
    log_max = np.log(np.finfo(np.float32).max)
    bound = float(log_max - 4 * np.spacing(log_max))
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        if abs(lmbda) < np.spacing(1.0):
            arg_pos = x64[pos]
        else:
            arg_pos = np.log1p(x64[pos] * lmbda) / lmbda
        if abs(lmbda - 2) > np.spacing(1.0):
            arg_neg = np.log1p(-(2 - lmbda) * x64[~pos]) / (2 - lmbda)
        else:
            arg_neg = -x64[~pos]
        out[pos] = np.expm1(np.clip(arg_pos, -bound, bound))
        out[~pos] = -np.expm1(np.clip(arg_neg, -bound, bound))
        return out.astype(np.float32)


def fit_target(y_train: np.ndarray, transform_name: str | None) -> tuple[TargetFit, np.ndarray]:
    """Z-score ``y_train`` and apply the member's target transform; return the fit and the
    member's ``y_train`` for the model (float32)."""
    if transform_name not in TARGET_TRANSFORMS:
        raise ValueError(f"target transform {transform_name!r} is not ported "
                         f"(only {TARGET_TRANSFORMS})")
    y = np.asarray(y_train, dtype=np.float64)
    if y.ndim != 1 or len(y) == 0:
        raise ValueError(f"y_train must be a non-empty 1-d array, got shape {y.shape}")
    if not np.isfinite(y).all():
        raise ValueError("y_train has NaN or ±inf values")
    if np.unique(y).size == 1:
        raise ValueError("y_train is constant: the package predicts y_train[0] for every "
                         "row without calling the model")
    mean = float(np.mean(y))
    std = float(np.std(y)) + 1e-20
    z = (y - mean) / std
    fit = TargetFit(mean=mean, std=std, transform_name=transform_name)
    if transform_name is None:
        return fit, z.astype(np.float32)
    if transform_name in ("log", "1_plus_log", "exp"):
        func = {"log": np.log, "1_plus_log": np.log1p, "exp": np.exp}[transform_name]
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            return fit, func(z).astype(np.float32)
    var = np.var(z)
    eps = np.finfo(np.float64).eps
    constant = var <= len(z) * eps * var + (len(z) * np.mean(z) * eps) ** 2
    lmbda = 1.0 if constant else yeo_johnson_lambda(z)
    with np.errstate(over="ignore", invalid="ignore"):
        t = _finite_or_mean(yeo_johnson(z, lmbda) if not constant else z.copy())
    s_mean = float(np.mean(t))
    s_var = float(np.var(t))
    s_scale = math.sqrt(s_var)
    if s_var <= len(t) * eps * s_var + (len(t) * s_mean * eps) ** 2 or s_scale < 10 * eps:
        s_scale = 1.0
    out = _finite_or_mean((t - s_mean) / s_scale)
    fit = TargetFit(mean=mean, std=std, transform_name=transform_name, lmbda=lmbda,
                    scaler_mean=s_mean, scaler_scale=s_scale)
    return fit, out.astype(np.float32)


# ---------------------------------------------------------------- the member's borders


def _inverse_target(fit: TargetFit, borders: np.ndarray) -> np.ndarray:
    """The target transform's inverse on float32 borders (float32 out, as the package)."""
    b = borders.astype(np.float32)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        if fit.transform_name == "log":
            return np.exp(b)
        if fit.transform_name == "1_plus_log":
            return np.exp(b) - _F32(1)
        if fit.transform_name == "exp":
            return np.log(b)
        unscaled = b * _F32(fit.scaler_scale) + _F32(fit.scaler_mean)  # float32 throughout
        if fit.transform_name == "power":
            return _yeo_johnson_inverse_power(unscaled, fit.lmbda)
        return _yeo_johnson_inverse(unscaled, fit.lmbda)


def member_borders(fit: TargetFit, borders: np.ndarray, repair_nan_borders: bool = True
                   ) -> tuple[np.ndarray, np.ndarray | None]:
    """A member's borders in the z-scored space (float32) and its bucket cancel mask (or None).

    Without a transform: the borders unchanged. Else the inverse transform of the borders,
    then (``FIX_NAN_BORDERS_AFTER_TARGET_TRANSFORM``) the run of broken borders (non-finite or
    beyond ±1e3) at either end set to the nearest good border, the outermost one moved 1 out,
    and the buckets touching a broken border cancelled (their logits −inf); then the package's
    repair: a NaN last border → the largest border, then doubled in magnitude; a last bucket
    narrower than 1e-6 widened by 10 % of the last border, a zero-width first bucket by 10 % of
    the first border. Descending borders are refused (the package fails on them too).
    """
    b = np.asarray(borders)
    if b.ndim != 1 or len(b) < 4:
        raise ValueError(f"borders must be 1-d with at least 4 entries, got shape {b.shape}")
    if fit.transform_name is None:
        return b.astype(np.float32), None
    bt = _inverse_target(fit, b)
    mask = None
    if repair_nan_borders:
        broken = ~np.isfinite(bt) | (bt > NAN_BORDER_LIMIT) | (bt < -NAN_BORDER_LIMIT)
        if broken.any():
            bt, mask = _cancel_broken(bt, broken)
    if np.isnan(bt[-1]):
        nans = np.isnan(bt)
        bt[nans] = bt[~nans].max()
        bt[-1] += np.abs(bt[-1])
    if bt[-1] - bt[-2] < 1e-6:
        bt[-1] += np.abs(bt[-1] * _F32(0.1))
    if bt[0] == bt[1]:
        bt[0] -= np.abs(bt[0] * _F32(0.1))
    if (np.argsort(bt) == np.arange(len(bt) - 1, -1, -1)).all():
        raise ValueError(f"target transform {fit.transform_name!r} gave descending borders, "
                         "which tabpfn 9.2.0 cannot predict with either")
    return bt, mask


def _cancel_broken(bt: np.ndarray, broken: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Flatten the broken runs at both ends of the borders; the buckets they touch."""
    bt = bt.copy()
    falls = np.flatnonzero(broken[:-1] & ~broken[1:])  # broken → good
    rises = np.flatnonzero(~broken[:-1] & broken[1:])  # good → broken
    if len(falls) > 1 or len(rises) > 1 or (len(falls) and not broken[0]) or \
            (len(rises) and not broken[-1]):
        raise ValueError("broken borders lie inside the grid, not in runs at its ends")
    if len(falls):
        first_good = falls[0] + 1
        bt[:first_good] = bt[first_good]
        bt[0] = bt[1] - _F32(1)
    if len(rises):
        last_good = rises[0]
        bt[last_good + 1:] = bt[last_good]
        bt[-1] = bt[-2] + _F32(1)
    return bt, broken[1:] | broken[:-1]


# ---------------------------------------------------------------- re-binning


def _tail_survival(distance: np.ndarray, width: float) -> np.ndarray:
    """Share of an outer bucket's half-normal tail beyond ``distance`` from its inner border
    (the half-normal puts half its mass within the bucket's width)."""
    width = max(width, np.finfo(np.float64).tiny)
    sigma = width / (math.sqrt(2.0) * special.erfinv(0.5))
    return special.erfc(distance / (sigma * math.sqrt(2.0)))


def rebin_matrix(frm: np.ndarray, to: np.ndarray) -> np.ndarray:
    """``(len(frm) − 1, len(to) − 1)`` float64 weights taking bucket masses on ``frm`` to ``to``.

    An interior source bucket is uniform: its share of a destination bucket is their overlap
    over its width (the first and last destination buckets extend to ∓∞); a zero-width one
    goes whole to the destination bucket holding its point. The two outer source buckets are
    half-normal tails from their inner borders, scale such that half the mass lies within the
    bucket, split over the destination buckets by the tail's mass in each.
    """
    f = np.asarray(frm, dtype=np.float64)
    t = np.asarray(to, dtype=np.float64)
    n_frm, n_to = len(f) - 1, len(t) - 1
    if n_frm < 3:
        raise ValueError("frm needs an interior bucket between its two tails")
    lower, upper = t[:-1].copy(), t[1:].copy()
    lower[0], upper[-1] = -np.inf, np.inf
    w = np.zeros((n_frm, n_to))
    lo, hi = f[1:-2, None], f[2:-1, None]
    overlap = np.clip(np.minimum(hi, upper) - np.maximum(lo, lower), 0.0, None)
    width = (hi - lo)
    with np.errstate(invalid="ignore", divide="ignore"):
        w[1:-1] = np.where(width > 0, overlap / width, 0.0)
    point = np.flatnonzero(f[1:-2] == f[2:-1]) + 1
    dest = np.clip(np.searchsorted(t, f[point], side="right") - 1, 0, n_to - 1)
    w[point, dest] += 1.0

    def low_surv(y):
        return _tail_survival(f[1] - np.minimum(y, f[1]), f[1] - f[0])

    def high_surv(y):
        return _tail_survival(np.maximum(y, f[-2]) - f[-2], f[-1] - f[-2])

    w[0] = np.clip(low_surv(upper) - low_surv(lower), 0.0, None)
    w[-1] = np.clip(high_surv(lower) - high_surv(upper), 0.0, None)
    return w


def member_probabilities(logits: np.ndarray, fit: TargetFit, borders: np.ndarray,
                         temperature: float, repair_nan_borders: bool = True) -> np.ndarray:
    """One member's ``(M, num_buckets)`` float32 probabilities on the common ``borders``.

    The raw logits (float32) divided by the temperature, the cancelled buckets set to −inf,
    softmax; unless the member's borders equal ``borders``, re-binned onto them by
    :func:`rebin_matrix` (cast to float32).
    """
    z = np.asarray(logits)
    b = np.asarray(borders).astype(np.float32)
    if z.ndim != 2 or z.shape[1] != len(b) - 1:
        raise ValueError(f"logits must be (M, {len(b) - 1}) for {len(b)} borders, "
                         f"got shape {z.shape}")
    z = z.astype(np.float32)
    if temperature != 1:
        z = z / _F32(temperature)
    frm, mask = member_borders(fit, b, repair_nan_borders)
    if mask is not None:
        z = np.where(mask, _F32(-np.inf), z)
    probs = softmax(z.copy())
    if np.array_equal(frm, b):
        return probs
    return probs @ rebin_matrix(frm, b).astype(np.float32)


def aggregate(member_probs: list[np.ndarray]) -> np.ndarray:
    """The ensemble's log-probabilities: log of the members' mean probabilities (float32)."""
    total = member_probs[0].astype(np.float32)
    for p in member_probs[1:]:
        total = total + p.astype(np.float32)
    with np.errstate(divide="ignore"):
        return np.log(total / _F32(len(member_probs)))


# ---------------------------------------------------------------- decoding


def _halfnormal_scale(width: np.float32) -> np.float32:
    """Half-normal scale with half its mass within ``width`` (float32, as torch computes)."""
    median_unit = _F32(special.erfinv(_F32(0.5))) * _F32(math.sqrt(2.0))
    return _F32(width) / median_unit


def _halfnormal_icdf(p: np.ndarray, scale: np.float32) -> np.ndarray:
    """Half-normal quantile function, float32."""
    unit = (p.astype(np.float32) + _F32(1)) / _F32(2)
    return scale * special.erfinv(_F32(2) * unit - _F32(1)) * _F32(math.sqrt(2.0))


def _icdf(logp: np.ndarray, b: np.ndarray, q: float) -> np.ndarray:
    """The bar distribution's q-quantile, the outer buckets half-normal tails (float32)."""
    if q == 0.0:
        return np.full(len(logp), -np.inf, dtype=np.float32)
    if q == 1.0:
        return np.full(len(logp), np.inf, dtype=np.float32)
    probs = softmax(logp.copy())
    cum = np.cumsum(probs.astype(np.float64), axis=-1).astype(np.float32)
    n_bars = len(b) - 1
    idx = np.clip((cum < _F32(q)).sum(axis=-1), 0, n_bars - 1)
    rows = np.arange(len(logp))
    before = np.concatenate([np.zeros((len(logp), 1), np.float32), cum[:, :-1]], axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        cond = np.clip((_F32(q) - before[rows, idx]) / probs[rows, idx], 0, 1).astype(_F32)
    widths = b[1:] - b[:-1]
    values = b[idx] + widths[idx] * cond
    with np.errstate(over="ignore"):
        left = b[1] - _halfnormal_icdf(_F32(1) - cond, _halfnormal_scale(widths[0]))
        right = b[-2] + _halfnormal_icdf(cond, _halfnormal_scale(widths[-1]))
    values = np.where(idx == 0, left, values)
    return np.where(idx == n_bars - 1, right, values)


def decode(logp: np.ndarray, fit: TargetFit, borders: np.ndarray, output_type: str = "mean",
           quantiles: list[float] | None = None) -> np.ndarray | list[np.ndarray] | dict:
    """The aggregated log-probabilities to ``predict``'s output in y's units.

    Decoded on the z-scored ``borders`` in float32 (the bar distribution renormalises by a
    softmax): ``"mean"`` — bucket centres, the outer ones replaced by the tails' means
    (inner border ∓ scale·√(2/π)); ``"median"`` / ``"quantiles"`` — inverse CDF, linear
    within a bucket, a tail's half-normal quantile in an outer bucket; ``"mode"`` — the centre
    of the densest bucket (probability / width). Then ``· std + mean`` in float64.
    """
    if output_type not in OUTPUT_TYPES:
        raise ValueError(f"output_type {output_type!r} is not one of {OUTPUT_TYPES}")
    qs = list(DEFAULT_QUANTILES if quantiles is None else quantiles)
    if not all(isinstance(q, float) and 0 <= q <= 1 for q in qs):
        raise ValueError(f"quantiles must be floats in [0, 1], got {qs}")
    if output_type == "main":
        return {k: decode(logp, fit, borders, k, qs)
                for k in ("mean", "median", "mode", "quantiles")}
    b = np.asarray(borders).astype(np.float32)
    logp = np.asarray(logp).astype(np.float32)

    def raw(v):
        return v.astype(np.float64) * fit.std + fit.mean

    if output_type == "quantiles":
        return [raw(_icdf(logp, b, q)) for q in qs]
    if output_type == "median":
        return raw(_icdf(logp, b, 0.5))
    widths = b[1:] - b[:-1]
    centres = b[:-1] + widths / _F32(2)
    if output_type == "mode":
        return raw(centres[np.argmax(softmax(logp.copy()) / widths, axis=-1)])
    sqrt_2_over_pi = _F32(math.sqrt(2 / math.pi))
    centres[0] = b[1] - _halfnormal_scale(widths[0]) * sqrt_2_over_pi
    centres[-1] = b[-2] + _halfnormal_scale(widths[-1]) * sqrt_2_over_pi
    return raw(softmax(logp.copy()) @ centres)


def predict_from_logits(member_logits: list[np.ndarray], fits: list[TargetFit],
                        borders: np.ndarray, temperature: float, output_type: str = "mean",
                        quantiles: list[float] | None = None,
                        repair_nan_borders: bool = True) -> np.ndarray | list[np.ndarray] | dict:
    """``TabPFNRegressor.predict`` from the members' raw logits (see the module docstring).

    All ``fits`` must share the z-scoring (they come from the same ``y_train``).
    """
    if len(member_logits) == 0 or len(member_logits) != len(fits):
        raise ValueError(f"member_logits ({len(member_logits)}) and fits ({len(fits)}) must "
                         "be non-empty and of the same length")
    if any((f.mean, f.std) != (fits[0].mean, fits[0].std) for f in fits):
        raise ValueError("fits differ in their z-scoring: they must come from one y_train")
    shapes = {np.shape(z) for z in member_logits}
    if len(shapes) != 1:
        raise ValueError(f"member_logits differ in shape: {sorted(shapes)}")
    probs = [member_probabilities(z, f, borders, temperature, repair_nan_borders)
             for z, f in zip(member_logits, fits, strict=True)]
    return decode(aggregate(probs), fits[0], borders, output_type, quantiles)
