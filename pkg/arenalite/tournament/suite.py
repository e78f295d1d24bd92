"""The suite: the tables of a tournament, each with its target, roles and split options.

A suite file is TOML (read with the standard library's ``tomllib``) or JSON with the
same keys: an optional ``name``, then one ``[[datasets]]`` entry per table (docs/tables.md).
:func:`read_suite` checks the whole suite before any work starts (every file read, every
column named checked) and refuses a mistake with one line naming the file, the entry and
the key: ``suite.toml, datasets[3] "hmda": target "denied" is not a column; its columns
are [...]``. Entries are numbered from 1, as a reader counts them.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from ..datasets import names as bundled_names
from ..datasets import resolve
from ..datasets import table as tables

ENTRY_KEYS = ("name", "path", "bundled", *resolve.TABLE_OPTIONS, *resolve.SPLIT_OPTIONS)
"""The keys a ``[[datasets]]`` entry may hold."""
TOP_KEYS = ("name", "datasets")
TYPES: dict[str, tuple[tuple[type, ...], str]] = {
    "name": ((str,), "a string"), "path": ((str,), "a string"),
    "bundled": ((str,), "a string"), "target": ((str,), "a string"),
    "task": ((str,), "a string"), "group_column": ((str,), "a string"),
    "time_column": ((str,), "a string"), "leakage_columns": ((list,), "a list of strings"),
    "categorical": ((list,), "a list of strings"), "kind": ((str,), "a string"),
    "n_repeats": ((int,), "a whole number"), "n_folds": ((int,), "a whole number"),
    "test_fraction": ((float, int), "a number"), "gap": ((int, float, str), "a number or a "
                                                       "duration such as \"7D\""),
    "group_labels": ((str,), "a string"),
}
CHOICES = {"task": tables.TASKS, "kind": ("adaptive", "kfold", "random"),
           "group_labels": ("per_sample", "per_group")}


class SuiteError(ValueError):
    """A mistake in a suite: the message names the file, the entry and the key."""


@dataclass(frozen=True, eq=False)
class Entry:
    """One table of a suite: where it comes from, its roles and its split options.

    ``source`` is a path, a bundled name or a DataFrame; ``table`` the table options
    (:data:`~arenalite.datasets.resolve.TABLE_OPTIONS`) and ``split`` the split options
    as :func:`~arenalite.datasets.resolve.split_options` gives them.
    """

    name: str
    source: Any
    table: dict[str, Any] = field(default_factory=dict)
    split: dict[str, Any] = field(default_factory=dict)

    def read(self) -> tables.Table:
        """The checked table (read again on every call: a suite holds no data)."""
        return resolve.read(self.source, name=self.name, **self.table)

    def make_splits(self) -> dict[str, Any]:
        """The split dict, byte for byte what ``arenalite splits`` writes for this table."""
        return resolve.make_splits(self.source, self.table, name=self.name, **self.split)

    def describe(self) -> str:
        """:func:`arenalite.datasets.table.describe` of this table and its split options."""
        return tables.describe(self.read(), **self.split)

    def spec(self) -> dict[str, Any]:
        """The entry as JSON-able data (a DataFrame source by its content hash)."""
        if isinstance(self.source, pd.DataFrame):
            digest = hashlib.sha256(pd.util.hash_pandas_object(self.source, index=False)
                                    .to_numpy().tobytes()).hexdigest()
            source: Any = {"dataframe_sha256": digest}
        else:
            source = str(self.source)
        split = {k: (str(v) if not isinstance(v, (int, float, str, type(None))) else v)
                 for k, v in self.split.items()}
        return {"name": self.name, "source": source, "table": {k: (list(v) if isinstance(
            v, tuple) else v) for k, v in self.table.items()}, "split": split}


@dataclass(frozen=True, eq=False)
class Suite:
    """A named list of tables (:class:`Entry`), from a suite file or built in code.

    ``Suite.of(source, target=..., ...)`` makes a one-table suite; :func:`read_suite` reads
    a file. Entry names are unique: they name the split files and the results' rows.
    """

    name: str
    entries: tuple[Entry, ...]
    path: Path | None = None

    def __post_init__(self) -> None:
        seen: dict[str, int] = {}
        for i, entry in enumerate(self.entries, start=1):
            if entry.name in seen:
                raise SuiteError(f"{self._where(i, entry.name)}: name {entry.name!r} is "
                                 f"already the name of datasets[{seen[entry.name]}]; names "
                                 "must be unique")
            seen[entry.name] = i

    def _where(self, i: int, name: str) -> str:
        head = self.path.name if self.path is not None else "suite"
        return f'{head}, datasets[{i}] "{name}"'

    @classmethod
    def of(cls, source: Any, name: str | None = None, **options: Any) -> Suite:
        """A one-table suite: ``source`` (bundled name, file or DataFrame) with its table
        and split options under the CLI's names."""
        entry = _entry({**options, **({"name": name} if name else {})}, source)
        return cls(entry.name, (entry,))

    @property
    def names(self) -> list[str]:
        return [e.name for e in self.entries]

    def spec(self) -> dict[str, Any]:
        return {"name": self.name, "datasets": [e.spec() for e in self.entries]}

    def hash(self) -> str:
        """SHA-256 of the suite file's bytes, or of the entries as JSON for a suite built
        in code (what tournament.json records)."""
        if self.path is not None and self.path.is_file():
            return hashlib.sha256(self.path.read_bytes()).hexdigest()
        text = json.dumps(self.spec(), sort_keys=True, default=str)
        return hashlib.sha256(text.encode()).hexdigest()

    def check(self) -> None:
        """Read every table once and check its roles; the first mistake raises a
        :class:`SuiteError` naming the entry. No table is kept: each is read again when
        its tasks run (memory follows one table, not the suite)."""
        for i, entry in enumerate(self.entries, start=1):
            try:
                entry.read()
            except (ValueError, TypeError, OSError) as error:
                raise SuiteError(f"{self._where(i, entry.name)}: {_sentence(error)}") from None


