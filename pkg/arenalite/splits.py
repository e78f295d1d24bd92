"""Persisted evaluation splits: generated once, saved as JSON, consumed unchanged by both runners.

The JSON schema (version 1) is in ``docs/ARCHITECTURE.md``; indices are positional
(0-based) rows of the dataset as stored, so row identity never changes. The ``kind``
field tells the splits apart. Without ``kind=``, :func:`make_splits` applies SPEC §6
(iid, holdout, grouped or temporal, by the inputs); ``kind="kfold"`` and
``kind="random"`` make the gate protocol's repeated k-fold and repeated random splits.

The algorithms, exactly:

* **Effective training rows** = ``n_rows * (n_folds - 1) // n_folds``, the size of a
  training part of the 3-fold split (``floor(2 n / 3)``). Repeats: 20 below 500
  effective rows, 10 below 2,500, 3 below 250,000, otherwise 1
  (:func:`n_repeats_for`). With 3 folds this means 20 repeats up to 749 rows, 10 up to
  3,749, 3 up to 374,999 and 1 from 375,000 rows.
* **IID** (``kind="iid"``, fewer than 1,000,000 rows): ``rng =
  numpy.random.default_rng(4267)``; for repeat ``r = 0, 1, ...`` in order,
  ``perm = rng.permutation(n_rows)``. Regression: the row at position ``j`` of
  ``perm`` goes to fold ``j % 3``. Classification (stratified): ``perm`` is stably
  sorted by class code (classes sorted as by ``numpy.unique``), and position ``j`` of
  that order goes to fold ``j % 3`` — so every class, and every fold, differs by at
  most one row between folds.
* **Repeated k-fold** (``kind="kfold"``: ``n_folds`` ≥ 2 and ``n_repeats`` chosen, by
  default the gate protocol's 2 repeats × 5 folds): the IID algorithm above with
  ``n_folds`` in place of 3 — ``rng = default_rng(4267)``; per repeat ``perm =
  rng.permutation(n_rows)``, stably sorted by class code for classification; position
  ``j`` goes to fold ``j % n_folds``. Every row is in exactly one test fold per repeat,
  and every class differs by at most one row between folds. A class with fewer rows
  than folds is missing from some test folds (nothing is dropped or duplicated).
* **Repeated random** (``kind="random"``: ``n_repeats`` splits, by default 10, each
  holding out ``test_fraction`` of the rows, by default 0.3 — the anomaly-detection
  protocol's 70 % / 30 %): ``T = floor(test_fraction * n_rows + 1/2)`` test rows
  (float64 arithmetic; ``1 <= T < n_rows``). ``rng = default_rng(4267)``; per repeat
  ``perm = rng.permutation(n_rows)``, stably sorted by class code for classification;
  position ``j`` of that order is a test row when ``floor((j + 1) T / n) > floor(j T /
  n)`` (the holdout rule below), so each class keeps ``test_fraction`` of its rows in
  the test part to within one row. One fold per repeat: ids ``r{r}-f0``, ``n_folds =
  1``; the file records ``test_fraction``.
* **Holdout** (``kind="holdout"``, at or above 1,000,000 rows): the repeated random
  algorithm with one repeat, seed 42 and ``T = 250,000``: ``rng = default_rng(42)``,
  ``perm = rng.permutation(n_rows)`` (stably sorted by class code for
  classification); position ``j`` is a test row when ``floor((j + 1) T / n) > floor(j
  T / n)`` — evenly spaced, so class proportions are kept to within one row. One split,
  ``r0-f0``.
* **Grouped** (``groups`` given), per sample (the default, ``group_labels=None`` or
  ``"per_sample"``): per repeat, ``rng = default_rng(4267)`` permutes the sorted
  distinct group ids (``rng.permutation(n_groups)``, one draw per repeat in order);
  walking the groups in that order, a group whose first row falls at cumulative row
  position ``c`` goes to fold ``floor(3 c / n_rows)``. Entity ids are disjoint between
  train and test.
* **Grouped per group** (``group_labels="per_group"``: one target value per group, checked):
  the IID algorithm on the groups: repeats by effective training *groups*; ``rng =
  default_rng(4267)``; per repeat ``perm = rng.permutation(n_groups)``, stably sorted by
  the group's class code for classification; the group at position ``j`` goes to fold
  ``j % 3`` with all its rows. Group sizes are ignored; classes are balanced over groups.
* **Temporal** (``time`` given): rows stably sorted by time are cut into 4 blocks of
  about equal size, each cut moved back to the start of its run of equal times; fold
  ``k`` tests on block ``k + 1`` and trains on the rows of blocks ``0..k`` whose time is
  before ``t0 - gap`` (``t0``: the fold's earliest test time; ``gap`` default 0 keeps all
  of blocks ``0..k``: an expanding window). The latest training time is strictly before
  ``t0 - gap``. One repeat, no seed.

After building, :func:`make_splits` checks grouped folds for a group in train and test and
temporal folds for a training time at or after ``t0 - gap`` (:func:`validate`'s checks), and
warns (:class:`RowOrderWarning`) when the target of an IID-kind split follows the row order
(:func:`row_order_correlation`). Train and test index lists are sorted ascending. Leakage
columns (group, time and any flagged ones) are listed in ``excluded_columns`` for the
runners to drop. ``docs/splits.md`` compares these rules with DataFoundry's.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import re
import warnings
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from .metrics import numeric_1d

SCHEMA = "arenalite.splits"
VERSION = 1
TASKS = ("binary", "multiclass", "regression")
KINDS = ("iid", "holdout", "grouped", "temporal", "kfold", "random")
CHOSEN_KINDS = ("kfold", "random")
"""Kinds asked for with ``make_splits(kind=...)``; the others follow from the inputs."""
N_FOLDS = 3
IID_SEED = 4267
HOLDOUT_SEED = 42
HOLDOUT_MIN_ROWS = 1_000_000
HOLDOUT_TEST_ROWS = 250_000
REPEAT_RULE = ((500, 20), (2_500, 10), (250_000, 3))
"""(effective training rows below, repeats); at or above the last bound: 1 repeat."""
KFOLD_FOLDS, KFOLD_REPEATS = 5, 2
"""The gate protocol's 2 × 5 cross-validation (defaults of ``kind="kfold"``)."""
RANDOM_REPEATS, RANDOM_TEST_FRACTION = 10, 0.3
"""The anomaly-detection protocol's 10 splits of 70 % / 30 % (defaults of ``kind="random"``)."""
GROUP_LABELS = ("per_sample", "per_group")
"""``make_splits(group_labels=...)``: labels vary within a group (default) or one per group."""
ROW_ORDER_MIN_ROWS, ROW_ORDER_MIN_RHO, ROW_ORDER_Z = 50, 0.15, 3.29
"""Row-order warning: from 50 rows, |rho| above 0.15 (DataFoundry's bound) and above
3.29 / sqrt(n - 1) (p < 0.001 per class for a shuffled table, whose rho has variance 1/(n-1))."""
ROW_ORDER_KINDS = ("iid", "holdout", "kfold", "random")

