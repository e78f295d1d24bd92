"""Input validation and the common preprocessing of every in-context model.

All three models see the same thing: features standardized with the context
(training) column means and population standard deviations, labels checked to be
integers 0 … C−1 (classification) or finite floats (regression). See docs/models.md.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

TASKS = ("binary", "multiclass", "regression")
STD_FLOOR = 1e-12


@dataclass(frozen=True)
class Prepared:
    """Validated, standardized inputs of one prediction call."""

    x_train: np.ndarray  # n × F, float64, standardized
    x_test: np.ndarray  # m × F, float64, standardized
    y_train: np.ndarray  # n, int64 labels or float64 targets
    task: str
    n_classes: int | None  # C for classification, None for regression
    raw_train: np.ndarray | None = None  # n × F, float64, validated but not standardized
    raw_test: np.ndarray | None = None  # m × F, float64 (models with their own preprocessing)
    categorical_indices: list[int] | None = None  # a DataFrame's declared categoricals (tabpfn)


def standardize(x_train: np.ndarray, x_test: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Standardize both sets with the context column means and population stds (ddof=0).

    A column whose std is below 1e-12 is divided by 1 instead (it carries no signal).
    NaN cells (models that take them) stay NaN and are left out of the statistics.
    """
    if np.isnan(x_train).any():
        with warnings.catch_warnings():  # an all-NaN column: its mean and std stay NaN
            warnings.simplefilter("ignore", RuntimeWarning)
            mean, std = np.nanmean(x_train, axis=0), np.nanstd(x_train, axis=0)
    else:
        mean, std = x_train.mean(axis=0), x_train.std(axis=0)
    std = np.where(std < STD_FLOOR, 1.0, std)
    return (x_train - mean) / std, (x_test - mean) / std


def target_stats(y: np.ndarray) -> tuple[float, float]:
    """Context mean and population std of a regression target (std < 1e-12 → 1)."""
    mean = float(np.mean(y))
    std = float(np.std(y))
    return mean, (1.0 if std < STD_FLOOR else std)


def feature_matrix(x: object, name: str, allow_nan: bool = False) -> np.ndarray:
    """``x`` as a float64 C-ordered rows × features matrix, or a TypeError/ValueError
    naming ``name`` and the first bad cell. ``allow_nan``: NaN passes (a model that
    imputes, ``tabicl``), ±inf never does."""
    arr = np.asarray(x)
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number)
                                   or arr.dtype == np.bool_):
        raise TypeError(f"{name} must be a numeric array, got dtype {arr.dtype}")
    if arr.dtype == np.bool_ or np.issubdtype(arr.dtype, np.complexfloating):
        raise TypeError(f"{name} must be a real numeric array, got dtype {arr.dtype}")
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 2-dimensional (rows × features), got shape {arr.shape}")
    if arr.shape[0] == 0:
        raise ValueError(f"{name} has no rows (shape {arr.shape})")
    if arr.shape[1] == 0:
        raise ValueError(f"{name} has no feature columns (shape {arr.shape})")
    arr = np.array(arr, dtype=np.float64, order="C")
    bad = np.isinf(arr) if allow_nan else ~np.isfinite(arr)
    if bad.any():
        row, col = np.argwhere(bad)[0]
        what = "an infinite" if allow_nan else "a non-finite"
        raise ValueError(f"{name} has {what} value {arr[row, col].item()!r} in row {row}, "
                         f"column {col}" + (" (NaN is allowed: it is mean-imputed)"
                                            if allow_nan else ""))
    return arr


def _labels(y: np.ndarray, n_classes: int | None, task: str) -> tuple[np.ndarray, int]:
    if np.issubdtype(y.dtype, np.floating):
        frac = y != np.round(y)
        if frac.any():
            row = int(np.argmax(frac))
            raise ValueError(f"y_train must hold integer class labels for task {task!r}; "
                             f"row {row} has {y[row].item()!r}")
    labels = y.astype(np.int64)
    low = int(labels.min())
    if low < 0:
        row = int(np.argmin(labels))
        raise ValueError(f"y_train labels must be 0 … C−1; row {row} has {y[row].item()!r}")
    if n_classes is None:
        n_classes = 2 if task == "binary" else int(labels.max()) + 1
    elif isinstance(n_classes, bool) or not isinstance(n_classes, int | np.integer):
        raise TypeError(f"n_classes must be an integer or None, got {n_classes!r}")
    n_classes = int(n_classes)
    if task == "binary" and n_classes != 2:
        raise ValueError(f"n_classes must be 2 for task 'binary', got {n_classes}")
    if n_classes < 2:
        raise ValueError(f"n_classes must be at least 2 for task {task!r}, got {n_classes}")
    high = labels >= n_classes
    if high.any():
        row = int(np.argmax(high))
        raise ValueError(f"y_train labels must be 0 … C−1 = {n_classes - 1}; "
                         f"row {row} has {y[row].item()!r}")
    return labels, n_classes


def prepare(x_train: object, y_train: object, x_test: object, task: str,
            n_classes: int | None = None, allow_nan: bool = False) -> Prepared:
    """Validate the inputs of :func:`arenalite.models.predict` and standardize them
    (``allow_nan``: NaN cells pass, for a model with its own preprocessing; the
    standardized copies then ignore them)."""
    if task not in TASKS:
        raise ValueError(f"task must be one of {TASKS}, got {task!r}")
    xtr = feature_matrix(x_train, "X_train", allow_nan)
    xte = feature_matrix(x_test, "X_test", allow_nan)
    if xte.shape[1] != xtr.shape[1]:
        raise ValueError(f"X_test has {xte.shape[1]} feature columns but X_train has "
                         f"{xtr.shape[1]}")
    y = np.asarray(y_train)
    if y.dtype == object or y.dtype == np.bool_ or not np.issubdtype(y.dtype, np.number) \
            or np.issubdtype(y.dtype, np.complexfloating):
        raise TypeError(f"y_train must be a real numeric array, got dtype {y.dtype}")
    if y.ndim != 1:
        raise ValueError(f"y_train must be 1-dimensional, got shape {y.shape}")
    if len(y) != len(xtr):
        raise ValueError(f"y_train has {len(y)} values but X_train has {len(xtr)} rows")
    bad = ~np.isfinite(y)
    if bad.any():
        row = int(np.argmax(bad))
        raise ValueError(f"y_train has a non-finite value {y[row].item()!r} in row {row}")
    if task == "regression":
        if n_classes is not None:
            raise ValueError(f"n_classes must be None for task 'regression', got {n_classes!r}")
        labels, classes = y.astype(np.float64), None
    else:
        labels, classes = _labels(y, n_classes, task)
    s_train, s_test = standardize(xtr, xte)
    return Prepared(s_train, s_test, labels, task, classes, xtr, xte)