def _sentence(error: Exception) -> str:
    """read_table's message with a role named by its suite key: ``target column 'x' is not
    a column of the table`` → ``target 'x' is not a column``."""
    text = str(error)
    for option, key in (("target column", "target"), ("group column", "group_column"),
                        ("time column", "time_column"), ("leakage column", "leakage_columns"),
                        ("categorical column", "categorical")):
        if text.startswith(f"{option} '"):
            text = key + text[len(option):]
    return text.replace(" is not a column of the table;", " is not a column;")


def _entry(raw: dict[str, Any], source: Any) -> Entry:
    """An :class:`Entry` from an entry's checked keys."""
    name = raw.get("name")
    if name is None:
        if isinstance(source, pd.DataFrame):
            name = "table"
        elif isinstance(source, (str, Path)) and resolve.is_file(source):
            name = tables.default_name(Path(source))
        else:
            name = str(source)
    table = {k: raw[k] for k in resolve.TABLE_OPTIONS if k in raw}
    for key in ("leakage_columns", "categorical"):
        if key in table:
            value = table[key]
            table[key] = (value,) if isinstance(value, str) else tuple(value)
    split_raw = {k: raw[k] for k in resolve.SPLIT_OPTIONS if k in raw}
    if "gap" in split_raw:
        split_raw["gap"] = resolve.parse_gap(split_raw["gap"])
    return Entry(name, source, table, resolve.split_options(**split_raw))


def _check_type(key: str, value: Any) -> str | None:
    kinds, what = TYPES[key]
    if isinstance(value, bool) or not isinstance(value, kinds):
        return f"{key} must be {what}, got {value!r}"
    if isinstance(value, list) and not all(isinstance(v, str) for v in value):
        bad = next(v for v in value if not isinstance(v, str))
        return f"{key} must be {what}, got the item {bad!r}"
    if key in CHOICES and value not in CHOICES[key]:
        return f"{key} must be one of {list(CHOICES[key])}, got {value!r}"
    if key in ("n_repeats", "n_folds") and value < 1:
        return f"{key} must be 1 or more, got {value}"
    return None


