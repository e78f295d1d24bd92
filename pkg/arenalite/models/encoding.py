"""Tables with categorical and missing cells as the numbers each model takes.

:func:`arenalite.models.predict` accepts pandas DataFrames for ``X_train`` and ``X_test``
(the raw typed columns a :class:`~arenalite.datasets.table.Table` keeps). The encodings,
both fitted on the context (training) rows only and defined in docs/models.md:

- :func:`tabicl_encoding` is what the ``tabicl`` package's ``TransformToNumerical`` does
  with a DataFrame, so that arenalite's tabicl equals ``TabICLClassifier.fit(df, y)``:
  string, object, ``category`` and nullable-boolean columns become ordinal codes of their
  sorted context values (unknown and missing: −1), number columns are mean-imputed, and
  the columns come categorical first, then numeric, each in frame order. The package
  leaves numpy ``bool`` and datetime columns out; so does this, with a warning naming them.
- :func:`common_encoding` serves knn, attention, icl_transformer and tabular_fm: in frame
  order, a number column mean-imputed; a categorical column (string, object, category,
  bool) one-hot over its sorted context values when it has at most
  :data:`MAX_ONE_HOT_LEVELS` of them, else one column of ordinal codes; unknown and
  missing cells are all zeros (one-hot) or −1 (codes). Standardization follows as for
  any input.
- :func:`tabpfn_table` (its rows: :func:`tabpfn_encoding`) is what the ``tabpfn``
  package's ``fit`` / ``predict`` make of a DataFrame, in frame order: number, bool and
  nullable columns as float64 with NaN kept; text and ``category`` columns as the indices
  of their sorted context values (unseen −1, missing NaN, or −1 where the context has no
  missing cell), with the columns declared categorical to tabpfn's modality inference
  (every ``category`` column, text columns with two or more values) — also the package's
  oddities (numbers spelled as text coded in string order) and its refusals
  (mixed types, datetimes, more than :data:`TABPFN_MAX_LEVELS` text values).

Which one a model takes is its registry entry's ``encoding`` (``registry.json``, one
declaration that the WebGPU bridge's ``src/encoding.js`` reads too, reproducing both).
"""

from __future__ import annotations

import warnings
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from . import registry

MAX_ONE_HOT_LEVELS = 10
"""A categorical column with more context values than this gets ordinal codes instead of
one-hot columns (keeps the width within the models' feature limits)."""


def is_frame(x: Any) -> bool:
    """Whether ``x`` is a pandas DataFrame (the models' table input)."""
    return isinstance(x, pd.DataFrame)


def check_frames(train: Any, test: Any) -> None:
    """Both DataFrames, the same column names in the same order, rows in both."""
    if not (is_frame(train) and is_frame(test)):
        raise TypeError("X_train and X_test must both be pandas DataFrames or both arrays; "
                        f"got {type(train).__name__} and {type(test).__name__}")
    if list(train.columns) != list(test.columns):
        extra = [c for c in test.columns if c not in train.columns]
        lacking = [c for c in train.columns if c not in test.columns]
        raise ValueError("X_test's columns must be X_train's, in the same order; "
                         f"X_test lacks {lacking} and has extra {extra}" if extra or lacking
                         else "X_test's columns must be in X_train's order "
                         f"{list(train.columns)}, got {list(test.columns)}")
    if train.columns.duplicated().any():
        raise ValueError(f"column name {train.columns[train.columns.duplicated()][0]!r} "
                         "appears twice in X_train")
    for name, frame in (("X_train", train), ("X_test", test)):
        if len(frame) == 0:
            raise ValueError(f"{name} has no rows")
        if len(frame.columns) == 0:
            raise ValueError(f"{name} has no feature columns")


def _is_numeric(dtype: Any) -> bool:
    return pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype)


def _is_categorical(dtype: Any) -> bool:
    return (isinstance(dtype, (pd.CategoricalDtype, pd.StringDtype, pd.BooleanDtype))
            or pd.api.types.is_object_dtype(dtype) or pd.api.types.is_string_dtype(dtype))


def column_role(dtype: Any) -> str | None:
    """``"numeric"`` (a number dtype but bool), ``"categorical"`` (text, object,
    ``category``, nullable boolean) or None (numpy bool, datetime, …): a column's role in
    both encodings; tabicl leaves the None ones out, the common encoding one-hots a numpy
    bool column and refuses the rest."""
    return "numeric" if _is_numeric(dtype) else "categorical" if _is_categorical(dtype) else None


