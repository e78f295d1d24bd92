"""Metrics computed from predictions: classification, probabilistic and regression scores.

Every function validates its inputs (shape, label values, probability range and row
sums, finiteness) and raises a ``ValueError``/``TypeError`` naming the argument, the
offending value and its position. Nothing is dropped, coerced or returned as NaN.

Conventions
-----------
* Binary metrics (ROC AUC, average precision, binary log loss / Brier) take labels in
  {0, 1} (or booleans) and the score / probability of the positive class.
* Multiclass log loss / Brier take integer labels ``0 .. C-1`` and an ``(n, C)``
  probability matrix whose rows sum to 1 within ``atol``.
* Log loss clips probabilities to ``[eps, 1 - eps]`` with ``eps`` the float64 machine
  epsilon (scikit-learn's convention), so a confident wrong prediction costs
  ``-ln(eps) ≈ 36.04`` rather than infinity.
* The Gaussian CRPS needs the normal CDF; it uses ``scipy.special.ndtr`` (imported
  lazily), exact to double precision, rather than an approximation.

Every metric is registered in :mod:`arenalite.registry` (direction, bounds, optimum,
anchor); :data:`METRIC_FUNCTIONS` maps the registered names to these functions.
The input checks and the rank-based AUROC/AUPRC cores live in :mod:`arenalite.metric_core`,
shared with the AUROC/AUPRC audit (:mod:`arenalite.subgroup`), whose ``subgroup_report`` and
``mistake_gains`` are also importable from here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .metric_core import (
    as_array,
    average_precision_core,
    binary_labels,
    check_same_length,
    class_counts,
    labels_1d,
    numeric_1d,
    reject,
    roc_auc_core,
)
from .subgroup import mistake_gains, subgroup_report

__all__ = [
    "METRIC_FUNCTIONS",
    "ROW_SUM_ATOL",
    "accuracy",
    "average_precision",
    "balanced_accuracy",
    "brier",
    "crps_gaussian",
    "gaussian_nll",
    "get_metric_function",
    "log_loss",
    "mae",
    "mistake_gains",
    "r2",
    "rmse",
    "roc_auc",
    "subgroup_report",
]

ROW_SUM_ATOL = 1e-5
"""Default tolerance on the row sums of a probability matrix (float32 softmax passes)."""

_EPS = float(np.finfo(np.float64).eps)


# ----------------------------------------------------------------------------- validation


def _probabilities(values: Any, name: str) -> np.ndarray:
    arr = numeric_1d(values, name)
    reject((arr < 0) | (arr > 1),
           lambda i: f"{name} must be probabilities in [0, 1]; found {arr[i]:g} at position {i}")
    return arr


def _probability_matrix(values: Any, name: str, atol: float) -> np.ndarray:
    arr = as_array(values, name)
    if arr.ndim != 2:
        raise ValueError(f"{name} must be an (n, C) matrix, got shape {arr.shape}")
    if arr.shape[0] == 0 or arr.shape[1] < 2:
        raise ValueError(
            f"{name} needs at least one row and two class columns, got shape {arr.shape}"
        )
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"{name} must be numeric, got dtype {arr.dtype}")
    p = arr.astype(np.float64)
    bad = ~np.isfinite(p) | (p < 0) | (p > 1)
    if bad.any():
        r, c = (int(v) for v in np.argwhere(bad)[0])
        raise ValueError(
            f"{name} must be finite probabilities in [0, 1]; found {p[r, c]} at row {r}, column {c}"
        )
    sums = p.sum(axis=1)
    reject(np.abs(sums - 1.0) > atol,
           lambda r: f"rows of {name} must sum to 1 (within {atol:g}); row {r} sums to "
                     f"{sums[r]:.10g}")
    return p


def _class_labels(values: Any, n_classes: int, name: str) -> np.ndarray:
    arr = numeric_1d(values, name)
    reject((arr != np.round(arr)) | (arr < 0) | (arr >= n_classes),
           lambda i: f"{name} must hold integer class labels 0..{n_classes - 1} (one per "
                     f"probability column); found {arr[i]:g} at position {i}")
    return arr.astype(np.intp)


# ----------------------------------------------------------------------------- metrics


def _label_pair(y_true: Any, y_pred: Any) -> tuple[np.ndarray, np.ndarray]:
    """True and predicted labels of the same length and kind (both numeric or both not).

    Comparing text labels with numbers would make every prediction silently wrong.
    """
    t = labels_1d(y_true, "y_true")
    p = labels_1d(y_pred, "y_pred")
    check_same_length(t, p, "y_true", "y_pred")
    if (t.dtype.kind == "f") != (p.dtype.kind == "f"):
        which = 0 if t.dtype.kind != "f" else 1
        raise TypeError(
            f"y_true and y_pred must hold labels of the same kind, got "
            f"{'numeric' if t.dtype.kind == 'f' else 'non-numeric'} y_true and "
            f"{'numeric' if p.dtype.kind == 'f' else 'non-numeric'} y_pred "
            f"(e.g. {(t, p)[which][:1].tolist()[0]!r} at position 0)"
        )
    return t, p


def accuracy(y_true: Any, y_pred: Any) -> float:
    """Share of predicted labels equal to the true labels."""
    t, p = _label_pair(y_true, y_pred)
    return float(np.mean(t == p))


def balanced_accuracy(y_true: Any, y_pred: Any) -> float:
    """Mean recall over the classes present in ``y_true`` (robust to class imbalance)."""
    t, p = _label_pair(y_true, y_pred)
    _, inverse = np.unique(t, return_inverse=True)
    hits = np.bincount(inverse, weights=(t == p).astype(np.float64))
    return float(np.mean(hits / np.bincount(inverse)))


def roc_auc(y_true: Any, y_score: Any) -> float:
    """ROC AUC in Mann-Whitney form: P(score of a positive > score of a negative), ties ½.

    A single-class ``y_true`` raises ``ValueError`` (the AUC is undefined).
    """
    y = binary_labels(y_true, "y_true")
    s = numeric_1d(y_score, "y_score")
    check_same_length(y, s, "y_true", "y_score")
    n_pos, n_neg = class_counts(y, "y_true", "ROC AUC")
    return roc_auc_core(y, s, n_pos, n_neg)


def average_precision(y_true: Any, y_score: Any) -> float:
    """Average precision (AUPRC), step-wise: Σ (R_k − R_{k−1}) P_k over distinct thresholds.

    This is scikit-learn's definition (no interpolation; tied scores form one
    threshold). ``y_true`` without positives raises ``ValueError`` (recall undefined).
    """
    y = binary_labels(y_true, "y_true")
    s = numeric_1d(y_score, "y_score")
    check_same_length(y, s, "y_true", "y_score")
    n_pos = int(y.sum())
    if n_pos == 0:
        raise ValueError(
            "average precision is undefined when y_true has no positive labels "
            f"(all {len(y)} are 0)"
        )
    return average_precision_core(y, s, n_pos)


def _probabilistic_inputs(y_true: Any, y_prob: Any, atol: float) -> tuple[np.ndarray, np.ndarray]:
    """One-hot targets and probabilities, (n, C), from binary or multiclass input."""
    arr = as_array(y_prob, "y_prob")
    if arr.ndim == 1:
        p = _probabilities(arr, "y_prob")
        y = binary_labels(y_true, "y_true")
        check_same_length(y, p, "y_true", "y_prob")
        return y.astype(np.float64)[:, None], p[:, None]
    p = _probability_matrix(arr, "y_prob", atol)
    y = _class_labels(y_true, p.shape[1], "y_true")
    check_same_length(y, p, "y_true", "y_prob")
    onehot = np.zeros_like(p)
    onehot[np.arange(len(y)), y] = 1.0
    return onehot, p


def log_loss(y_true: Any, y_prob: Any, *, atol: float = ROW_SUM_ATOL) -> float:
    """Mean negative log-likelihood of the true class (natural log).

    Binary: 1-D probability of class 1. Multiclass: (n, C) matrix, labels 0..C−1.
    Probabilities are clipped to [eps, 1 − eps] (float64 eps, as scikit-learn does).
    """
    target, p = _probabilistic_inputs(y_true, y_prob, atol)
    p = np.clip(p, _EPS, 1.0 - _EPS)
    if p.shape[1] == 1:
        y = target[:, 0]
        return float(-np.mean(y * np.log(p[:, 0]) + (1.0 - y) * np.log1p(-p[:, 0])))
    return float(-np.mean(np.log(p[target == 1.0])))


def brier(y_true: Any, y_prob: Any, *, atol: float = ROW_SUM_ATOL) -> float:
    """Brier score: mean squared distance between probabilities and the one-hot truth.

    Binary (1-D probability of class 1): mean (p − y)², range [0, 1]; multiclass
    ((n, C) matrix): mean over rows of Σ_c (p_c − 1[y = c])², range [0, 2].
    """
    target, p = _probabilistic_inputs(y_true, y_prob, atol)
    return float(np.mean(np.sum((p - target) ** 2, axis=1)))


def _regression_inputs(y_true: Any, y_pred: Any,
                       pred_name: str = "y_pred") -> tuple[np.ndarray, np.ndarray]:
    t = numeric_1d(y_true, "y_true")
    p = numeric_1d(y_pred, pred_name)
    check_same_length(t, p, "y_true", pred_name)
    return t, p


def rmse(y_true: Any, y_pred: Any) -> float:
    """Root mean squared error."""
    t, p = _regression_inputs(y_true, y_pred)
    return float(np.sqrt(np.mean((t - p) ** 2)))


def mae(y_true: Any, y_pred: Any) -> float:
    """Mean absolute error."""
    t, p = _regression_inputs(y_true, y_pred)
    return float(np.mean(np.abs(t - p)))


def r2(y_true: Any, y_pred: Any) -> float:
    """Coefficient of determination 1 − SS_res / SS_tot.

    A constant ``y_true`` raises ``ValueError``: SS_tot is 0 and R² is undefined.
    """
    t, p = _regression_inputs(y_true, y_pred)
    ss_tot = np.sum((t - t.mean()) ** 2)
    if ss_tot == 0:
        raise ValueError(
            f"R² is undefined when y_true is constant (all {len(t)} values are {t[0]:g})"
        )
    return float(1.0 - np.sum((t - p) ** 2) / ss_tot)


def _gaussian_inputs(y_true: Any, mean: Any, std: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    t, mu = _regression_inputs(y_true, mean, "mean")
    sigma = numeric_1d(std, "std")
    check_same_length(t, sigma, "y_true", "std")
    reject(sigma <= 0,
           lambda i: f"std must be strictly positive; found {sigma[i]:g} at position {i}")
    return t, mu, sigma


def gaussian_nll(y_true: Any, mean: Any, std: Any) -> float:
    """Mean negative log density of ``y_true`` under N(mean, std²) (natural log)."""
    t, mu, sigma = _gaussian_inputs(y_true, mean, std)
    z = (t - mu) / sigma
    return float(np.mean(0.5 * np.log(2.0 * np.pi) + np.log(sigma) + 0.5 * z * z))


def crps_gaussian(y_true: Any, mean: Any, std: Any) -> float:
    """Mean CRPS of Gaussian predictions N(mean, std²) (Gneiting & Raftery 2007 closed form).

    CRPS = σ [z (2Φ(z) − 1) + 2φ(z) − 1/√π] with z = (y − μ)/σ; same unit as y.
    """
    from scipy.special import ndtr

    t, mu, sigma = _gaussian_inputs(y_true, mean, std)
    z = (t - mu) / sigma
    pdf = np.exp(-0.5 * z * z) / np.sqrt(2.0 * np.pi)
    return float(np.mean(sigma * (z * (2.0 * ndtr(z) - 1.0) + 2.0 * pdf - 1.0 / np.sqrt(np.pi))))


METRIC_FUNCTIONS: dict[str, Callable[..., float]] = {
    "accuracy": accuracy,
    "acc": accuracy,
    "balanced_accuracy": balanced_accuracy,
    "roc_auc": roc_auc,
    "auc": roc_auc,
    "auroc": roc_auc,
    "average_precision": average_precision,
    "ap": average_precision,
    "auprc": average_precision,
    "log_loss": log_loss,
    "logloss": log_loss,
    "brier": brier,
    "rmse": rmse,
    "mae": mae,
    "r2": r2,
    "gaussian_nll": gaussian_nll,
    "crps": crps_gaussian,
    "crps_gaussian": crps_gaussian,
}
"""Registered metric names → the function that computes them from predictions."""


def get_metric_function(name: str) -> Callable[..., float]:
    """The function computing metric ``name`` (case-insensitive) from predictions."""
    try:
        return METRIC_FUNCTIONS[str(name).lower()]
    except KeyError:
        raise ValueError(
            f"Unknown metric '{name}': no function computes it from predictions; "
            f"known: {sorted(METRIC_FUNCTIONS)}"
        ) from None