def parse_suite(data: Any, path: Path | None = None, check: bool = True) -> Suite:
    """A :class:`Suite` from a suite file's data (the parsed TOML or JSON); paths are
    relative to ``path``'s folder. ``check`` reads every table (:meth:`Suite.check`)."""
    head = path.name if path is not None else "suite"
    if not isinstance(data, dict):
        raise SuiteError(f"{head}: the top level must be a table of keys, got "
                         f"{type(data).__name__}")
    unknown = sorted(set(data) - set(TOP_KEYS))
    if unknown:
        raise SuiteError(f"{head}: unknown key {unknown[0]!r}; a suite has {list(TOP_KEYS)}")
    name = data.get("name", path.stem if path is not None else "suite")
    if not isinstance(name, str) or not name:
        raise SuiteError(f"{head}: name must be a non-empty string, got {name!r}")
    raw_entries = data.get("datasets")
    if not isinstance(raw_entries, list) or not raw_entries:
        raise SuiteError(f"{head}: no [[datasets]] entry; a suite needs one per table")
    base = path.parent if path is not None else Path.cwd()
    entries = []
    for i, raw in enumerate(raw_entries, start=1):
        label = raw.get("name") if isinstance(raw, dict) else None
        where = f'{head}, datasets[{i}]' + (f' "{label}"' if isinstance(label, str) else "")
        if not isinstance(raw, dict):
            raise SuiteError(f"{where}: an entry must be a table of keys, got "
                             f"{type(raw).__name__}")
        for key, value in raw.items():
            if key not in ENTRY_KEYS:
                raise SuiteError(f"{where}: unknown key {key!r}; an entry may have "
                                 f"{list(ENTRY_KEYS)}")
            problem = _check_type(key, value)
            if problem:
                raise SuiteError(f"{where}: {problem}")
        if ("path" in raw) == ("bundled" in raw):
            raise SuiteError(f"{where}: give exactly one of path (a table file) or bundled "
                             f"(one of {bundled_names()})")
        if "bundled" in raw:
            source: Any = raw["bundled"]
            if source not in bundled_names():
                raise SuiteError(f"{where}: bundled {source!r} is not a bundled dataset; they "
                                 f"are {bundled_names()}")
            if any(k in raw for k in resolve.TABLE_OPTIONS):
                given = [k for k in resolve.TABLE_OPTIONS if k in raw]
                raise SuiteError(f"{where}: {given[0]} applies to a table file (path); a "
                                 "bundled dataset has its own roles")
        else:
            source = base / raw["path"]
            if not source.is_file():
                raise SuiteError(f"{where}: path {raw['path']!r} is not a file "
                                 f"({str(source)!r} does not exist)")
            try:
                tables.default_name(source)
            except ValueError as error:
                raise SuiteError(f"{where}: path: {error}") from None
            if "target" not in raw:
                raise SuiteError(f"{where}: target is missing; a table file needs its "
                                 "target column")
        try:
            entries.append(_entry(raw, source))
        except (ValueError, TypeError) as error:
            raise SuiteError(f"{where}: {error}") from None
    suite = Suite(name, tuple(entries), path)
    if check:
        suite.check()
    return suite


def read_suite(path: str | Path, check: bool = True) -> Suite:
    """Read and check a suite file (``.toml``, or ``.json`` with the same keys)."""
    import tomllib

    path = Path(path)
    if path.is_dir():
        raise SuiteError(f"suite {str(path)!r} is a folder, not a suite file")
    if not path.is_file():
        raise SuiteError(f"suite file {str(path)!r} does not exist")
    text = path.read_text(encoding="utf-8")
    if path.suffix.lower() == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as error:
            raise SuiteError(f"{path.name}, line {error.lineno}, column {error.colno}: not "
                             f"valid JSON: {error.msg}") from None
    else:
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as error:
            raise SuiteError(f"{path.name}: not valid TOML: {error}") from None
    return parse_suite(data, path, check)


def is_suite_file(source: Any) -> bool:
    """Whether ``source`` names a suite file (``.toml``, or a ``.json`` holding datasets)."""
    if not isinstance(source, (str, Path)):
        return False
    text = str(source).lower()
    return text.endswith(".toml") or (text.endswith(".json") and not text.endswith(
        ".splits.json"))


def as_suite(source: Any, **options: Any) -> Suite:
    """A :class:`Suite` from a suite, a suite file, or one table (a bundled name, a table
    file or a DataFrame) with its options."""
    if isinstance(source, Suite):
        if options:
            raise TypeError(f"table options {sorted(options)} apply to one table, not to a "
                            "Suite")
        return source
    if is_suite_file(source):
        if options:
            raise TypeError(f"table options {sorted(options)} apply to one table, not to a "
                            "suite file")
        return read_suite(source)
    suite = Suite.of(source, **options)
    suite.check()
    return suite