def _check_kinds(train: pd.DataFrame, test: pd.DataFrame) -> None:
    for col in train.columns:
        a, b = train[col].dtype, test[col].dtype
        if _is_numeric(a) != _is_numeric(b):
            raise TypeError(f"column {col!r} is {a} in X_train but {b} in X_test; give both "
                            "the same kind (numbers, or text/category)")


def _numbers(series: pd.Series, name: str) -> np.ndarray:
    values = series.to_numpy(dtype=np.float64, na_value=np.nan)
    bad = np.isinf(values)
    if bad.any():
        row = int(np.argmax(bad))
        raise ValueError(f"{name} column {series.name!r} has an infinite value "
                         f"{values[row].item()!r} in row {row}; make it empty (missing) or "
                         "finite")
    return values


def _imputed(train: pd.Series, test: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Missing cells as the context mean (a column missing in every context row: 0)."""
    a, b = _numbers(train, "X_train"), _numbers(test, "X_test")
    present = ~np.isnan(a)
    mean = a[present].mean() if present.any() else 0.0
    return np.where(present, a, mean), np.where(np.isnan(b), mean, b)


def _levels(train: pd.Series) -> pd.Index:
    """The sorted distinct context values of a categorical column (missing left out)."""
    values = pd.unique(train.dropna().to_numpy(dtype=object))
    try:
        return pd.Index(sorted(values), dtype=object)
    except TypeError:
        kinds = sorted({type(v).__name__ for v in values})
        raise TypeError(f"column {train.name!r} mixes value types {kinds}; a categorical "
                        "column holds strings only or numbers only") from None


def _codes(levels: pd.Index, series: pd.Series) -> np.ndarray:
    """Each cell's position in ``levels``; unknown and missing: −1."""
    values = series.to_numpy(dtype=object, na_value=None)
    return levels.get_indexer(values).astype(np.float64)


def _tabicl_roles(frame: pd.DataFrame) -> tuple[list, list, list]:
    """The package's column roles: categorical, numeric, and left out (bool, datetime…)."""
    categorical = [c for c in frame.columns if _is_categorical(frame[c].dtype)]
    numeric = [c for c in frame.columns if _is_numeric(frame[c].dtype)]
    left = [c for c in frame.columns if c not in categorical and c not in numeric]
    return categorical, numeric, left


def tabicl_encoding(train: pd.DataFrame, test: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """The tabicl package's ``TransformToNumerical`` on a DataFrame (module docstring)."""
    check_frames(train, test)
    _check_kinds(train, test)
    categorical, numeric, left = _tabicl_roles(train)
    if left:
        warnings.warn(f"tabicl leaves out column(s) {left} ({[str(train[c].dtype) for c in left]}"
                      "), as the tabicl package does with bool and datetime columns; make them "
                      "'category' columns to keep them", stacklevel=3)
    if not categorical and not numeric:
        raise ValueError(f"tabicl takes no column of X_train: {left} are all bool or datetime")
    out_train, out_test = [], []
    for col in categorical:
        levels = _levels(train[col])
        out_train.append(_codes(levels, train[col]))
        out_test.append(_codes(levels, test[col]))
    for col in numeric:
        a, b = _imputed(train[col], test[col])
        out_train.append(a)
        out_test.append(b)
    return np.column_stack(out_train), np.column_stack(out_test)


def _common_columns(train: pd.Series, test: pd.Series) -> tuple[list, list]:
    if _is_numeric(train.dtype):
        a, b = _imputed(train, test)
        return [a], [b]
    if pd.api.types.is_datetime64_any_dtype(train.dtype) or not (
            _is_categorical(train.dtype) or pd.api.types.is_bool_dtype(train.dtype)):
        raise TypeError(f"column {train.name!r} has dtype {train.dtype}, which the models do "
                        "not encode; give numbers, text, bool or category")
    levels = _levels(train)
    codes_train, codes_test = _codes(levels, train), _codes(levels, test)
    if len(levels) > MAX_ONE_HOT_LEVELS:
        return [codes_train], [codes_test]
    hot = np.arange(len(levels), dtype=np.float64)
    return (list((codes_train[:, None] == hot).astype(np.float64).T),
            list((codes_test[:, None] == hot).astype(np.float64).T))


def common_encoding(train: pd.DataFrame, test: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """knn, attention, icl_transformer and tabular_fm's encoding (module docstring)."""
    check_frames(train, test)
    _check_kinds(train, test)
    out_train, out_test = [], []
    for col in train.columns:
        a, b = _common_columns(train[col], test[col])
        out_train.extend(a)
        out_test.extend(b)
    return np.column_stack(out_train), np.column_stack(out_test)


TABPFN_MAX_LEVELS = 30
"""The most distinct values (a missing cell counted as one) a tabpfn text or string
``category`` column may hold: the package's ``MIN_CARDINALITY_FOR_TEXT`` and
``MAX_UNIQUE_FOR_CATEGORICAL_FEATURES`` (both 30 in its v3 checkpoints). Past it the
package reads an undeclared text column as free text and keeps a string ``category``
column categorical at any count; neither is ported, so such columns are refused."""

TABPFN_MISSING = "__MISSING__"
"""The package's stand-in for a missing cell of a text column it does not make
categorical (its ``NA_PLACEHOLDER``): sorted among the values, then read as missing."""


class TabPFNTable(NamedTuple):
    """tabpfn's table input: the float64 rows the package's cleaning hands its model
    pipeline, and the columns declared categorical to its modality inference."""

    train: np.ndarray
    test: np.ndarray
    categorical_indices: list[int]


def _object_numbers(series: pd.Series, name: str) -> np.ndarray:
    """An object or number-valued ``category`` column's numbers as float64 (missing: NaN);
    a cell that is no number refused by name."""
    values = series.to_numpy(dtype=object, na_value=np.nan)
    out = pd.to_numeric(pd.Series(values), errors="coerce").to_numpy(dtype=np.float64)
    bad = np.isnan(out) & ~pd.isna(values)
    if bad.any():
        row = int(np.argmax(bad))
        raise TypeError(f"{name} column {series.name!r} holds {values[row]!r} in row {row} "
                        "where the context rows hold numbers; give numbers only")
    return _numbers(pd.Series(out, name=series.name), name)


def _value_kind(train: pd.Series) -> tuple[str, list]:
    """How the package's modality detection reads a text or category column's present
    context values: ``"numbers"``, ``"spelled"`` (strings that ``pd.to_numeric`` reads as
    numbers) or ``"text"``; and the values. Mixed strings and numbers, and True/False in
    an object column (both refused by the package) raise ``TypeError`` by name."""
    values = train.dropna().to_numpy(dtype=object).tolist()
    if any(isinstance(v, (bool, np.bool_)) for v in values):
        raise TypeError(f"column {train.name!r} holds True/False in a {train.dtype} column, "
                        "which the tabpfn package refuses; give it dtype bool or 'boolean'")
    if all(isinstance(v, str) for v in values):
        spelled = bool(values) and bool(
            pd.to_numeric(pd.Series(values), errors="coerce").notna().all())
        return ("spelled" if spelled else "text"), values
    if all(isinstance(v, (int, float, np.integer, np.floating)) for v in values):
        return "numbers", [float(v) for v in values]
    kinds = sorted({type(v).__name__ for v in values})
    raise TypeError(f"column {train.name!r} mixes value types {kinds}; the tabpfn package's "
                    "encoder takes a column of strings only or of numbers only")


def _tabpfn_codes(levels: pd.Index, series: pd.Series, missing_seen: bool) -> np.ndarray:
    """sklearn's ``OrdinalEncoder`` as the package sets it: positions in ``levels``,
    unknown values −1, missing cells NaN where the context rows hold a missing cell
    (``missing_seen``) and else −1 (an unseen value, as a missing one is then)."""
    values = series.to_numpy(dtype=object, na_value=None)
    codes = levels.get_indexer(values).astype(np.float64)
    return np.where(series.isna().to_numpy() & missing_seen, np.nan, codes)


def _placeholder_codes(levels: pd.Index, series: pd.Series) -> np.ndarray:
    """Positions in ``levels`` (which holds :data:`TABPFN_MISSING` where the context rows
    have a missing cell), unknown values −1; missing cells and cells holding that text
    NaN, as the package's stand-in makes them."""
    values = series.to_numpy(dtype=object, na_value=TABPFN_MISSING)
    codes = levels.get_indexer(values).astype(np.float64)
    return np.where(values == TABPFN_MISSING, np.nan, codes)


def _tabpfn_column(train: pd.Series, test: pd.Series) -> tuple[np.ndarray, np.ndarray, bool]:
    """One column as the package's cleaning hands it on, and whether it is declared
    categorical to the modality inference (docs/models.md, "TabPFN's table input")."""
    dtype = train.dtype
    if _is_numeric(dtype) or pd.api.types.is_bool_dtype(dtype):
        return _numbers(train, "X_train"), _numbers(test, "X_test"), False
    if not _is_categorical(dtype):
        raise TypeError(f"column {train.name!r} has dtype {dtype}, which tabpfn does not take "
                        "(the package refuses datetimes): give numbers, text, bool or category")
    kind, values = _value_kind(train)
    is_category = isinstance(dtype, pd.CategoricalDtype)
    n = int(train.astype(object).nunique(dropna=False))
    levels = pd.Index(sorted(set(values)), dtype=object)
    if kind == "numbers" and (not is_category or n > TABPFN_MAX_LEVELS):
        return (_object_numbers(train, "X_train"), _object_numbers(test, "X_test"),
                is_category)
    if kind != "numbers" and n > TABPFN_MAX_LEVELS:
        raise ValueError(f"column {train.name!r} has {n} distinct values (a missing cell "
                         f"counted); tabpfn takes at most {TABPFN_MAX_LEVELS} in a text or "
                         "category column (the package's handling of free text is not "
                         "ported): group rare values, or give numbers")
    if kind == "spelled" and not is_category:
        if train.isna().any():
            levels = pd.Index(sorted({*values, TABPFN_MISSING}), dtype=object)
        return _placeholder_codes(levels, train), _placeholder_codes(levels, test), False
    seen = bool(train.isna().any())
    return (_tabpfn_codes(levels, train, seen), _tabpfn_codes(levels, test, seen),
            is_category or n > 1)


def _constant_kept(train: np.ndarray, test: np.ndarray, declared: bool) -> np.ndarray:
    """The test column; all the context's value where the context holds one value (missing
    counted as one) and the column is not declared categorical: the package's constant
    column, which its ``clean_data_transform`` restores so new values carry nothing."""
    missing = np.isnan(train)
    constant = missing.all() or (not missing.any() and (train == train[0]).all())
    return np.full_like(test, train[0]) if constant and not declared else test


def tabpfn_table(train: pd.DataFrame, test: pd.DataFrame) -> TabPFNTable:
    """The tabpfn package's cleaning of a DataFrame pair, column by column in frame order
    (module docstring; docs/models.md, "TabPFN's table input")."""
    check_frames(train, test)
    _check_kinds(train, test)
    columns = [_tabpfn_column(train[c], test[c]) for c in train.columns]
    return TabPFNTable(np.column_stack([a for a, _, _ in columns]),
                       np.column_stack([_constant_kept(a, b, declared)
                                        for a, b, declared in columns]),
                       [j for j, (_, _, declared) in enumerate(columns) if declared])


def tabpfn_encoding(train: pd.DataFrame, test: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """tabpfn's rows of a DataFrame pair (:func:`tabpfn_table` without the indices)."""
    table = tabpfn_table(train, test)
    return table.train, table.test


ENCODINGS = {"tabicl": tabicl_encoding, "common": common_encoding, "tabpfn": tabpfn_encoding}
"""The shared encodings by the name a model's registry entry gives as its ``encoding``
(registry.json's ``encodings`` lists these names; a test checks both agree)."""


def model_encoding(model_name: str) -> str:
    """The encoding model ``model_name`` takes: its registry entry's ``encoding``
    (registry.json, which the WebGPU bridge's ``encoding.js`` reads too), a shared
    encoding's name or a model's own function as ``"module:function"``."""
    return registry.entry(model_name)["encoding"]


TABLES = {"tabpfn": tabpfn_table}
"""The shared encodings that also declare categorical columns to the model, by name."""


def _encoder(model_name: str, table: bool) -> Any:
    """The function that encodes a DataFrame pair for ``model_name``: a shared encoding
    (from :data:`TABLES` when ``table``), or the function its entry names. A model's own
    function returns ``(train, test)`` or ``(train, test, categorical indices)``."""
    name = model_encoding(model_name)
    if name in ENCODINGS:
        return TABLES[name] if table and name in TABLES else ENCODINGS[name]
    return registry.function(model_name, "encoding")


def encode(model_name: str, train: Any, test: Any) -> tuple[Any, Any]:
    """The model's encoding of DataFrames; arrays pass through unchanged."""
    if not (is_frame(train) or is_frame(test)):
        return train, test
    return tuple(_encoder(model_name, False)(train, test))[:2]


def encode_table(model_name: str, train: Any, test: Any) -> tuple[Any, Any, list[int] | None]:
    """:func:`encode`, and the categorical column indices the model is given: a list for
    DataFrames under an encoding that declares them (tabpfn's :data:`TABLES`, or a model's
    own function returning three values), else None."""
    if not (is_frame(train) or is_frame(test)):
        return train, test, None
    out = tuple(_encoder(model_name, True)(train, test))
    return (*out, None) if len(out) == 2 else out


__all__ = ["ENCODINGS", "MAX_ONE_HOT_LEVELS", "TABLES", "TABPFN_MAX_LEVELS", "TabPFNTable",
           "check_frames", "column_role", "common_encoding", "encode", "encode_table",
           "is_frame", "model_encoding", "tabicl_encoding", "tabpfn_encoding", "tabpfn_table"]
