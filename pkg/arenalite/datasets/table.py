"""A user's own table in: a file or a DataFrame read, typed and checked, ready for SPEC §6.

:func:`read_table` takes a bundled name, a path (``.csv``, ``.csv.gz``, ``.tsv``,
``.tsv.gz``, ``.parquet``) or a pandas DataFrame and returns a :class:`Table`: the raw
typed feature columns (each model encodes them its own way), the target mapped to codes,
the task, the group/time columns and the excluded columns. The rules, exactly:

* **Missing cells**: empty cells, NaN and pandas' default NA strings (``"NA"``, ``"NaN"``,
  ``"null"``, ``"n/a"``, …) are missing.
* **Column kinds**: ``numeric`` (int or float columns); ``categorical`` (strings,
  pandas ``category``, bools, and any column named in ``categorical=``); the time column
  is ``datetime`` (parsed with :func:`pandas.to_datetime`) or numeric.
* **The task**, when ``task=`` is absent: a text, bool or category target is binary (two
  classes) or multiclass; an integer target with at most 20 distinct values too; any
  other numeric target is regression.
* **The target**: class labels of any type are mapped to codes 0 … C−1 in sorted order
  (``Table.classes``); a regression target is float64.
* **Refused**, each with one ``ValueError`` naming the column, the value and the row
  (0-based positions, as in the split files): see :func:`read_table`.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

TASKS = ("binary", "multiclass", "regression")
SUFFIXES = (".csv", ".csv.gz", ".tsv", ".tsv.gz", ".parquet")
MAX_INTEGER_CLASSES = 20
"""An integer target with at most this many distinct values is a classification target."""
MIN_CLASS_ROWS = 3
"""A class needs at least as many rows as SPEC §6's folds."""
CORRECTLY_ROUNDED = ({} if tuple(int(p) for p in pd.__version__.split(".")[:2]) >= (3, 1)
                     else {"float_precision": "round_trip"})
"""read_csv's options for correctly rounded numbers: pandas 3.1 parses them so by default
(and deprecates ``float_precision``); before it, the default parser is an ulp off on about
a third of 17-digit texts. One rule on every pandas, and the page's reader (``Number()``)."""
UNIQUE_TEXT_MIN_ROWS = 10
"""From this many rows, a text feature with a distinct value in every row is refused."""
NUMERIC_SHARE = 0.9
"""A text column whose non-missing cells are at least this share numbers is a numeric
column with a stray non-number (refused), not a categorical one."""


@dataclass(frozen=True, eq=False)
class Table:
    """A checked table: raw typed features, target codes, task, roles and fingerprint."""

    name: str
    features: pd.DataFrame
    y: np.ndarray
    task: str
    classes: tuple | None
    kinds: dict[str, str]
    target: str
    group_column: str | None = None
    time_column: str | None = None
    groups: np.ndarray | None = None
    time: np.ndarray | None = None
    excluded_columns: tuple[str, ...] = ()
    columns: tuple[str, ...] = field(default=())

    @property
    def n_rows(self) -> int:
        return len(self.y)

    @property
    def n_classes(self) -> int | None:
        return None if self.classes is None else len(self.classes)

    @property
    def feature_names(self) -> tuple[str, ...]:
        return tuple(self.features.columns)

    def missing_counts(self) -> dict[str, int]:
        """Missing cells per feature column."""
        return {c: int(n) for c, n in self.features.isna().sum().items()}

    def fingerprint(self) -> dict[str, Any]:
        """What a split file records of this table (see :func:`fingerprint`)."""
        return fingerprint(self)


def _sha256(array: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(array).tobytes()).hexdigest()


def _codes_hash(values: np.ndarray) -> str:
    """Hash of a column up to relabelling-free identity: its sorted-distinct codes, int64 LE."""
    codes, _ = pd.factorize(pd.Series(values), sort=True)
    return _sha256(codes.astype("<i8"))


