"""Native results formats: recognise TabArena's per-split results and the runners' table.

A format fixes what the plain long format leaves to the column options:

- ``"tabarena"``, TabArena's per-split results (columns ``method, dataset, fold,
  metric_error, metric``, usually also ``time_train_s, time_infer_s, problem_type``):
  models from ``method``, seeds from ``fold``, scores from ``metric_error``, which is an
  error for every metric (lower is better, 0 best: 1 − AUC for ``roc_auc``).
- ``"runners"``, the table of :mod:`arenalite.runner` and the WebGPU page (``model, dataset,
  metric, score, seed, runner, total_ms, n_test``, …): seeds from ``seed``; scores in each
  metric's registered direction; with rows of more than one runner, each model is named
  ``"<model> @ <runner>"`` (unless already so named) so that a model's two runners rank
  side by side.
- ``"long"``: the plain long format, every column named by the options.

Times, in any format, become per-row columns of the long table: ``time_train_s`` and
``time_infer_s`` as given (or the runners' ``total_ms`` / 1000 as inference time), and
``time_train_s_per_1K`` / ``time_infer_s_per_1K`` = time × 1000 / rows, as TabArena
computes them (its rows are the dataset's ``n_samples_train_per_fold`` /
``n_samples_test_per_fold``; here a column of that name, or ``n_train`` / ``n_test``).
Per-1K columns already in the results are kept as given.

TabArena's own per-split file carries no row counts: TabArena takes them from its task
metadata. :func:`join_task_metadata` reads that table (``load_df``'s ``task_metadata=``, the
CLI's ``--task-metadata FILE``) in either of TabArena's layouts, recognised by its columns:

- one row per split, as the ``tabarena`` package ships it
  (``tabarena/benchmark/task/metadata/sources/data/<suite>_tasks_metadata.csv``): its
  ``tabarena_task_name`` (else ``dataset_name``) is matched to the results' dataset column,
  and a task's rows are the means over its splits of ``num_instances_train`` and
  ``num_instances_test``, as TabArena's ``LeaderboardReporter`` derives them; a split
  (``repeat``, ``fold``) listed twice must have the same counts both times;
- one row per dataset, the legacy layout: its ``name`` (else ``dataset``) is matched, and
  its ``n_samples_train_per_fold`` / ``n_samples_test_per_fold`` are the rows; a dataset
  listed twice must have the same counts both times.

A frame with the columns of both is read per split. Either way the rows of
``time_train_s_per_1K`` / ``time_infer_s_per_1K`` come out as the columns
``n_samples_train_per_fold`` / ``n_samples_test_per_fold``; every dataset of the results
must be in the metadata; counts are numbers > 0; where the results carry a count column of
the same name too, the two must agree.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .params import is_number, plain

FORMATS = ("long", "tabarena", "runners")
TABARENA_COLUMNS = ("method", "dataset", "fold", "metric_error", "metric")
RUNNER_COLUMNS = ("model", "dataset", "metric", "score", "seed", "runner", "total_ms", "n_test")
TIME_COLUMNS = ("time_train_s", "time_infer_s", "time_train_s_per_1K", "time_infer_s_per_1K")
ROW_COUNTS = {"train": ("n_samples_train_per_fold", "n_train"),
              "infer": ("n_samples_test_per_fold", "n_test")}
"""Columns that give the rows a time was measured on, in order of preference."""
METADATA_KEYS = ("name", "dataset")
"""The task metadata's dataset-name column, in order of preference (TabArena has both)."""
METADATA_COUNTS = ("n_samples_train_per_fold", "n_samples_test_per_fold")
"""The task metadata's row counts per fold: train rows, then test (inference) rows."""
SPLIT_KEYS = ("tabarena_task_name", "dataset_name")
"""The per-split task metadata's task-name column, in order of preference."""
SPLIT_INDEX = ("repeat", "fold")
SPLIT_COUNTS = ("num_instances_train", "num_instances_test")
"""The per-split task metadata's row counts of each split: train rows, then test rows."""
DEFAULTS = {
    "tabarena": {"model": "method", "dataset": "dataset", "metric": "metric",
                 "score": "metric_error", "seed": "fold"},
    "runners": {"model": "model", "dataset": "dataset", "metric": "metric", "score": "score",
                "seed": "seed"},
}
"""Each format's column for every column option still at its default."""


@dataclass(frozen=True)
class Recognised:
    """What :func:`recognise` found: the format, its column defaults and its frame."""

    name: str
    columns: dict[str, str]
    frame: pd.DataFrame
    error_scores: bool
    note: str | None
    runners: bool = False
    """Whether models were named ``"<model> @ <runner>"`` (rows of several runners)."""