_KEYS = ("schema", "version", "dataset", "n_rows", "task", "kind", "seed", "n_repeats",
         "n_folds", "excluded_columns", "splits")
_RANDOM_KEYS = (*_KEYS[:9], "test_fraction", *_KEYS[9:])
"""A ``random`` split also records its test fraction (no other kind has the key)."""
OPTIONAL_KEYS = ("fingerprint",)
"""Recorded when the splits were made from a table file: its rows, columns and hashes
(:func:`arenalite.datasets.table.fingerprint`); a runner refuses a table that differs."""
_SPLIT_KEYS = ("id", "repeat", "fold", "train", "test")


# ----------------------------------------------------------------------------- protocol


def effective_training_rows(n_rows: int, n_folds: int = N_FOLDS) -> int:
    """Rows in one training part of a ``n_folds``-fold split: ``n_rows*(n_folds-1)//n_folds``."""
    return int(n_rows) * (n_folds - 1) // n_folds


def _keys(kind: Any) -> tuple[str, ...]:
    """The top-level keys, in file order, of a split of this kind."""
    return _RANDOM_KEYS if kind == "random" else _KEYS


def random_test_rows(n_rows: int, test_fraction: float) -> int:
    """Test rows of a ``random`` split: ``floor(test_fraction * n_rows + 1/2)``."""
    return math.floor(test_fraction * n_rows + 0.5)


def n_repeats_for(n_train: int) -> int:
    """Repeats of the 3-fold split for ``n_train`` effective training rows (SPEC §6)."""
    for bound, repeats in REPEAT_RULE:
        if n_train < bound:
            return repeats
    return 1


# ----------------------------------------------------------------------------- input checks


def _show(value: Any) -> str:
    """repr of a value for messages, numpy scalars shown as plain Python values."""
    return repr(value.item() if isinstance(value, np.generic) else value)