def fingerprint(table: Table) -> dict[str, Any]:
    """Rows, all column names, and SHA-256 hashes of the target (and groups or time).

    The target hash is over its codes (int64, little-endian) or float64 values; groups and
    time are hashed as the int64 codes of their sorted distinct values, so the hash
    changes when any row's group or time order changes.
    """
    y = table.y.astype("<i8" if table.classes is not None else "<f8")
    out: dict[str, Any] = {"n_rows": table.n_rows, "columns": list(table.columns),
                           "target": table.target, "target_sha256": _sha256(y)}
    if table.groups is not None:
        out["groups_sha256"] = _codes_hash(table.groups)
    if table.time is not None:
        out["time_sha256"] = _codes_hash(table.time)
    return out


def fingerprint_mismatch(expected: dict[str, Any], actual: dict[str, Any]) -> str | None:
    """A sentence naming what differs between two fingerprints, or None when they agree."""
    for key in ("n_rows", "columns", "target", "target_sha256", "groups_sha256",
                "time_sha256"):
        if expected.get(key) != actual.get(key):
            if key == "columns":
                gone = [c for c in expected.get("columns", []) if c not in actual["columns"]]
                new = [c for c in actual["columns"] if c not in expected.get("columns", [])]
                what = (f"columns differ (in the split file only: {gone}; in the table only: "
                        f"{new})" if gone or new else "the columns are in another order")
                return what
            return (f"{key} differs (split file: {expected.get(key)!r}, table: "
                    f"{actual.get(key)!r})")
    return None


# ----------------------------------------------------------------------------- reading


def _suffix(path: Path) -> str:
    name = path.name.lower()
    for suffix in sorted(SUFFIXES, key=len, reverse=True):
        if name.endswith(suffix):
            return suffix
    raise ValueError(f"{str(path)!r}: unsupported table file type; arenalite reads "
                     f"{', '.join(SUFFIXES)}")


def default_name(path: Path) -> str:
    """The table's name from its file: ``sales.csv.gz`` → ``sales``."""
    return path.name[: len(path.name) - len(_suffix(path))]


def _header(path: Path, sep: str) -> list[str]:
    opener = gzip.open if path.name.lower().endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8-sig", newline="") as handle:
        return next(csv.reader(handle, delimiter=sep), [])


SNIFF_ROWS = 1000
"""Rows read first to find the text columns, which are then parsed straight into pandas
categories (faster than text, and what the models take)."""


def _read_file(path: Path, roles: tuple = ()) -> pd.DataFrame:
    if not path.exists():
        if not any(path.name.lower().endswith(suffix) for suffix in SUFFIXES):
            raise ValueError(f"unknown dataset {str(path)!r}; bundled datasets are "
                             f"{sorted(_bundled())}, and a table file ends in "
                             f"{', '.join(SUFFIXES)}")
        raise FileNotFoundError(f"table file {str(path)!r} does not exist")
    suffix = _suffix(path)
    if suffix == ".parquet":
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            raise ValueError(f"{str(path)!r}: reading Parquet needs pyarrow, which is not "
                             "installed; pip install 'arenalite[parquet]' (or save the "
                             "table as CSV)") from None
        return pd.read_parquet(path)
    sep = "\t" if suffix.startswith(".tsv") else ","
    header = _header(path, sep)
    if not header:
        raise ValueError(f"{str(path)!r} is empty (no header row)")
    seen: set[str] = set()
    for position, name in enumerate(header):
        if name in seen:
            raise ValueError(f"{str(path)!r}: column name {name!r} appears twice (at "
                             f"position {header.index(name)} and {position}); rename one")
        seen.add(name)
    sniffed = pd.read_csv(path, sep=sep, encoding="utf-8-sig", nrows=SNIFF_ROWS,
                          **CORRECTLY_ROUNDED)
    text = {c: str for c in sniffed.columns if c not in roles and (
        pd.api.types.is_object_dtype(sniffed[c].dtype)
        or pd.api.types.is_string_dtype(sniffed[c].dtype))}
    frame = pd.read_csv(path, sep=sep, encoding="utf-8-sig", low_memory=False, dtype=text,
                        **CORRECTLY_ROUNDED)
    for name in text:
        frame[name] = frame[name].astype("category")
    if len(frame) == 0:
        raise ValueError(f"{str(path)!r} has a header but no data rows")
    return frame