def recognise(df: pd.DataFrame, format: str | None) -> str:
    """The format of ``df``: ``format`` when given, else found by its columns."""
    if format is not None:
        if format not in FORMATS:
            raise ValueError(f"format must be one of {FORMATS!r} or None (recognise it by the "
                             f"columns), got {format!r}")
        return format
    present = set(df.columns)
    if present.issuperset(TABARENA_COLUMNS):
        return "tabarena"
    if present.issuperset(RUNNER_COLUMNS):
        return "runners"
    return "long"


def apply_format(df: pd.DataFrame, name: str, given: dict[str, str | None]) -> Recognised:
    """The column options of format ``name`` (those the user gave win) and its frame.

    ``given`` maps each column option to the user's value, None where it was left at
    its default.
    """
    if name == "long":
        return Recognised(name, {k: v for k, v in given.items() if v is not None}, df, False,
                          None)
    columns = {k: given[k] or default for k, default in DEFAULTS[name].items()}
    frame = df
    runners: list[str] = []
    if name == "runners" and "runner" in df.columns:
        runners = sorted(str(r) for r in pd.unique(df["runner"].dropna()))
        if len(runners) > 1:
            model = columns["model"]
            if model in df.columns:
                names, suffix = df[model].astype(str), " @ " + df["runner"].astype(str)
                named = np.fromiter((n.endswith(s) for n, s in zip(names, suffix, strict=True)),
                                    dtype=bool, count=len(names))
                frame = df.assign(**{model: names.where(named, names + suffix)})
    error_scores = name == "tabarena" and columns["score"].startswith("metric_error")
    if name == "tabarena":
        what = ("scores from 'metric_error', lower is better for every metric" if error_scores
                else f"scores from {columns['score']!r}")
        note = (f"recognised TabArena's per-split results: models from {columns['model']!r}, "
                f"seeds from {columns['seed']!r}, {what}{_times_note(frame)}")
    else:
        both = (f"; rows of runners {runners!r} together, each model named '<model> @ <runner>'"
                if len(runners) > 1 else "")
        note = (f"recognised the runners' results table: seeds from {columns['seed']!r}"
                f"{both}{_times_note(frame)}")
    return Recognised(name, columns, frame, error_scores, note, runners=len(runners) > 1)


def _times_note(df: pd.DataFrame) -> str:
    found = [c for c in ("time_train_s", "time_infer_s", "total_ms") if c in df.columns]
    return f"; times kept ({', '.join(found)})" if found else ""


def time_columns(df: pd.DataFrame) -> dict[str, pd.Series]:
    """The per-row time columns the results carry (module doc), checked and computed."""
    out: dict[str, pd.Series] = {}
    for column in ("time_train_s", "time_infer_s"):
        if column in df.columns:
            out[column] = _times(df[column], column)
    if "time_infer_s" not in out and "total_ms" in df.columns:
        out["time_infer_s"] = _times(df["total_ms"], "total_ms") / 1000.0
    for kind in ("train", "infer"):
        seconds, per_1k = f"time_{kind}_s", f"time_{kind}_s_per_1K"
        if per_1k in df.columns:
            out[per_1k] = _times(df[per_1k], per_1k)
            continue
        rows = next((c for c in ROW_COUNTS[kind] if c in df.columns), None)
        if seconds in out and rows is not None:
            out[per_1k] = out[seconds] * 1000.0 / _rows(df[rows], rows)
    return out


def _numbers(values: pd.Series, column: str, what: str, where: str = "") -> np.ndarray:
    """The column as floats; a ValueError names the first cell that is not a number (text
    and booleans are not, even "1.5": nothing is coerced)."""
    if pd.api.types.is_bool_dtype(values.dtype):
        bad = np.ones(len(values), dtype=bool)
    elif pd.api.types.is_numeric_dtype(values.dtype):
        bad = np.zeros(len(values), dtype=bool)
    else:
        bad = ~np.fromiter((is_number(v) for v in values.to_numpy(dtype=object)), dtype=bool,
                           count=len(values))
    if bad.any():
        row = values.index[bad.argmax()]
        raise ValueError(f"{where}column {column!r} holds {what}, but has the non-numeric value "
                         f"{plain(values[row])!r} in row {plain(row)!r}")
    return values.to_numpy(dtype=float)


def _times(values: pd.Series, column: str) -> pd.Series:
    """A time column as float seconds (or ms): finite and ≥ 0, else a ValueError."""
    numbers = _numbers(values, column, "times")
    bad = ~np.isfinite(numbers) | (numbers < 0)
    if bad.any():
        row = values.index[bad.argmax()]
        raise ValueError(f"column {column!r} has the time {plain(values[row])!r} in row "
                         f"{plain(row)!r}; times must be finite numbers >= 0")
    return pd.Series(numbers, index=values.index)


