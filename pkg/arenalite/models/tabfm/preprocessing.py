"""Google TabFM's preprocessing of a table, as ``tabfm`` 1.0.1's wrappers do it.

A numpy/pandas/scipy reference (no scikit-learn) of what ``TabFMClassifier`` /
``TabFMRegressor`` do to the features before the ensemble (defined in docs/models.md,
"Google TabFM (tabfm)", "Preprocessing and ensemble"):

1. :func:`numeric_table` — ``TransformToNumerical`` on a DataFrame pair: each column is a
   datetime (a datetime dtype, or text that mostly parses as dates), a number (any numeric
   dtype, bool included) or categorical (everything else). The output is the categorical
   columns as ordinal codes in order of first appearance in the context (a value seen fewer
   than :data:`MIN_CATEGORY_FREQUENCY` times, an unseen value and a missing cell: −1),
   then the number columns mean-imputed (an all-missing column dropped), then per datetime
   column five: its timestamp as an integer, year, month, day and day of week (missing
   cells as the context's mean timestamp). Numpy arrays pass unchanged (the package's
   identity), and a NaN cell in them is refused, as the package refuses it.
2. :func:`unique_filter` — ``UniqueFeatureFilter``: the columns with more than one distinct
   context value (all of them with a single context row).
3. per normalisation method, the pipeline of :mod:`arenalite.models.wrapper_preprocessing`
   (the TabICL wrappers' same rules): z-score, Yeo-Johnson for ``"power"``, soft outlier
   clipping.
4. :func:`scale_targets` — the regressor's ``StandardScaler`` on the float64 targets.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pandas as pd

from ..wrapper_preprocessing import (
    NORM_METHODS,
    PipelineFit,
    fit_pipeline,
    impute,
    impute_means,
    standard_scaler_stats,
    transform,
)

__all__ = ["DATETIME_PARTS", "MIN_CATEGORY_FREQUENCY", "NORM_METHODS", "NumericTable",
           "PipelineFit", "column_kinds", "fit_pipeline", "numeric_table", "scale_targets",
           "transform", "unique_filter"]

MIN_CATEGORY_FREQUENCY = 2
"""``TransformToNumerical``'s ``min_cat_frequency``: rarer context values code as −1."""
DATETIME_PARTS = ("year", "month", "day", "dayofweek")
"""The calendar fields a datetime column adds after its integer timestamp."""
DATETIME_ACCESSORS = {"dayofweek": "day_of_week"}
"""pandas' accessor for a part whose old name it deprecates (``dt.dayofweek``, pandas 3.1;
``dt.day_of_week`` since pandas 1.1): the same numbers, Monday 0."""
DATE_SAMPLE = 500
"""Above this many context cells the date test looks at a seeded sample of 500."""
DATE_NULL_SHARE = 0.8
"""Text whose parsed dates are missing in more than this share is not a date column."""


class NumericTable(NamedTuple):
    """``TransformToNumerical``'s output on the context and query rows (float64) and how
    many leading columns are categorical codes (the model's categorical mask)."""

    train: np.ndarray
    test: np.ndarray
    n_categorical: int


def _looks_like_dates(series: pd.Series) -> bool:
    """The package's date test of a text column: not all numbers, and at most 80 % missing
    after a lenient mixed-format parse (of a 500-cell sample, seed 0, past 500 cells)."""
    if not (pd.api.types.is_object_dtype(series.dtype)
            or isinstance(series.dtype, pd.StringDtype)):
        return False
    if series.isnull().all():
        return False
    try:
        pd.to_numeric(series)
        return False
    except (ValueError, TypeError):
        pass
    if len(series) > DATE_SAMPLE:
        series = series.sample(n=DATE_SAMPLE, random_state=0)
    try:
        parsed = pd.to_datetime(series, errors="coerce", format="mixed")
    except Exception:  # noqa: BLE001  (the package treats any parse failure as "not dates")
        return False
    return not parsed.isnull().mean() > DATE_NULL_SHARE


def column_kinds(frame: pd.DataFrame) -> list[str]:
    """Each column's kind as the package decides it: "datetime", "numeric" or
    "categorical" (in that order of precedence)."""
    kinds = []
    for pos in range(frame.shape[1]):
        series = frame.iloc[:, pos]
        if pd.api.types.is_datetime64_any_dtype(series.dtype) or _looks_like_dates(series):
            kinds.append("datetime")
        elif pd.api.types.is_numeric_dtype(series.dtype):
            kinds.append("numeric")
        else:
            kinds.append("categorical")
    return kinds