def _source_frame(source: Any, roles: tuple = ()) -> tuple[pd.DataFrame, str | None]:
    if isinstance(source, pd.DataFrame):
        if source.columns.duplicated().any():
            name = source.columns[source.columns.duplicated()][0]
            raise ValueError(f"column name {name!r} appears twice; rename one")
        if len(source) == 0:
            raise ValueError("the DataFrame has no rows")
        bad = [c for c in source.columns if not isinstance(c, str)]
        if bad:
            raise TypeError(f"column names must be strings, got {bad[0]!r}")
        return source.reset_index(drop=True), None
    if isinstance(source, (str, Path)):
        path = Path(source)
        return _read_file(path, roles), default_name(path)
    raise TypeError(f"a table is a bundled name, a file path or a pandas DataFrame, got "
                    f"{type(source).__name__}")


def _bundled() -> dict[str, dict]:
    from . import catalogue

    return catalogue()


# ----------------------------------------------------------------------------- checks


def _first_rows(mask: np.ndarray, k: int = 5) -> list[int]:
    return np.flatnonzero(mask)[:k].tolist()


def _show(value: Any) -> str:
    return repr(value.item() if isinstance(value, np.generic) else value)


def _names(value: Any, option: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    names = list(value)
    bad = [n for n in names if not isinstance(n, str)]
    if bad:
        raise TypeError(f"{option} must name columns as strings, got {bad[0]!r}")
    return names


def _require(frame: pd.DataFrame, column: str, option: str) -> None:
    if column not in frame.columns:
        raise ValueError(f"{option} {column!r} is not a column of the table; its columns are "
                         f"{list(frame.columns)}")


def _check_numeric(series: pd.Series) -> None:
    values = series.to_numpy(dtype=np.float64, na_value=np.nan)
    infinite = np.isinf(values)
    if infinite.any():
        i = int(np.argmax(infinite))
        raise ValueError(f"column {series.name!r} has an infinite value ({_show(values[i])}) "
                         f"at row {i} ({int(infinite.sum())} in all); make such cells empty "
                         "(missing) or finite")


def _kind(series: pd.Series, categorical: bool) -> tuple[str, pd.Series]:
    """``numeric`` or ``categorical`` and the column as stored (a categorical one as a
    pandas ``category``); refuses stray non-numbers and per-row unique text. Text is
    checked on its distinct values (one factorize), so a million rows cost little."""
    dtype = series.dtype
    if isinstance(dtype, pd.CategoricalDtype) and not _text_categories(dtype):
        return "categorical", series
    if categorical or pd.api.types.is_bool_dtype(dtype):
        return "categorical", series.astype("category")
    if pd.api.types.is_numeric_dtype(dtype):
        _check_numeric(series)
        return "numeric", series
    if pd.api.types.is_datetime64_any_dtype(dtype):
        raise ValueError(f"column {series.name!r} holds dates: name it with time_column= "
                         "(--time-column) or leave it out with leakage_columns=")
    if isinstance(dtype, pd.CategoricalDtype):
        codes, uniques = series.cat.codes.to_numpy(), series.cat.categories
    else:
        codes, uniques = pd.factorize(series, sort=True)
    present = codes >= 0
    is_number = pd.to_numeric(pd.Series(uniques, dtype=object),
                              errors="coerce").notna().to_numpy()
    stray_rows = present & ~is_number[codes]
    n_present, n_numbers = int(present.sum()), int(np.count_nonzero(is_number[codes[present]]))
    if n_present and n_numbers >= NUMERIC_SHARE * n_present and stray_rows.any():
        i = int(np.argmax(stray_rows))
        raise ValueError(f"column {series.name!r} holds numbers but row {i} has "
                         f"{_show(series.iloc[i])} ({int(stray_rows.sum())} such cells); make "
                         "it an empty cell (missing), or name the column in categorical= "
                         "(--categorical)")
    n = len(series)
    if n >= UNIQUE_TEXT_MIN_ROWS and len(uniques) == n:
        raise ValueError(f"column {series.name!r} is text with a different value in every "
                         f"row (row 0: {_show(series.iloc[0])}), an id rather than a feature; "
                         "name it in leakage_columns= (--leakage-columns) to leave it out, or "
                         "as group_column= if rows of one entity share it")
    if isinstance(dtype, pd.CategoricalDtype):
        return "categorical", series
    return "categorical", pd.Series(pd.Categorical.from_codes(codes, uniques),
                                    index=series.index, name=series.name)


def _text_categories(dtype: pd.CategoricalDtype) -> bool:
    categories = dtype.categories
    return (pd.api.types.is_object_dtype(categories.dtype)
            or pd.api.types.is_string_dtype(categories.dtype))


def _task_of(y: pd.Series) -> str:
    if not pd.api.types.is_numeric_dtype(y.dtype) or pd.api.types.is_bool_dtype(y.dtype):
        return "binary" if y.nunique() == 2 else "multiclass"
    values = y.to_numpy(dtype=np.float64)
    integral = bool(np.all(values == np.round(values)))
    if integral and y.nunique() <= MAX_INTEGER_CLASSES:
        return "binary" if y.nunique() == 2 else "multiclass"
    return "regression"


def _target(frame: pd.DataFrame, target: str, task: str | None
            ) -> tuple[np.ndarray, str, tuple | None]:
    y = frame[target]
    missing = y.isna().to_numpy()
    if missing.any():
        raise ValueError(f"target column {target!r} has {int(missing.sum())} missing value(s), "
                         f"first at rows {_first_rows(missing)}; fill or remove those rows")
    if task is None:
        task = _task_of(y)
    elif task not in TASKS:
        raise ValueError(f"task must be one of {TASKS}, got {task!r}")
    if task == "regression":
        if not pd.api.types.is_numeric_dtype(y.dtype) or pd.api.types.is_bool_dtype(y.dtype):
            bad = pd.to_numeric(y, errors="coerce").isna().to_numpy()
            i = int(np.argmax(bad)) if bad.any() else 0
            raise ValueError(f"target column {target!r} of a regression task must be numbers; "
                             f"row {i} has {_show(y.iloc[i])}")
        _check_numeric(y)
        return y.to_numpy(dtype=np.float64), task, None
    codes, classes = pd.factorize(y, sort=True)
    if len(classes) < 2:
        raise ValueError(f"target column {target!r} has one class only "
                         f"({_show(classes[0])}); a {task} task needs two or more")
    if task == "binary" and len(classes) != 2:
        raise ValueError(f"target column {target!r} has {len(classes)} classes, not the two of "
                         f"a binary task: {list(classes[:6])}")
    counts = np.bincount(codes, minlength=len(classes))
    small = np.flatnonzero(counts < MIN_CLASS_ROWS)
    if len(small):
        c = int(small[0])
        raise ValueError(f"class {_show(classes[c])} of target column {target!r} has "
                         f"{int(counts[c])} row(s) (first at row {int(np.argmax(codes == c))}), "
                         f"fewer than the {MIN_CLASS_ROWS} folds of SPEC §6")
    return codes.astype(np.int64), task, tuple(c.item() if isinstance(c, np.generic) else c
                                               for c in classes)


def _groups(frame: pd.DataFrame, column: str) -> np.ndarray:
    values = frame[column]
    missing = values.isna().to_numpy()
    if missing.any():
        raise ValueError(f"group column {column!r} has {int(missing.sum())} missing value(s), "
                         f"first at rows {_first_rows(missing)}; every row needs its entity id")
    if values.nunique() < 2:
        raise ValueError(f"group column {column!r} has a single group "
                         f"({_show(values.iloc[0])}); grouped folds need at least 3")
    return values.to_numpy()


def _time(frame: pd.DataFrame, column: str) -> np.ndarray:
    values = frame[column]
    missing = values.isna().to_numpy()
    if missing.any():
        raise ValueError(f"time column {column!r} has {int(missing.sum())} missing value(s), "
                         f"first at rows {_first_rows(missing)}; temporal folds need every "
                         "row's time")
    if pd.api.types.is_numeric_dtype(values.dtype) and not pd.api.types.is_bool_dtype(
            values.dtype):
        _check_numeric(values)
        return values.to_numpy()
    if pd.api.types.is_datetime64_any_dtype(values.dtype):
        return values.to_numpy()
    parsed = pd.to_datetime(values, errors="coerce", format="mixed")
    bad = parsed.isna().to_numpy()
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(f"time column {column!r}: row {i} has {_show(values.iloc[i])}, "
                         f"which does not parse as a date or time ({int(bad.sum())} such "
                         "cells)")
    if getattr(parsed.dt, "tz", None) is not None:
        parsed = parsed.dt.tz_convert("UTC").dt.tz_localize(None)
    return parsed.to_numpy()


# ----------------------------------------------------------------------------- entry point


def read_table(source: Any, *, target: str | None = None, task: str | None = None,
               group_column: str | None = None, time_column: str | None = None,
               leakage_columns: Any = (), categorical: Any = (),
               name: str | None = None) -> Table:
    """Read, type and check a table (a file path or a DataFrame) for SPEC §6 and the models.

    ``target`` names the target column; ``task`` is inferred when absent (module
    docstring); ``group_column`` / ``time_column`` pick grouped or temporal folds (not
    both); ``leakage_columns`` are left out of the features; ``categorical`` forces
    columns (integer codes, say) to be categorical; ``name`` defaults to the file's stem.

    Refused with a ``ValueError`` naming the culprit: an unknown target, missing target
    values, one class or a class with fewer rows than folds, a stray non-number in a
    number column, duplicate column names, an empty file, a group column with one group,
    an unparseable time, a leakage column that is the target, infinite values, a text
    feature with a different value in every row, and unknown column names in any option.
    """
    if isinstance(source, str) and not Path(source).exists() and source in _bundled():
        entry = _bundled()[source]
        frame = pd.read_csv(Path(__file__).parent / entry["file"], compression="gzip")
        stem, target = source, target or entry["target"]
        task = task or entry["task"]
    else:
        frame, stem = _source_frame(source, (group_column, time_column))
    if target is None:
        raise ValueError(f"name the target column with target= (--target); the columns are "
                         f"{list(frame.columns)}")
    _require(frame, target, "target column")
    if group_column is not None and time_column is not None:
        raise ValueError("give either group_column (grouped folds) or time_column (temporal "
                         "folds), not both")
    leakage = _names(leakage_columns, "leakage_columns")
    forced = _names(categorical, "categorical")
    for col in leakage:
        if col == target:
            raise ValueError(f"leakage column {col!r} is the target column; the target is "
                             "never a feature, so leave it out of leakage_columns")
        _require(frame, col, "leakage column")
    for col in forced:
        _require(frame, col, "categorical column")
        if col == target:
            raise ValueError(f"categorical column {col!r} is the target column")
    y, task, classes = _target(frame, target, task)
    groups = time = None
    if group_column is not None:
        _require(frame, group_column, "group column")
        if group_column == target:
            raise ValueError(f"group column {group_column!r} is the target column")
        groups = _groups(frame, group_column)
    if time_column is not None:
        _require(frame, time_column, "time column")
        if time_column == target:
            raise ValueError(f"time column {time_column!r} is the target column")
        time = _time(frame, time_column)
    excluded = tuple(dict.fromkeys(c for c in (group_column, time_column, *leakage) if c))
    feature_cols = [c for c in frame.columns if c != target and c not in excluded]
    if not feature_cols:
        raise ValueError(f"no feature columns are left (target {target!r}, excluded "
                         f"{list(excluded)})")
    typed = {c: _kind(frame[c], c in forced) for c in feature_cols}
    kinds = {c: kind for c, (kind, _) in typed.items()}
    # every model reads a categorical column as a pandas category
    features = pd.DataFrame({c: column for c, (_, column) in typed.items()})
    features.flags.allows_duplicate_labels = False
    table_name = name if name is not None else (stem or "table")
    if not isinstance(table_name, str) or not table_name:
        raise TypeError(f"name must be a non-empty string, got {table_name!r}")
    y.flags.writeable = False
    return Table(table_name, features, y, task, classes, kinds, target, group_column,
                 time_column, groups, time, excluded, tuple(frame.columns))


# ----------------------------------------------------------------------------- splits


def make_table_splits(table: Table, **options: Any) -> dict[str, Any]:
    """SPEC §6's splits of ``table`` (grouped, temporal, iid or the 1 M-row holdout by its
    roles) with its excluded columns and :func:`fingerprint`; ``options`` go to
    :func:`arenalite.splits.make_splits` (``n_repeats``, ``kind``, …)."""
    from .. import splits

    persisted = splits.make_splits(
        table.n_rows, table.task, y=table.y, groups=table.groups, time=table.time,
        dataset=table.name, group_column=table.group_column, time_column=table.time_column,
        leakage_columns=[c for c in table.excluded_columns
                         if c not in (table.group_column, table.time_column)],
        target_column=table.target, **{"warn_row_order": True, **options})
    persisted["fingerprint"] = fingerprint(table)
    return persisted


def check_table_splits(table: Table, persisted: dict[str, Any], source: str) -> None:
    """Refuse a split file made from another table, naming what differs."""
    recorded = persisted.get("fingerprint")
    if recorded is None:
        if persisted["n_rows"] != table.n_rows:
            raise ValueError(f"{source} was made for {persisted['n_rows']} rows; table "
                             f"{table.name!r} has {table.n_rows}")
        return
    why = fingerprint_mismatch(recorded, fingerprint(table))
    if why:
        raise ValueError(f"{source} was made from another table than {table.name!r}: {why}")
    missing = [c for c in persisted["excluded_columns"] if c not in table.columns]
    if missing:
        raise ValueError(f"{source} excludes column(s) {missing} that table {table.name!r} "
                         "lacks")


def to_dataset(table: Table, drop: Any = ()) -> Any:
    """The :class:`~arenalite.datasets.Dataset` the runner's models take.

    A table of complete number columns gives a float64 matrix, as the bundled tables do;
    one with categorical or missing cells keeps its typed columns as a DataFrame, which
    :func:`arenalite.models.predict` encodes per model (docs/models.md).
    """
    from . import Dataset

    features = table.features.drop(columns=[c for c in drop if c in table.features])
    if not len(features.columns):
        raise ValueError(f"table {table.name!r} has no feature column left after dropping "
                         f"{list(drop)}")
    numeric = all(table.kinds[c] == "numeric" for c in features.columns)
    if numeric and not features.isna().to_numpy().any():
        X = features.to_numpy(dtype=np.float64)
        X.flags.writeable = False
    else:
        X = features.reset_index(drop=True)
    return Dataset(table.name, X, table.y, table.task, table.n_classes,
                   tuple(features.columns))


def describe(table: Table, **options: Any) -> str:
    """What the loader sees, as text: columns' kinds and missing counts, task, classes,
    excluded columns and the split rule with its number of splits."""
    from .. import splits

    lines = [f"table {table.name!r}: {table.n_rows} rows, {len(table.features.columns)} "
             f"feature column(s), target {table.target!r}, task {table.task}"]
    if table.classes is not None:
        counts = np.bincount(table.y, minlength=len(table.classes))
        lines.append("classes: " + ", ".join(f"{i} = {c!r} ({int(n)} rows)" for i, (c, n)
                                             in enumerate(zip(table.classes, counts,
                                                              strict=True))))
    else:
        lines.append(f"target range: {table.y.min():.6g} … {table.y.max():.6g}")
    width = max(len(c) for c in table.features.columns)
    lines.append("columns:")
    missing = table.missing_counts()
    for col in table.features.columns:
        lines.append(f"  {col:<{width}}  {table.kinds[col]:<11}  missing {missing[col]}")
    lines.append(f"excluded columns: {list(table.excluded_columns) or 'none'}")
    persisted = make_table_splits(table, **options)
    rule = {"iid": "IID 3-fold, stratified" if table.classes else "IID 3-fold",
            "holdout": f"one {splits.HOLDOUT_TEST_ROWS:,}-row holdout (seed "
                       f"{splits.HOLDOUT_SEED}), from {splits.HOLDOUT_MIN_ROWS:,} rows",
            "grouped": f"grouped 3-fold by {table.group_column!r}",
            "temporal": f"temporal, expanding window on {table.time_column!r}",
            }.get(persisted["kind"], persisted["kind"])
    lines.append(f"splits: {rule}: {persisted['n_repeats']} repeat(s) × "
                 f"{persisted['n_folds']} fold(s) = {len(persisted['splits'])} splits")
    return "\n".join(lines)