def _rows(values: pd.Series, column: str) -> np.ndarray:
    """A row-count column: finite and > 0, else a ValueError."""
    numbers = _numbers(values, column, "row counts")
    bad = ~np.isfinite(numbers) | (numbers <= 0)
    if bad.any():
        row = values.index[bad.argmax()]
        raise ValueError(f"column {column!r} has the row count {plain(values[row])!r} in row "
                         f"{plain(row)!r}; per-1K times need row counts > 0")
    return numbers


def join_task_metadata(df: pd.DataFrame, dataset: str, metadata: pd.DataFrame) -> pd.DataFrame:
    """``df`` with TabArena's row counts per fold joined from its task metadata (module doc).

    ``dataset`` is the results' dataset column; ``metadata`` is either layout (module doc).
    The result carries the columns ``n_samples_train_per_fold`` and
    ``n_samples_test_per_fold``, one value per row of ``df`` (its dataset's); errors name
    the metadata's column, value and row.
    """
    if not isinstance(metadata, pd.DataFrame):
        raise TypeError(f"task_metadata must be a path or a pandas DataFrame, got "
                        f"{type(metadata).__name__}")
    if not metadata.index.is_unique:  # e.g. frames concatenated: rows named by position
        metadata = metadata.reset_index(drop=True)
    layout, key = _layout(metadata)
    names = metadata[key]
    blank = names.isna().to_numpy()
    if blank.any():
        what = "task" if layout == "split" else "dataset"
        raise ValueError(f"task_metadata column {key!r} has a missing {what} name in row "
                         f"{plain(names.index[blank.argmax()])!r}")
    names = names.astype(str)
    if layout == "split":
        table, said = _per_split_counts(metadata, key, names)
    else:
        table, said = _per_dataset_counts(metadata, key, names)
    wanted = df[dataset].astype(str)
    absent = sorted(set(wanted[df[dataset].notna()]) - set(table.index))
    if absent:
        more = f" and {len(absent) - 10} more" if len(absent) > 10 else ""
        known = sorted(table.index)
        raise ValueError(f"task_metadata has no row for dataset(s) "
                         f"{', '.join(repr(d) for d in absent[:10])}{more} of the results "
                         f"(column {dataset!r}); its column {key!r} lists {known[:10]!r}"
                         f"{' …' if len(known) > 10 else ''}{_other_name(metadata, key, absent)}")
    out = {}
    for column in METADATA_COUNTS:
        joined = pd.Series(table[column].reindex(wanted.to_numpy()).to_numpy(), index=df.index)
        if column in df.columns:
            given = _numbers(df[column], column, "row counts")
            differ = given != joined.to_numpy()
            if differ.any():
                row = df.index[differ.argmax()]
                raise ValueError(f"column {column!r} of the results has "
                                 f"{plain(df[column][row])!r} in row {plain(row)!r} (dataset "
                                 f"{wanted[row]!r}), but task_metadata says "
                                 f"{said(wanted[row], column)}; drop one of them")
        out[column] = joined
    return df.assign(**out)


def _layout(metadata: pd.DataFrame) -> tuple[str, str]:
    """``("split", key)`` or ``("dataset", key)``: which of TabArena's layouts ``metadata``
    has (the per-split one where it has the columns of both), and its name column."""
    columns = set(metadata.columns)
    lacking = {}
    for layout, keys, needed in (("split", SPLIT_KEYS, SPLIT_INDEX + SPLIT_COUNTS),
                                 ("dataset", METADATA_KEYS, METADATA_COUNTS)):
        key = next((c for c in keys if c in columns), None)
        absent = ([f"{keys[0]!r} (or {keys[1]!r})"] if key is None else []) + [
            repr(c) for c in needed if c not in columns]
        if not absent:
            return layout, key
        lacking[layout] = ", ".join(absent)
    raise ValueError(f"task_metadata has neither layout of TabArena's task metadata: as one row "
                     f"per dataset it lacks the column(s) {lacking['dataset']}; as one row per "
                     f"split (TabArena's <suite>_tasks_metadata.csv) it lacks "
                     f"{lacking['split']}; its columns are "
                     f"{[str(c) for c in metadata.columns]!r}")


