"""The cores that metrics and the AUROC/AUPRC audit share: validated input vectors and the
rank-based ROC AUC and average precision on already-checked arrays.

:mod:`arenalite.metrics` (the public metric functions) and :mod:`arenalite.subgroup` (the
audit, per subgroup) both build on these; neither imports the other's internals. Checks
raise ``ValueError``/``TypeError`` naming the argument, the offending value and its position.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

_NUMERIC_INFERRED = ("integer", "floating", "mixed-integer-float", "boolean")


# ----------------------------------------------------------------------------- validation


def as_array(values: Any, name: str) -> np.ndarray:
    """``values`` as an array; a string, bytes, dict or None is a TypeError naming ``name``."""
    if values is None or isinstance(values, (str, bytes, dict)):
        raise TypeError(f"{name} must be array-like, got {type(values).__name__}")
    return np.asarray(values)


def check_1d(arr: np.ndarray, name: str) -> None:
    """ValueError unless ``arr`` is one-dimensional and not empty."""
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name} is empty")


def reject(bad: np.ndarray, message: Callable[[int], str]) -> None:
    """Raise ``ValueError(message(i))`` with ``i`` the first position where ``bad`` holds."""
    if bad.any():
        raise ValueError(message(int(np.argmax(bad))))


def reject_missing(arr: np.ndarray, name: str) -> None:
    """ValueError naming the first missing value (None, NaN, NA) of ``arr`` and its position."""
    reject(np.asarray(pd.isna(arr), dtype=bool),
           lambda i: f"{name} has a missing value ({arr[i]!r}) at position {i}")


def numeric_1d(values: Any, name: str) -> np.ndarray:
    """``values`` as a finite float64 vector; errors name ``name``, the value and position."""
    arr = as_array(values, name)
    check_1d(arr, name)
    if arr.dtype.kind == "O":
        reject_missing(arr, name)
        if pd.api.types.infer_dtype(arr, skipna=False) in _NUMERIC_INFERRED:
            arr = arr.astype(np.float64)
    if arr.dtype.kind not in "biuf":
        for i, v in enumerate(arr.tolist()):  # error path only: locate the offending entry
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise TypeError(f"{name} must be numeric; found {v!r} at position {i}")
        raise TypeError(f"{name} must be numeric, got dtype {arr.dtype}")
    out = arr.astype(np.float64)
    reject(~np.isfinite(out), lambda i: f"{name} must be finite; found {out[i]} at position {i}")
    return out


def binary_labels(values: Any, name: str = "y_true") -> np.ndarray:
    """Labels in {0, 1} (or booleans) as an int8 vector."""
    arr = numeric_1d(values, name)
    reject((arr != 0) & (arr != 1),
           lambda i: f"{name} must contain only 0/1 labels; found {arr[i]:g} at position {i}")
    return arr.astype(np.int8)


def labels_1d(values: Any, name: str) -> np.ndarray:
    """Labels of any kind as a vector without missing values: numeric ones as finite
    float64, others (text, objects) as given."""
    arr = as_array(values, name)
    check_1d(arr, name)
    if arr.dtype.kind in "biuf":
        return numeric_1d(arr, name)
    reject_missing(arr, name)
    return arr


def check_same_length(a: np.ndarray, b: np.ndarray, name_a: str, name_b: str) -> None:
    """ValueError naming both arguments and their lengths when they differ."""
    if len(a) != len(b):
        raise ValueError(
            f"{name_a} and {name_b} must have the same length, got {len(a)} and {len(b)}"
        )


def class_counts(y: np.ndarray, name: str, metric: str) -> tuple[int, int]:
    """(positives, negatives) of 0/1 labels ``y``; ValueError when one class is absent
    (``metric`` is then undefined)."""
    n_pos = int(y.sum())
    n_neg = len(y) - n_pos
    if n_pos == 0 or n_neg == 0:
        only = 1 if n_pos else 0
        raise ValueError(
            f"{metric} is undefined when {name} holds a single class "
            f"(all {len(y)} labels are {only})"
        )
    return n_pos, n_neg


# ----------------------------------------------------------------------------- ranking


def average_ranks(values: np.ndarray) -> np.ndarray:
    """1-based ranks of ``values`` with ties given their average rank (vectorized)."""
    order = np.argsort(values)  # ties are averaged, so the sort need not be stable
    sorted_values = values[order]
    starts = np.flatnonzero(np.r_[True, sorted_values[1:] != sorted_values[:-1]])
    ends = np.r_[starts[1:], len(values)]
    group_rank = (starts + ends + 1) / 2.0
    ranks = np.empty(len(values), dtype=np.float64)
    ranks[order] = np.repeat(group_rank, ends - starts)
    return ranks


def roc_auc_core(y: np.ndarray, score: np.ndarray, n_pos: int, n_neg: int) -> float:
    """ROC AUC (Mann-Whitney, ties ½) of checked 0/1 labels and scores with both classes."""
    rank_sum = average_ranks(score)[y == 1].sum()
    return float((rank_sum - n_pos * (n_pos + 1) / 2.0) / (n_pos * n_neg))


def average_precision_core(y: np.ndarray, score: np.ndarray, n_pos: int) -> float:
    """Step-wise average precision of checked 0/1 labels and scores with ``n_pos`` > 0."""
    order = np.argsort(-score)  # a tied block is one threshold: order within it is irrelevant
    s = score[order]
    tp = np.cumsum(y[order], dtype=np.float64)
    last = np.r_[np.flatnonzero(s[1:] != s[:-1]), len(s) - 1]  # end of each tied block
    tp_at = tp[last]
    precision = tp_at / (last + 1)
    recall_step = np.diff(np.r_[0.0, tp_at]) / n_pos
    return float(np.sum(recall_step * precision))