def _categories(column: np.ndarray) -> dict:
    """Context value → code: first-appearance order of the values seen at least
    :data:`MIN_CATEGORY_FREQUENCY` times (missing cells and the text "nan" left out)."""
    counts = pd.Series(column).value_counts()
    rare = set(counts[counts < MIN_CATEGORY_FREQUENCY].index)
    kept = [u for u in pd.unique(column) if not pd.isna(u) and str(u) != "nan" and u not in rare]
    return {value: code for code, value in enumerate(kept)}


def _codes(codes: dict, column: np.ndarray) -> np.ndarray:
    mapped = pd.Series(column).map(codes)
    if mapped.dtype.name == "category":
        mapped = mapped.astype(object)
    return mapped.fillna(-1).to_numpy().astype(np.int64).astype(np.float64)


def _datetimes(series: pd.Series) -> pd.Series:
    return pd.to_datetime(series, utc=True, errors="coerce", format="mixed")


def _date_columns(series: pd.Series, fill: object) -> list[np.ndarray]:
    stamps = _datetimes(series.copy())
    missing = stamps.isna()
    if missing.any():
        stamps.loc[missing] = fill
    out = [pd.to_numeric(stamps).to_numpy().astype(np.float64)]
    out += [getattr(stamps.dt, DATETIME_ACCESSORS.get(part, part)).astype(np.int64)
            .to_numpy().astype(np.float64) for part in DATETIME_PARTS]
    return out


def _column_numbers(series: pd.Series, name: str) -> np.ndarray:
    try:
        return series.to_numpy(dtype=np.float64, na_value=np.nan)
    except (TypeError, ValueError):
        raise TypeError(f"{name} column {series.name!r} holds a cell that is no number "
                        f"({series.dtype}) where the context rows hold numbers; give both "
                        "the same kind") from None


def _numbers(frame: pd.DataFrame, name: str) -> np.ndarray:
    values = np.asfortranarray(np.column_stack(  # column-major, as sklearn receives a frame:
        [_column_numbers(frame[c], name) for c in frame.columns]))
    bad = np.isinf(values)
    if bad.any():
        row, col = (int(i) for i in np.argwhere(bad)[0])
        raise ValueError(f"{name} column {frame.columns[col]!r} has an infinite value "
                         f"{values[row, col].item()!r} in row {row}; make it empty (missing) "
                         "or finite")
    return values


def numeric_table(train: pd.DataFrame, test: pd.DataFrame) -> NumericTable:
    """``TransformToNumerical().fit(train)`` applied to both frames (module docstring)."""
    kinds = column_kinds(train)
    by_kind = {k: [train.columns[i] for i, kk in enumerate(kinds) if kk == k]
               for k in ("categorical", "numeric", "datetime")}
    out_train: list[np.ndarray] = []
    out_test: list[np.ndarray] = []
    for col in by_kind["categorical"]:
        a = train[col].to_numpy(dtype=object)
        codes = _categories(a)
        out_train.append(_codes(codes, a))
        out_test.append(_codes(codes, test[col].to_numpy(dtype=object)))
    if by_kind["numeric"]:
        a = _numbers(train[by_kind["numeric"]], "X_train")
        b = _numbers(test[by_kind["numeric"]], "X_test")
        kept = ~np.isnan(a).all(axis=0)  # SimpleImputer drops an all-missing column
        means = impute_means(a)[kept]
        out_train += list(impute(a[:, kept], means).T)
        out_test += list(impute(b[:, kept], means).T)
    for col in by_kind["datetime"]:
        fill = _datetimes(train[col]).mean()
        if pd.isna(fill):
            raise ValueError(f"X_train column {col!r} holds no date the package can read; "
                             "Google TabFM takes it as a datetime column and would have no "
                             "value to fill its missing cells with")
        out_train += _date_columns(train[col], fill)
        out_test += _date_columns(test[col], fill)
    if not out_train:
        raise ValueError("Google TabFM takes no column of X_train: every number column is "
                         "missing in all context rows")
    return NumericTable(np.column_stack(out_train), np.column_stack(out_test),
                        len(by_kind["categorical"]))


def unique_filter(x_train: np.ndarray) -> np.ndarray:
    """``UniqueFeatureFilter``: columns with more than one distinct context value; all of
    them when there is a single context row."""
    n, f = x_train.shape
    if n <= 1:
        return np.ones(f, dtype=bool)
    ordered = np.sort(x_train, axis=0)
    return (ordered[1:] != ordered[:-1]).any(axis=0)


def scale_targets(y: np.ndarray) -> tuple[np.ndarray, float, float]:
    """The regressor's ``StandardScaler`` on the float64 targets: (scaled, mean, scale);
    scale 1 for a (near-)constant target."""
    col = np.asarray(y, dtype=np.float64).reshape(-1, 1)
    mean, scale = standard_scaler_stats(col)
    return ((col - mean) / scale).ravel(), float(mean[0]), float(scale[0])