def _counts(metadata: pd.DataFrame, column: str, names: pd.Series, what: str) -> pd.Series:
    """A count column of the task metadata as floats > 0, else a ValueError."""
    values = metadata[column]
    numbers = _numbers(values, column, "row counts", where="task_metadata ")
    bad = ~np.isfinite(numbers) | (numbers <= 0)
    if bad.any():
        row = values.index[bad.argmax()]
        raise ValueError(f"task_metadata column {column!r} has the row count "
                         f"{plain(values[row])!r} in row {plain(row)!r} ({what} "
                         f"{names[row]!r}); per-1K times need row counts > 0")
    return pd.Series(numbers, index=metadata.index)


def _per_dataset_counts(metadata: pd.DataFrame, key: str, names: pd.Series):
    """One row per dataset: its counts as given (each dataset's rows must agree)."""
    table = pd.DataFrame({"name": names, **{c: _counts(metadata, c, names, "dataset")
                                            for c in METADATA_COUNTS}})
    for column in METADATA_COUNTS:
        spread = table.groupby("name", sort=False)[column].nunique()
        if (spread > 1).any():
            name = spread.index[(spread > 1).to_numpy().argmax()]
            rows = table.index[table["name"] == name]
            shown = ", ".join(f"{plain(metadata.loc[r, column])!r} (row {plain(r)!r})"
                              for r in rows)
            raise ValueError(f"task_metadata lists dataset {name!r} (column {key!r}) more than "
                             f"once with different {column!r}: {shown}; one count per dataset")
    table = table.drop_duplicates("name")
    source = pd.Series(table.index, index=table["name"].to_numpy())

    def said(name: str, column: str) -> str:
        return (f"{plain(metadata.loc[source[name], column])!r} in its row "
                f"{plain(source[name])!r}")

    return table.set_index("name"), said


def _per_split_counts(metadata: pd.DataFrame, key: str, names: pd.Series):
    """One row per split: each task's counts are the means over its splits of
    ``num_instances_train`` / ``num_instances_test``, as TabArena's ``LeaderboardReporter``
    derives them; a split given twice must have the same counts both times."""
    table = pd.DataFrame({"name": names}, index=metadata.index)
    for column in SPLIT_INDEX:
        values = metadata[column]
        numbers = _numbers(values, column, "split indices", where="task_metadata ")
        bad = ~np.isfinite(numbers)
        if bad.any():
            row = values.index[bad.argmax()]
            raise ValueError(f"task_metadata column {column!r} has {plain(values[row])!r} in "
                             f"row {plain(row)!r} (task {names[row]!r}); every split row needs "
                             f"its 'repeat' and 'fold'")
        table[column] = numbers
    for column in SPLIT_COUNTS:
        table[column] = _counts(metadata, column, names, "task")
    split = ["name", *SPLIT_INDEX]
    for column in SPLIT_COUNTS:
        spread = table.groupby(split, sort=False)[column].transform("nunique").to_numpy()
        if (spread > 1).any():
            first = table.index[spread.argmax()]
            rows = table.index[(table[split] == table.loc[first, split]).all(axis=1)]
            shown = ", ".join(f"{plain(metadata.loc[r, column])!r} (row {plain(r)!r})"
                              for r in rows)
            raise ValueError(f"task_metadata lists split repeat "
                             f"{plain(metadata.loc[first, 'repeat'])!r}, fold "
                             f"{plain(metadata.loc[first, 'fold'])!r} of task "
                             f"{names[first]!r} (column {key!r}) more than once with different "
                             f"{column!r}: {shown}; one row per split")
    table = table.drop_duplicates(split)
    grouped = table.groupby("name", sort=False)[list(SPLIT_COUNTS)]
    low, high, splits = grouped.min(), grouped.max(), grouped.size()
    counts = grouped.mean().where(low != high, low)  # splits that agree: their count exactly
    counts.columns = list(METADATA_COUNTS)

    def said(name: str, column: str) -> str:
        given = SPLIT_COUNTS[METADATA_COUNTS.index(column)]
        return (f"{plain(counts.loc[name, column])!r}, the mean of {given!r} over the "
                f"{plain(splits[name])!r} split(s) of that task")

    return counts, said


def _other_name(metadata: pd.DataFrame, key: str, absent: list[str]) -> str:
    """A hint where a missing dataset is in the per-split layout's ``dataset_name``."""
    if key != SPLIT_KEYS[0] or SPLIT_KEYS[1] not in metadata.columns:
        return ""
    other = metadata[SPLIT_KEYS[1]].astype(str)
    found = next((d for d in absent if (other == d).any()), None)
    if found is None:
        return ""
    task = metadata.loc[other.index[(other == found).to_numpy().argmax()], key]
    return (f"; {found!r} is in its column {SPLIT_KEYS[1]!r} (task {plain(task)!r}), but "
            f"TabArena matches the results' dataset to {key!r}")
