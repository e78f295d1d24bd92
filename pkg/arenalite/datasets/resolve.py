"""One table, named as a user names it: a bundled name or a file, with its roles and split options.

The command line (``arenalite splits|describe|run TABLE --target ...``), a suite file's
``[[datasets]]`` entry and the Python API all resolve a table here, so that a suite's
split files equal the table-by-table ones byte for byte: a bundled name without table
options keeps the bundled loader's split file (no fingerprint, as ``arenalite splits
wine`` has always written); a file, or a bundled name with roles, goes through
:func:`~arenalite.datasets.table.read_table` and gets its fingerprint.
"""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Any

from . import load, names
from . import table as tables

TABLE_OPTIONS = ("target", "task", "group_column", "time_column", "leakage_columns",
                 "categorical")
"""read_table's keywords, under the CLI's names (``--group-column`` → ``group_column``)."""
SPLIT_OPTIONS = ("kind", "n_repeats", "n_folds", "test_fraction", "gap", "group_labels")
"""make_splits' keywords a table may set (``kind = "adaptive"`` is SPEC §6's rule)."""


def is_file(source: str | Path) -> bool:
    """Whether ``source`` names a table file (it exists, or ends in a table suffix)."""
    text = str(source)
    return Path(text).exists() or any(text.lower().endswith(s) for s in tables.SUFFIXES)


def plain_bundled(source: Any, options: dict[str, Any]) -> bool:
    """A bundled name without any table option: read by the bundled loader."""
    return (isinstance(source, str) and not is_file(source) and source in names()
            and all(options.get(k) in (None, (), []) for k in TABLE_OPTIONS))


def read(source: Any, name: str | None = None, **options: Any) -> tables.Table:
    """The checked :class:`~arenalite.datasets.table.Table` of a bundled name, a table file
    or a DataFrame, with ``options`` (:data:`TABLE_OPTIONS`). A file needs its target; a
    bundled name takes no options (its roles are the catalogue's)."""
    given = check_options(source, options)
    return tables.read_table(source, name=name, **given)


def check_options(source: Any, options: dict[str, Any]) -> dict[str, Any]:
    """The options given (unset ones left out), checked against the source: a file needs
    its target, a bundled name takes none (its roles are the catalogue's)."""
    unknown = sorted(set(options) - set(TABLE_OPTIONS))
    if unknown:
        raise TypeError(f"unknown table option(s) {unknown}; known: {list(TABLE_OPTIONS)}")
    given = {k: v for k, v in options.items() if v not in (None, (), [])}
    if isinstance(source, (str, Path)):
        if is_file(source) and given.get("target") is None:
            raise ValueError(f"table file {str(source)!r} needs --target COL (its target "
                             "column)")
        if not is_file(source) and given:
            raise ValueError(f"{str(source)!r} is neither a table file nor a bundled dataset "
                             "with flags: --target and the other table flags apply to files")
    return given


def split_options(kind: str | None = None, n_repeats: int | None = None,
                  n_folds: int | None = None, test_fraction: float | None = None,
                  gap: Any = 0, group_labels: str | None = None) -> dict[str, Any]:
    """make_splits' keywords as the CLI passes them: ``kind="adaptive"`` is None, and
    ``gap`` / ``group_labels`` only when set."""
    out: dict[str, Any] = {"kind": None if kind in (None, "adaptive") else kind,
                           "n_repeats": n_repeats, "n_folds": n_folds,
                           "test_fraction": test_fraction}
    if gap not in (None, 0):
        out["gap"] = gap
    if group_labels is not None:
        out["group_labels"] = group_labels
    return out


def parse_gap(value: Any) -> Any:
    """A temporal gap: a number, or a duration text such as ``7D`` / ``12h`` (a timedelta)."""
    if isinstance(value, bool):
        raise TypeError(f"gap must be a number or a duration such as 7D, got {value!r}")
    if isinstance(value, (int, float, datetime.timedelta)):
        return value
    if not isinstance(value, str):
        raise TypeError(f"gap must be a number or a duration such as 7D, got "
                        f"{type(value).__name__}")
    try:
        number = float(value)
    except ValueError:
        number = None
    if number is not None:
        return int(number) if number.is_integer() else number
    import pandas as pd

    try:
        duration = pd.Timedelta(value)
    except ValueError:
        duration = pd.NaT
    if pd.isna(duration):
        raise ValueError(f"gap must be a number or a duration such as 7D or 12h, got {value!r}")
    return duration.to_pytimedelta()


def make_splits(source: Any, table_options: dict[str, Any] | None = None,
                name: str | None = None, **options: Any) -> dict[str, Any]:
    """The split dict of one table, exactly as ``arenalite splits TABLE`` writes it;
    ``options`` from :func:`split_options`."""
    from .. import splits

    table_options = table_options or {}
    if isinstance(source, tables.Table):
        return tables.make_table_splits(source, **options)
    if plain_bundled(source, table_options) and name in (None, source):
        data = load(source)
        return splits.make_splits(data.n_rows, data.task, y=data.y, dataset=source, **options)
    return tables.make_table_splits(read(source, name=name, **table_options), **options)