def _int_param(value: Any, name: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an integer, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be at least {minimum}, got {value}")
    return int(value)


def _test_rows(test_fraction: Any, n_rows: int, name: str) -> int:
    """Check ``test_fraction`` (a number in (0, 1) leaving both parts non-empty); its T."""
    if isinstance(test_fraction, (bool, np.bool_)) or not isinstance(
            test_fraction, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a number between 0 and 1, got {test_fraction!r}")
    if not 0 < test_fraction < 1:
        raise ValueError(f"{name} must be strictly between 0 and 1, got {_show(test_fraction)}")
    test_rows = random_test_rows(n_rows, test_fraction)
    if not 1 <= test_rows < n_rows:
        raise ValueError(f"{name}={_show(test_fraction)} puts {test_rows} of {n_rows} rows in "
                         "the test part; both parts need at least one row")
    return test_rows


def _column(values: Any, name: str, n_rows: int) -> np.ndarray:
    if values is None or isinstance(values, (str, bytes, dict)):
        raise TypeError(f"{name} must be array-like, got {type(values).__name__}")
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}")
    if len(arr) != n_rows:
        raise ValueError(f"{name} has {len(arr)} values but n_rows is {n_rows}")
    if arr.dtype.kind == "f":
        missing = ~np.isfinite(arr)
    elif arr.dtype.kind in "mM":
        missing = np.isnat(arr)
    else:
        missing = np.asarray(pd.isna(arr), dtype=bool)
    if missing.any():
        i = int(np.argmax(missing))
        raise ValueError(f"{name} has a missing or non-finite value ({_show(arr[i])}) at row {i}")
    return arr


def _class_codes(y: np.ndarray, task: str) -> np.ndarray:
    classes, codes = np.unique(y, return_inverse=True)
    if len(classes) < 2:
        raise ValueError(
            f"y of a {task} task needs at least two classes, got only {_show(classes[0])}"
        )
    if task == "binary" and len(classes) > 2:
        raise ValueError(
            f"y of a binary task must hold two classes, got {len(classes)}: {classes[:5].tolist()}"
        )
    return codes


def _time_values(time: Any, n_rows: int) -> np.ndarray:
    arr = _column(time, "time", n_rows)
    if arr.dtype.kind not in "biufmM":
        raise TypeError(
            f"time must be numeric or datetime64, got dtype {arr.dtype} "
            "(convert text dates with pandas.to_datetime first)"
        )
    return arr


def _column_name(values: Any, given: str | None) -> str | None:
    if given is not None:
        return given
    name = getattr(values, "name", None)
    return name if isinstance(name, str) else None


# ----------------------------------------------------------------------------- generators


def _fold_lists(fold: np.ndarray, n_folds: int, repeat: int) -> list[dict[str, Any]]:
    out = []
    for f in range(n_folds):
        in_test = fold == f
        if not in_test.any():
            raise ValueError(
                f"fold {f} of repeat {repeat} has no test rows: group sizes are too uneven "
                f"for {n_folds} folds"
            )
        out.append(_split(repeat, f, np.flatnonzero(~in_test), np.flatnonzero(in_test)))
    return out


def _split(repeat: int, fold: int, train: np.ndarray, test: np.ndarray) -> dict[str, Any]:
    """One split entry; ``train`` and ``test`` must already be sorted ascending."""
    return {"id": f"r{repeat}-f{fold}", "repeat": repeat, "fold": fold,
            "train": train.tolist(), "test": test.tolist()}


def _stratified(order: np.ndarray, codes: np.ndarray | None) -> np.ndarray:
    """``order`` stably sorted by class code (unchanged for regression)."""
    return order if codes is None else order[np.argsort(codes[order], kind="stable")]


def _iid_folds(n: int, codes: np.ndarray | None, n_repeats: int, n_folds: int):
    """Per repeat, the fold of each of ``n`` units: position j of the (stratified)
    permutation goes to fold j % n_folds."""
    rng = np.random.default_rng(IID_SEED)
    positions = np.arange(n) % n_folds
    for _ in range(n_repeats):
        order = _stratified(rng.permutation(n), codes)
        fold = np.empty(n, dtype=np.int64)
        fold[order] = positions
        yield fold


def _iid(n_rows: int, codes: np.ndarray | None, n_repeats: int, n_folds: int) -> list[dict]:
    """IID and k-fold: position j of the (stratified) permutation goes to fold j % n_folds."""
    splits: list[dict] = []
    for r, fold in enumerate(_iid_folds(n_rows, codes, n_repeats, n_folds)):
        splits.extend(_fold_lists(fold, n_folds, r))
    return splits


def _random(n_rows: int, codes: np.ndarray | None, n_repeats: int, test_rows: int,
            seed: int) -> list[dict]:
    """Random and holdout: evenly spaced positions of the (stratified) permutation are test."""
    rng = np.random.default_rng(seed)
    j = np.arange(n_rows, dtype=np.int64)
    at_test = (j + 1) * test_rows // n_rows > j * test_rows // n_rows
    splits: list[dict] = []
    for r in range(n_repeats):
        order = _stratified(rng.permutation(n_rows), codes)
        splits.append(_split(r, 0, np.sort(order[~at_test]), np.sort(order[at_test])))
    return splits


def _group_codes(groups: np.ndarray, n_folds: int) -> np.ndarray:
    """Codes 0..G-1 of the sorted distinct group ids; at least ``n_folds`` of them."""
    _, codes = np.unique(groups, return_inverse=True)
    n_groups = int(codes.max()) + 1
    if n_groups < n_folds:
        raise ValueError(f"groups must hold at least {n_folds} distinct ids, got {n_groups}")
    return codes


def _grouped(codes: np.ndarray, n_repeats: int, n_folds: int) -> list[dict]:
    """Per sample: permuted groups in cumulative row order, cut into ``n_folds`` row thirds."""
    sizes = np.bincount(codes)
    n_rows = len(codes)
    rng = np.random.default_rng(IID_SEED)
    splits: list[dict] = []
    for r in range(n_repeats):
        perm = rng.permutation(len(sizes))
        start = np.cumsum(sizes[perm]) - sizes[perm]
        group_fold = np.empty(len(sizes), dtype=np.int64)
        group_fold[perm] = start * n_folds // n_rows
        splits.extend(_fold_lists(group_fold[codes], n_folds, r))
    return splits


def _per_group_codes(groups: np.ndarray, codes: np.ndarray, y: np.ndarray, name: str,
                     target: str) -> np.ndarray:
    """Each group's target code; ``ValueError`` naming the group and rows if one has two."""
    _, y_codes = np.unique(y, return_inverse=True)
    first = np.full(int(codes.max()) + 1, len(codes), dtype=np.int64)
    np.minimum.at(first, codes, np.arange(len(codes)))
    differs = y_codes != y_codes[first[codes]]
    if differs.any():
        row = int(np.argmax(differs))
        other = int(first[codes[row]])
        raise ValueError(
            f"group_labels='per_group' needs one target value per group, but group "
            f"{_show(groups[row])} (column {name!r}) has {target} = {_show(y[other])} at row "
            f"{other} but {_show(y[row])} at row {row}; use group_labels='per_sample'")
    return y_codes[first]


def _grouped_per_group(codes: np.ndarray, classes: np.ndarray | None, n_repeats: int,
                       n_folds: int) -> list[dict]:
    """IID folds over the groups (stratified by each group's class, ``classes``), each
    group's rows together."""
    splits: list[dict] = []
    folds = _iid_folds(int(codes.max()) + 1, classes, n_repeats, n_folds)
    for r, group_fold in enumerate(folds):
        splits.extend(_fold_lists(group_fold[codes], n_folds, r))
    return splits


def _zero_gap(gap: Any) -> bool:
    """Whether ``gap`` is a zero number (no gap, valid for any time column)."""
    return (isinstance(gap, (int, float, np.integer, np.floating))
            and not isinstance(gap, (bool, np.bool_, np.timedelta64)) and gap == 0)


def _gap_value(gap: Any, time: np.ndarray) -> Any:
    """``gap`` checked against the time column's type; None when it is zero."""
    if _zero_gap(gap):
        return None
    if time.dtype.kind in "mM":
        if not isinstance(gap, (_dt.timedelta, np.timedelta64)):
            raise TypeError(f"gap for a {time.dtype} time column must be a timedelta (e.g. "
                            f"numpy.timedelta64(7, 'D')), got {gap!r}")
        value = gap.to_timedelta64() if isinstance(gap, pd.Timedelta) else np.timedelta64(gap)
        if np.isnat(value) or value < np.timedelta64(0):
            raise ValueError(f"gap must be a non-negative timedelta, got {gap!r}")
        return None if value == np.timedelta64(0) else value
    if isinstance(gap, (bool, np.bool_, _dt.timedelta, np.timedelta64)) or not isinstance(
            gap, (int, float, np.integer, np.floating)):
        raise TypeError(f"gap for a numeric time column must be a number in its units, "
                        f"got {gap!r}")
    if not math.isfinite(gap) or gap < 0:
        raise ValueError(f"gap must be a finite number at least 0, got {_show(gap)}")
    return None if gap == 0 else (int(gap) if _is_int(gap) else float(gap))


def _span(later: Any, earlier: Any, kind: str) -> Any:
    """``later - earlier`` without wrap-around: a timedelta, an exact int or a float."""
    if kind in "mM":
        return later - earlier
    if kind in "biu":
        return int(later) - int(earlier)
    return float(later) - float(earlier)


def _minus(start: Any, gap: Any, kind: str) -> Any:
    """``start - gap`` in the time column's terms (only called when it is in range)."""
    if kind in "mM":
        return start - gap
    return (int(start) if kind in "biu" and isinstance(gap, int) else float(start)) - gap


def _temporal(time: np.ndarray, n_folds: int, gap: Any = None,
              name: str = "time") -> list[dict]:
    n_rows = len(time)
    order = np.argsort(time, kind="stable")
    sorted_time = time[order]
    cuts = np.arange(1, n_folds + 1) * n_rows // (n_folds + 1)
    cuts = np.searchsorted(sorted_time, sorted_time[cuts], side="left")
    bounds = np.r_[0, cuts, n_rows]
    if np.any(np.diff(bounds) <= 0):
        raise ValueError(
            f"time has too few distinct values ({len(np.unique(time))}) to cut {n_rows} rows "
            f"into {n_folds + 1} ordered blocks"
        )
    splits = []
    for k in range(n_folds):
        n_train = bounds[k + 1]
        if gap is not None:
            start = sorted_time[n_train]
            if not _span(start, sorted_time[0], time.dtype.kind) > gap:
                raise ValueError(
                    f"gap={_show(gap)} leaves fold {k} no training rows: its test block starts "
                    f"at row {int(order[n_train])} ({name} {_show(start)}) and no row is more "
                    f"than the gap before it")
            limit = _minus(start, gap, time.dtype.kind)
            n_train = int(np.count_nonzero(sorted_time[:n_train] < limit))
        splits.append(_split(0, k, np.sort(order[:n_train]),
                             np.sort(order[bounds[k + 1]:bounds[k + 2]])))
    return splits


def _chosen(kind: str, n_rows: int, codes: np.ndarray | None, n_repeats: int | None,
            n_folds: Any, test_fraction: Any) -> tuple[int, int, list[dict], dict[str, float]]:
    """(n_folds, n_repeats, splits, extra header keys) of a ``kfold`` or ``random`` split."""
    if kind == "kfold":
        folds = _int_param(KFOLD_FOLDS if n_folds is None else n_folds, "n_folds", 2)
        if folds > n_rows:
            raise ValueError(f"n_folds={folds} needs at least {folds} rows, got n_rows={n_rows}")
        repeats = n_repeats or KFOLD_REPEATS
        return folds, repeats, _iid(n_rows, codes, repeats, folds), {}
    fraction = RANDOM_TEST_FRACTION if test_fraction is None else test_fraction
    test_rows = _test_rows(fraction, n_rows, "test_fraction")
    repeats = n_repeats or RANDOM_REPEATS
    return (1, repeats, _random(n_rows, codes, repeats, test_rows, IID_SEED),
            {"test_fraction": float(fraction)})


def _check_kind(kind: Any, groups: Any, time: Any, n_folds: Any, test_fraction: Any) -> None:
    if kind is not None and kind not in CHOSEN_KINDS:
        raise ValueError(f"kind must be None (SPEC §6's rule: iid, holdout, grouped or "
                         f"temporal by the inputs), 'kfold' or 'random', got {kind!r}")
    if kind is not None and (groups is not None or time is not None):
        raise ValueError(f"kind={kind!r} splits rows, not groups or time periods: give "
                         "groups/time without kind, or kind without groups/time")
    if n_folds is not None and kind != "kfold":
        raise ValueError(f"n_folds is chosen only with kind='kfold' (SPEC §6's rule uses "
                         f"{N_FOLDS} folds), got n_folds={n_folds!r} with kind={kind!r}")
    if test_fraction is not None and kind != "random":
        raise ValueError(f"test_fraction is chosen only with kind='random', got "
                         f"test_fraction={test_fraction!r} with kind={kind!r}")


def _check_options(groups: Any, time: Any, y: Any, gap: Any, group_labels: Any,
                   target_column: Any, warn_row_order: Any) -> None:
    if time is None and not _zero_gap(gap):
        raise ValueError(f"gap applies to temporal splits (give time=...), got gap={gap!r} "
                         "without time")
    if group_labels is not None and group_labels not in GROUP_LABELS:
        raise ValueError(f"group_labels must be None, 'per_sample' or 'per_group', "
                         f"got {group_labels!r}")
    if group_labels is not None and groups is None:
        raise ValueError(f"group_labels={group_labels!r} applies to grouped splits (give "
                         "groups=...)")
    if group_labels == "per_group" and y is None:
        raise ValueError("group_labels='per_group' needs y, to check one target value per "
                         "group and to stratify the groups")
    if target_column is not None and not isinstance(target_column, str):
        raise TypeError(f"target_column must be a string or None, got {target_column!r}")
    if not isinstance(warn_row_order, (bool, np.bool_)):
        raise TypeError(f"warn_row_order must be True or False, got {warn_row_order!r}")


def _target_name(y: Any, given: str | None) -> str:
    name = _column_name(y, given)
    return "y" if name is None else f"column {name!r}"


class RowOrderWarning(UserWarning):
    """The target of an IID-kind split follows the row order (the table looks sorted)."""


def row_order_correlation(y: Any, task: str) -> tuple[float, Any]:
    """Spearman rho between row position and the target, and the class it is for.

    Regression: rho of position and ``y`` (average ranks for ties), class ``None``.
    Classification: per class, rho of position and the class indicator (for binary
    targets this is DataFoundry's rho on the codes, up to sign); the class with the
    largest ``|rho|`` and its signed rho. 0.0 when undefined (a constant target).
    """
    if task not in TASKS:
        raise ValueError(f"task must be one of {TASKS}, got {task!r}")
    arr = _column(y, "y", np.shape(y)[0] if np.ndim(y) else 0)
    n = len(arr)
    centred = np.arange(n, dtype=np.float64) - (n - 1) / 2
    values, codes, counts = np.unique(arr, return_inverse=True, return_counts=True)
    if len(values) < 2:
        return 0.0, None
    if task == "regression":
        ranks = (np.cumsum(counts) - (counts + 1) / 2)[codes]
        ranks -= ranks.mean()
        return float(centred @ ranks / math.sqrt((centred @ centred) * (ranks @ ranks))), None
    share = counts / n
    mean_offset = np.bincount(codes, weights=centred) / counts
    rho = share * mean_offset / np.sqrt(share * (1 - share) * (n * n - 1) / 12)
    k = int(np.argmax(np.abs(rho)))
    label = values[k]
    return float(rho[k]), label.item() if isinstance(label, np.generic) else label


def _warn_row_order(y: np.ndarray, task: str, kind: str, name: str) -> None:
    """Warn when ``|rho|`` of :func:`row_order_correlation` passes both bounds."""
    n = len(y)
    if n < ROW_ORDER_MIN_ROWS:
        return
    rho, label = row_order_correlation(y, task)
    bound = max(ROW_ORDER_MIN_RHO, ROW_ORDER_Z / math.sqrt(n - 1))
    if not abs(rho) > bound:
        return
    if label is None:
        where = ""
        if y.dtype.kind in "biuf":
            half = n // 2
            where = (f": mean {y[:half].mean():.4g} in rows 0..{half - 1}, "
                     f"{y[half:].mean():.4g} in rows {half}..{n - 1}")
        what = f"{name} follows the row order (Spearman rho={rho:+.2f}{where})"
    else:
        mean_row = float(np.flatnonzero(y == label).mean())
        what = (f"{name} follows the row order (Spearman rho={rho:+.2f} for class "
                f"{_show(label)}, whose rows average row {mean_row:.1f} of 0..{n - 1})")
    warnings.warn(
        f"row order leaks the target: {what}; |rho| > {bound:.2f} over {n} rows, so the "
        f"table looks sorted, not shuffled. The {kind} split draws rows at random and stays "
        "valid, but sorted rows often mean time or collection order: if so, give the time "
        "column (time=, time_column=, --time-column: temporal folds) or the entity column "
        "(groups=, group_column=, --group-column).",
        RowOrderWarning, stacklevel=3)


def _excluded_columns(groups: Any, group_column: str | None, time: Any,
                      time_column: str | None, leakage_columns: Any) -> list[str]:
    excluded = [_column_name(groups, group_column) if groups is not None else group_column,
                _column_name(time, time_column) if time is not None else time_column,
                *leakage_columns]
    out: list[str] = []
    for col in excluded:
        if col is None:
            continue
        if not isinstance(col, str):
            raise TypeError(f"excluded column names must be strings, got {col!r}")
        if col not in out:
            out.append(col)
    return out


def make_splits(
    n_rows: int,
    task: str,
    y: Any = None,
    groups: Any = None,
    time: Any = None,
    *,
    dataset: str | None = None,
    group_column: str | None = None,
    time_column: str | None = None,
    leakage_columns: tuple[str, ...] | list[str] = (),
    n_repeats: int | None = None,
    kind: str | None = None,
    n_folds: int | None = None,
    test_fraction: float | None = None,
    gap: Any = 0,
    group_labels: str | None = None,
    target_column: str | None = None,
    warn_row_order: bool = False,
) -> dict[str, Any]:
    """The persisted-split dict (schema version 1) for a dataset of ``n_rows`` rows.

    ``kind=None`` (the default) applies SPEC §6: ``groups`` makes grouped folds,
    ``time`` temporal ones (not both); otherwise IID 3-fold (stratified on ``y`` for
    classification) or, from 1,000,000 rows, a 250,000-row holdout; ``n_repeats=None``
    applies the adaptive repeat rule. ``kind="kfold"``: repeated k-fold (stratified for
    classification) with ``n_folds`` (default 5) and ``n_repeats`` (default 2).
    ``kind="random"``: ``n_repeats`` (default 10) splits each holding out
    ``test_fraction`` (default 0.3) of the rows, stratified for classification.
    ``group_column`` / ``time_column`` (default: the Series' name) and
    ``leakage_columns`` go to ``excluded_columns``. See the module docstring for the
    exact, reproducible algorithms.

    ``gap`` (temporal; in the time column's units, a timedelta for datetimes; default 0)
    drops the training rows within ``gap`` before each test block. ``group_labels=
    "per_group"`` (grouped; needs ``y``, one value per group) draws stratified folds over the
    groups; the default ``None``/``"per_sample"`` keeps the row-balanced grouped folds.
    Grouped and temporal folds are checked for leakage after building. For an IID-kind split
    whose target follows the row order a :class:`RowOrderWarning` names ``target_column``
    (default: the Series' name) when ``warn_row_order=True`` (the table loader's
    :func:`~arenalite.datasets.table.make_table_splits` asks for it). The defaults give the
    same files as before these options existed.
    """
    n_rows = _int_param(n_rows, "n_rows", N_FOLDS)
    if task not in TASKS:
        raise ValueError(f"task must be one of {TASKS}, got {task!r}")
    if dataset is not None and not isinstance(dataset, str):
        raise TypeError(f"dataset must be a string or None, got {dataset!r}")
    if groups is not None and time is not None:
        raise ValueError("give either groups (grouped folds) or time (temporal folds), not both")
    _check_kind(kind, groups, time, n_folds, test_fraction)
    _check_options(groups, time, y, gap, group_labels, target_column, warn_row_order)
    if n_repeats is not None:
        n_repeats = _int_param(n_repeats, "n_repeats", 1)
    classification = task != "regression"
    codes = None
    if y is not None:
        y_arr = _column(y, "y", n_rows)
        if classification:
            codes = _class_codes(y_arr, task)
    elif classification and groups is None and time is None:
        raise ValueError(f"y is needed to stratify the folds of a {task} task")

    seed: int | None = IID_SEED
    folds = N_FOLDS
    extra: dict[str, float] = {}
    if kind is not None:
        folds, repeats, splits, extra = _chosen(kind, n_rows, codes, n_repeats, n_folds,
                                                test_fraction)
    elif time is not None:
        kind, seed, repeats = "temporal", None, 1
        if n_repeats not in (None, 1):
            raise ValueError(f"temporal splits have exactly one repeat, got n_repeats={n_repeats}")
        times = _time_values(time, n_rows)
        gap = _gap_value(gap, times)
        splits = _temporal(times, folds, gap, _column_name(time, time_column) or "time")
        for entry in splits:
            _check_time(times, f"make_splits: split {entry['id']!r}",
                        np.asarray(entry["train"]), np.asarray(entry["test"]), gap)
    elif groups is not None:
        kind = "grouped"
        ids = _column(groups, "groups", n_rows)
        group_codes = _group_codes(ids, folds)
        if group_labels == "per_group":
            by_group = _per_group_codes(ids, group_codes, y_arr,
                                        _column_name(groups, group_column) or "groups",
                                        _target_name(y, target_column))
            repeats = n_repeats or n_repeats_for(effective_training_rows(len(by_group), folds))
            splits = _grouped_per_group(group_codes, by_group if classification else None,
                                        repeats, folds)
        else:
            repeats = n_repeats or n_repeats_for(effective_training_rows(n_rows, folds))
            splits = _grouped(group_codes, repeats, folds)
        for entry in splits:
            _check_groups(ids, group_codes, f"make_splits: split {entry['id']!r}",
                          np.asarray(entry["train"]), np.asarray(entry["test"]))
    elif n_rows >= HOLDOUT_MIN_ROWS:
        kind, seed, repeats, folds = "holdout", HOLDOUT_SEED, 1, 1
        if n_repeats not in (None, 1):
            raise ValueError(f"the holdout split has exactly one repeat, got n_repeats={n_repeats}")
        splits = _random(n_rows, codes, 1, HOLDOUT_TEST_ROWS, HOLDOUT_SEED)
    else:
        kind = "iid"
        repeats = n_repeats or n_repeats_for(effective_training_rows(n_rows, folds))
        splits = _iid(n_rows, codes, repeats, folds)

    if warn_row_order and y is not None and kind in ROW_ORDER_KINDS:
        _warn_row_order(y_arr, task, kind, _target_name(y, target_column))
    excluded = _excluded_columns(groups, group_column, time, time_column, leakage_columns)
    return {"schema": SCHEMA, "version": VERSION, "dataset": dataset, "n_rows": n_rows,
            "task": task, "kind": kind, "seed": seed, "n_repeats": repeats, "n_folds": folds,
            **extra, "excluded_columns": excluded, "splits": splits}


# ----------------------------------------------------------------------------- validation


def _is_int(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def _indices(values: Any, where: str, n_rows: int) -> np.ndarray:
    if not isinstance(values, (list, np.ndarray)):
        raise TypeError(f"{where} must be a list of row indices, got {type(values).__name__}")
    if len(values) == 0:
        raise ValueError(f"{where} is empty")
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise ValueError(f"{where} must be a flat list of row indices, got shape {arr.shape}")
    if arr.dtype.kind not in "iu":
        for i, v in enumerate(values):  # error path only: locate the offending entry
            if not _is_int(v):
                raise ValueError(f"{where} holds a non-integer index {v!r} at position {i}")
        raise ValueError(f"{where} must hold integer row indices, got dtype {arr.dtype}")
    bad = (arr < 0) | (arr >= n_rows)
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(
            f"{where} index {arr[i]} at position {i} is out of range for n_rows={n_rows}"
        )
    arr = arr.astype(np.int64)
    counts = np.bincount(arr, minlength=n_rows)
    if (counts > 1).any():
        raise ValueError(f"{where} lists row {int(np.argmax(counts > 1))} more than once")
    return arr


def _check_header(splits: Any, source: str) -> None:
    if not isinstance(splits, dict):
        raise TypeError(f"{source} must be a dict (the persisted-split JSON object), "
                        f"got {type(splits).__name__}")
    if splits.get("schema") != SCHEMA:
        raise ValueError(f"{source}: schema must be {SCHEMA!r}, got {splits.get('schema')!r}")
    version = splits.get("version")
    if not _is_int(version) or version != VERSION:
        raise ValueError(f"{source}: unsupported splits version {version!r} "
                         f"(this arenalite reads version {VERSION})")
    keys = _keys(splits.get("kind"))
    missing = [k for k in keys if k not in splits]
    if missing:
        raise ValueError(f"{source}: missing key(s) {missing}")
    extra = [k for k in splits if k not in keys and k not in OPTIONAL_KEYS]
    if extra:
        raise ValueError(f"{source}: unexpected key(s) {extra} in schema version {VERSION} "
                         f"(kind {splits['kind']!r})")
    if splits["dataset"] is not None and not isinstance(splits["dataset"], str):
        raise TypeError(f"{source}: dataset must be a string or null, got {splits['dataset']!r}")
    for key in ("n_rows", "n_repeats", "n_folds"):
        if not _is_int(splits[key]) or splits[key] < 1:
            raise ValueError(f"{source}: {key} must be a positive integer, got {splits[key]!r}")
    if splits["task"] not in TASKS:
        raise ValueError(f"{source}: task must be one of {TASKS}, got {splits['task']!r}")
    if splits["kind"] not in KINDS:
        raise ValueError(f"{source}: kind must be one of {KINDS}, got {splits['kind']!r}")
    _check_kind_header(splits, source)
    if splits["seed"] is not None and not _is_int(splits["seed"]):
        raise ValueError(f"{source}: seed must be an integer or null, got {splits['seed']!r}")
    cols = splits["excluded_columns"]
    if not isinstance(cols, list) or not all(isinstance(c, str) for c in cols):
        raise ValueError(f"{source}: excluded_columns must be a list of strings, got {cols!r}")
    if "fingerprint" in splits:
        _check_fingerprint(splits["fingerprint"], splits["n_rows"], source)
    entries = splits["splits"]
    expected = splits["n_repeats"] * splits["n_folds"]
    if not isinstance(entries, list) or len(entries) != expected:
        got = len(entries) if isinstance(entries, list) else type(entries).__name__
        raise ValueError(f"{source}: splits must be a list of n_repeats × n_folds = {expected} "
                         f"entries, got {got}")


def _check_fingerprint(fingerprint: Any, n_rows: int, source: str) -> None:
    if not isinstance(fingerprint, dict):
        raise ValueError(f"{source}: fingerprint must be an object, got {fingerprint!r}")
    for key in ("n_rows", "columns", "target", "target_sha256"):
        if key not in fingerprint:
            raise ValueError(f"{source}: fingerprint lacks {key!r}")
    if fingerprint["n_rows"] != n_rows:
        raise ValueError(f"{source}: fingerprint n_rows {fingerprint['n_rows']!r} is not the "
                         f"file's n_rows {n_rows}")


def _check_kind_header(splits: dict[str, Any], source: str) -> None:
    """What a kind fixes in the header: k-fold has ≥ 2 folds; random 1 fold and its fraction."""
    kind, n_folds = splits["kind"], splits["n_folds"]
    if kind == "kfold" and n_folds < 2:
        raise ValueError(f"{source}: n_folds of a kfold split must be at least 2, got {n_folds}")
    if kind == "random":
        if n_folds != 1:
            raise ValueError(f"{source}: n_folds of a random split must be 1, got {n_folds}")
        _test_rows(splits["test_fraction"], splits["n_rows"], f"{source}: test_fraction")


def _check_entry(entry: Any, k: int, splits: dict[str, Any], source: str,
                 seen: set[str]) -> tuple[np.ndarray, np.ndarray]:
    if not isinstance(entry, dict):
        raise TypeError(f"{source}: splits[{k}] must be an object, got {type(entry).__name__}")
    keys = sorted(set(_SPLIT_KEYS) ^ set(entry))
    if keys:
        raise ValueError(f"{source}: splits[{k}] must have exactly the keys {list(_SPLIT_KEYS)}; "
                         f"missing or unexpected: {keys}")
    repeat, fold = entry["repeat"], entry["fold"]
    if not _is_int(repeat) or not 0 <= repeat < splits["n_repeats"]:
        raise ValueError(f"{source}: splits[{k}] repeat must be an integer in "
                         f"[0, {splits['n_repeats']}), got {repeat!r}")
    if not _is_int(fold) or not 0 <= fold < splits["n_folds"]:
        raise ValueError(f"{source}: splits[{k}] fold must be an integer in "
                         f"[0, {splits['n_folds']}), got {fold!r}")
    if entry["id"] != f"r{repeat}-f{fold}":
        raise ValueError(f"{source}: splits[{k}] id must be 'r{repeat}-f{fold}', "
                         f"got {entry['id']!r}")
    if entry["id"] in seen:
        raise ValueError(f"{source}: split id {entry['id']!r} appears more than once")
    seen.add(entry["id"])
    n_rows = splits["n_rows"]
    where = f"{source}: split {entry['id']!r}"
    train = _indices(entry["train"], f"{where} train", n_rows)
    test = _indices(entry["test"], f"{where} test", n_rows)
    in_train = np.zeros(n_rows, dtype=bool)
    in_train[train] = True
    overlap = in_train[test]
    if overlap.any():
        raise ValueError(f"{where}: row {int(test[np.argmax(overlap)])} is in both train and test")
    if splits["kind"] != "temporal" and len(train) + len(test) != n_rows:
        raise ValueError(f"{where}: train and test together hold {len(train) + len(test)} rows, "
                         f"expected all {n_rows} for a {splits['kind']} split")
    if splits["kind"] == "random":
        expected = random_test_rows(n_rows, splits["test_fraction"])
        if len(test) != expected:
            raise ValueError(f"{where}: test holds {len(test)} rows, but test_fraction="
                             f"{splits['test_fraction']!r} of n_rows={n_rows} gives {expected}")
    return train, test


def _check_partitions(splits: dict[str, Any], tests: list[np.ndarray], source: str) -> None:
    """Each repeat's test folds of an iid/grouped/kfold split cover every row exactly once."""
    n_rows = splits["n_rows"]
    for r in range(splits["n_repeats"]):
        counts = np.zeros(n_rows, dtype=np.int64)
        for entry, test in zip(splits["splits"], tests, strict=True):
            if entry["repeat"] == r:
                counts[test] += 1
        bad = counts != 1
        if bad.any():
            row = int(np.argmax(bad))
            raise ValueError(f"{source}: repeat {r} puts row {row} in {counts[row]} test folds "
                             "(each row must be tested exactly once per repeat)")


def _check_groups(ids: np.ndarray, codes: np.ndarray, where: str, train: np.ndarray,
                  test: np.ndarray) -> None:
    """No group (``codes``: one per row, 0..G-1) in both train and test."""
    in_train = np.zeros(int(codes.max()) + 1, dtype=bool)
    in_train[codes[train]] = True
    shared = in_train[codes[test]]
    if shared.any():
        row = int(test[np.argmax(shared)])
        raise ValueError(f"{where}: group {_show(ids[row])} (row {row}) is in both train and test")


def _check_time(time: np.ndarray, where: str, train: np.ndarray, test: np.ndarray,
                gap: Any = None) -> None:
    """The latest training time is before the earliest test time, by more than ``gap``."""
    latest_train = time[train].max()
    earliest_test = time[test].min()
    if gap is None and not latest_train < earliest_test:
        row = int(train[np.argmax(time[train])])
        raise ValueError(f"{where}: training row {row} at time {latest_train} is not before "
                         f"the earliest test time {earliest_test}")
    if gap is not None and not _span(earliest_test, latest_train, time.dtype.kind) > gap:
        row = int(train[np.argmax(time[train])])
        raise ValueError(f"{where}: training row {row} at time {latest_train} is not more than "
                         f"gap={_show(gap)} before the earliest test time {earliest_test}")


def validate(splits: Any, *, groups: Any = None, time: Any = None, gap: Any = 0,
             source: str = "splits") -> None:
    """Raise ``ValueError``/``TypeError`` unless ``splits`` is a valid version-1 split dict.

    Checks the schema and version, keys (``test_fraction`` exactly for ``random``) and
    types, ids, that indices are integers in ``[0, n_rows)`` without repeats, that train
    and test are disjoint, that every kind but temporal uses every row, that iid /
    grouped / kfold test folds partition the rows in each repeat, that kfold has at
    least 2 folds, and that random has one fold per repeat whose test part holds
    :func:`random_test_rows` rows. With ``groups`` (one id per row) no id may be in both train
    and test; with ``time`` (one value per row) every training row must precede every
    test row, by more than ``gap`` (as in :func:`make_splits`).
    """
    _check_header(splits, source)
    n_rows = splits["n_rows"]
    if time is None and not _zero_gap(gap):
        raise ValueError(f"gap is checked against time; give time=... with gap={gap!r}")
    ids = None if groups is None else _column(groups, "groups", n_rows)
    codes = None if ids is None else np.unique(ids, return_inverse=True)[1]
    times = None if time is None else _time_values(time, n_rows)
    gap = None if times is None else _gap_value(gap, times)
    seen: set[str] = set()
    tests = []
    for k, entry in enumerate(splits["splits"]):
        train, test = _check_entry(entry, k, splits, source, seen)
        tests.append(test)
        where = f"{source}: split {entry['id']!r}"
        if ids is not None:
            _check_groups(ids, codes, where, train, test)
        if times is not None:
            _check_time(times, where, train, test, gap)
    if splits["kind"] in ("iid", "grouped", "kfold"):
        _check_partitions(splits, tests, source)


# ----------------------------------------------------------------------------- persistence


_BOOL_IN_LIST = re.compile(r"[\[,]\s*(true|false|null)\s*(?=[,\]])")


def to_json(splits: dict[str, Any]) -> str:
    """The canonical JSON text of a (validated) split dict: fixed key order, compact."""
    validate(splits)
    header = {k: splits[k] for k in _keys(splits["kind"]) if k != "splits"}
    header["excluded_columns"] = list(splits["excluded_columns"])
    header["splits"] = [
        {"id": e["id"], "repeat": int(e["repeat"]), "fold": int(e["fold"]),
         "train": np.asarray(e["train"], dtype=np.int64).tolist(),
         "test": np.asarray(e["test"], dtype=np.int64).tolist()}
        for e in splits["splits"]
    ]
    for key in ("n_rows", "n_repeats", "n_folds", "version"):
        header[key] = int(header[key])
    if header["seed"] is not None:
        header["seed"] = int(header["seed"])
    if "test_fraction" in header:
        header["test_fraction"] = float(header["test_fraction"])
    if "fingerprint" in splits:
        at = list(header).index("excluded_columns")
        items = list(header.items())
        items.insert(at + 1, ("fingerprint", dict(splits["fingerprint"])))
        header = dict(items)
    return json.dumps(header, separators=(",", ":"), ensure_ascii=False) + "\n"


def save(splits: dict[str, Any], path: str | Path) -> Path:
    """Validate ``splits`` and write it as canonical JSON to ``path`` (UTF-8); returns the path."""
    path = Path(path)
    path.write_text(to_json(splits), encoding="utf-8")
    return path


def load(path: str | Path, *, groups: Any = None, time: Any = None,
         gap: Any = 0) -> dict[str, Any]:
    """Read and validate a persisted-split JSON file (see :func:`validate`).

    Pass the dataset's ``groups`` / ``time`` columns to also check that entity ids are
    disjoint and that training never follows the test period (by more than ``gap``).
    """
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    bad = _BOOL_IN_LIST.search(text)
    if bad:
        raise ValueError(f"{path}: {bad.group(1)!r} at character {bad.start(1)} is not a "
                         "row index (indices must be integers)")
    try:
        splits = json.loads(text)
    except json.JSONDecodeError as err:
        raise ValueError(f"{path} is not valid JSON: {err}") from None
    validate(splits, groups=groups, time=time, gap=gap, source=str(path))
    return splits


# ----------------------------------------------------------------------------- fold scores


class FoldSummary(NamedTuple):
    """Mean of K fold scores and its standard error sqrt(var_(K−1) / K)."""

    mean: float
    se: float
    n_folds: int


def fold_summary(scores: Any) -> FoldSummary:
    """Mean and standard error over the K = R × n_folds fold scores of one dataset (SPEC §6).

    Needs K ≥ 2 (a single holdout score has no standard error).
    """
    s = numeric_1d(scores, "scores")
    if len(s) < 2:
        raise ValueError(f"scores needs at least 2 fold scores for a standard error, got {len(s)}")
    return FoldSummary(float(s.mean()), float(math.sqrt(s.var(ddof=1) / len(s))), len(s))


def fold_summary_table(results: pd.DataFrame, *, score: str = "score",
                       by: tuple[str, ...] = ("model", "dataset")) -> pd.DataFrame:
    """Per ``by`` group of a results table: mean, se and n_folds of the ``score`` column."""
    if not isinstance(results, pd.DataFrame):
        raise TypeError(f"results must be a DataFrame, got {type(results).__name__}")
    missing = [c for c in (*by, score) if c not in results.columns]
    if missing:
        raise ValueError(f"results is missing column(s) {missing}")
    numeric_1d(results[score].to_numpy(), f"column {score!r}")
    grouped = results.groupby(list(by), sort=True)[score]
    out = grouped.agg(mean="mean", var="var", n_folds="count").reset_index()
    small = out["n_folds"] < 2
    if small.any():
        first = out.loc[small, list(by)].iloc[0].to_dict()
        raise ValueError(f"group {first} has a single fold score: no standard error "
                         "(holdout splits have K = 1)")
    out["se"] = np.sqrt(out["var"].to_numpy(dtype=float) / out["n_folds"].to_numpy())
    return out[[*by, "mean", "se", "n_folds"]]
