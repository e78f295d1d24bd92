"""Loading a long score table into a :class:`~arenalite.benchmark.Benchmark`.

Flow: check the options → validate columns and values → resolve each dataset's
metric and direction → check completeness → normalize (:mod:`arenalite.normalize`)
→ Benchmark. Bad input raises a ``TypeError``/``ValueError`` naming the column (or
option), the offending value and the row label; nothing is dropped or coerced
silently.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from os import PathLike
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .benchmark import Benchmark, BenchmarkGroup
from .formats import apply_format, join_task_metadata, recognise, time_columns
from .normalize import normalize
from .params import check_bool, is_number, plain
from .registry import DIRECTIONS, chance_level, get_metric, known_metrics

COLUMN_DEFAULTS = {"model": "model", "dataset": "dataset", "metric": "metric", "score": "score",
                   "seed": None}
ERROR_WORDS = ("error", "loss", "regret")
"""A score column whose name holds one of these (or the word "err") is named like an error."""
#: separators a one-column read by comma is retried with, when its header holds exactly one
SEPARATORS = (";", "\t", "|")


class LoadNote(UserWarning):
    """One line saying what :func:`load_df` recognised or decided for you: a results format,
    or an explicit direction that overrides the metric registry."""


def load_csv(
    path: str | PathLike,
    *,
    encoding: str | None = None,
    sep: str | None = None,
    model: str = "model",
    dataset: str = "dataset",
    metric: str = "metric",
    score: str = "score",
    seed: str | None = None,
    metric_type_bounds: Mapping[str, tuple[Any, Any]] | None = None,
    norm_ref_low: Any = None,
    norm_ref_high: Any = None,
    metric_direction: Mapping[str, str] | None = None,
    drop_incomplete: bool = False,
    condition_col: str | None = None,
    format: str | None = None,
    task_metadata: str | PathLike | pd.DataFrame | None = None,
) -> Benchmark | BenchmarkGroup:
    """Read a long-format CSV and load it like :func:`load_df` (same keywords after ``sep``).

    ``encoding`` is the file's text encoding (default UTF-8); ``sep`` its separator. With
    ``sep=None`` a file that reads as one column by comma is read again by the one of
    ``;``, tab or ``|`` its header holds (a European spreadsheet's CSV); anything else
    that reads as one column is an error naming ``sep``. A wrong encoding, a directory
    or an empty file are errors naming the file.
    """
    frame = read_table(path, encoding=encoding, sep=sep)
    return load_df(frame, model=model, dataset=dataset, metric=metric, score=score, seed=seed,
                   metric_type_bounds=metric_type_bounds, norm_ref_low=norm_ref_low,
                   norm_ref_high=norm_ref_high, metric_direction=metric_direction,
                   drop_incomplete=drop_incomplete, condition_col=condition_col,
                   format=format, task_metadata=task_metadata)


def read_table(path: str | PathLike, *, encoding: str | None = None,
               sep: str | None = None) -> pd.DataFrame:
    """The CSV file ``path`` as a DataFrame, with errors that name the file and the fix."""
    name = str(path)
    if Path(path).is_dir():
        inside = sorted(p.name for p in Path(path).glob("*.csv"))[:5]
        holds = f" (it holds {', '.join(inside)})" if inside else ""
        raise ValueError(f"{name!r} is a directory, not a CSV file{holds}; give the path of "
                         "the results CSV file")

    def read(separator: str) -> pd.DataFrame:
        try:
            return pd.read_csv(path, encoding=encoding, sep=separator)
        except pd.errors.EmptyDataError as err:
            raise ValueError(f"{name!r} is empty: no header row and no data") from err
        except UnicodeDecodeError as err:
            byte = err.object[err.start:err.start + 1].hex()
            raise ValueError(f"{name!r} is not {err.encoding} text (byte 0x{byte} at position "
                             f"{err.start}); pass the file's encoding with encoding=<name>, "
                             "e.g. latin-1 or cp1252") from err
        except LookupError as err:
            raise ValueError(f"encoding={encoding!r} is not a text encoding Python knows "
                             f"({err}); e.g. utf-8, latin-1 or cp1252") from err

    frame = read(sep or ",")
    if sep is None and frame.shape[1] == 1:
        header = str(frame.columns[0])
        found = [c for c in SEPARATORS if c in header]
        if len(found) == 1:
            frame = read(found[0])
    if frame.shape[1] == 1:
        raise ValueError(f"{name!r} reads as one column, {str(frame.columns[0])!r}: its "
                         f"separator is not {sep or ','!r}; pass it with sep=<character>, "
                         "e.g. ';' or a tab")
    return frame


def load_df(
    df: pd.DataFrame,
    *,
    model: str = "model",
    dataset: str = "dataset",
    metric: str = "metric",
    score: str = "score",
    seed: str | None = None,
    metric_type_bounds: Mapping[str, tuple[Any, Any]] | None = None,
    norm_ref_low: Any = None,
    norm_ref_high: Any = None,
    metric_direction: Mapping[str, str] | None = None,
    drop_incomplete: bool = False,
    condition_col: str | None = None,
    format: str | None = None,
    task_metadata: str | PathLike | pd.DataFrame | None = None,
) -> Benchmark | BenchmarkGroup:
    """Load a long table (one row per model, dataset[, seed]) into a Benchmark.

    Column names are mapped by ``model``/``dataset``/``metric``/``score``/``seed``.
    With ``seed`` every per-seed row is kept (IQM, Elo) and the score matrix holds
    the seed means. Normalization: see :mod:`arenalite.normalize`. Directions come
    from ``metric_direction`` ({dataset or metric name: "min"|"max"}; a dataset's key wins
    over its metric's) or else the metric registry; an explicit direction against the
    registry is noted in one line, and a warning says when the data suggest the
    direction is wrong (an error-named score column read as higher-is-better, or most
    datasets of a metric below its chance level). With ``condition_col`` the rows are
    split by that column into a :class:`BenchmarkGroup` of independently normalized
    Benchmarks.

    ``format``: "tabarena" (TabArena's per-split results), "runners" (the runners'
    results table) or "long"; None recognises the first two by their columns
    (:mod:`arenalite.formats`) and says so in one line. Train and inference times in
    the results (``time_train_s``, ``time_infer_s``, the runners' ``total_ms``) are kept
    as columns of ``long_``, with TabArena's per-1K-rows forms.

    ``task_metadata``: TabArena's task metadata (a CSV path or a DataFrame), which supplies
    the rows of the per-1K times, in either of its layouts
    (:func:`arenalite.formats.join_task_metadata`): one row per split, as the ``tabarena``
    package ships it (``tabarena_task_name`` joined to the dataset column, a task's rows the
    means over its splits of ``num_instances_train`` / ``num_instances_test``), or one row
    per dataset (``name``, else ``dataset``, with ``n_samples_train_per_fold`` /
    ``n_samples_test_per_fold``). Without it the rows come from the results' own columns
    ``n_samples_train_per_fold`` / ``n_samples_test_per_fold``, or ``n_train`` / ``n_test``.
    """
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"df must be a pandas DataFrame, got {type(df).__name__}; "
                        "use load_csv(path) to read a file")
    chosen = {"model": model, "dataset": dataset, "metric": metric, "score": score, "seed": seed}
    found = apply_format(df, recognise(df, format), {
        k: (None if v == COLUMN_DEFAULTS[k] else v) for k, v in chosen.items()})
    if found.note:
        warnings.warn(found.note, LoadNote, stacklevel=2)
    df = found.frame
    model, dataset, metric, score = (found.columns.get(k, COLUMN_DEFAULTS[k])
                                     for k in ("model", "dataset", "metric", "score"))
    seed = found.columns.get("seed")
    check_bool(drop_incomplete, "drop_incomplete")
    for option, value in (("metric_type_bounds", metric_type_bounds),
                          ("metric_direction", metric_direction)):
        if value is not None and not isinstance(value, Mapping):
            raise TypeError(f"{option} must be a dict or None, got {type(value).__name__} "
                            f"{value!r}")
    if metric_type_bounds is not None and (norm_ref_low is not None or norm_ref_high is not None):
        raise ValueError("metric_type_bounds cannot be combined with norm_ref_low or "
                         "norm_ref_high; give the bounds one way only")
    columns = {"model": model, "dataset": dataset, "metric": metric, "score": score}
    if seed is not None:
        columns["seed"] = seed
    if condition_col is not None:
        columns["condition_col"] = condition_col
    _require_columns(df, columns)
    if len(df) == 0:
        raise ValueError("the score frame is empty: no rows to load")
    if task_metadata is not None:
        df = join_task_metadata(df, dataset, _task_metadata_frame(task_metadata))

    if metric_type_bounds is not None:
        _check_bound_metrics(metric_type_bounds, df[metric])
    all_datasets = {str(d) for d in df[dataset].dropna().unique()}
    all_metrics = {str(m) for m in df[metric].dropna().unique()}
    direction = _check_direction_option(metric_direction, all_datasets, all_metrics)
    for option, ref in (("norm_ref_low", norm_ref_low), ("norm_ref_high", norm_ref_high)):
        _check_dict_keys(ref, option, all_datasets)

    options = dict(model=model, dataset=dataset, metric=metric, score=score, seed=seed,
                   metric_type_bounds=metric_type_bounds, norm_ref_low=norm_ref_low,
                   norm_ref_high=norm_ref_high, metric_direction=direction,
                   drop_incomplete=bool(drop_incomplete), error_scores=found.error_scores,
                   runners=found.runners)
    if condition_col is None:
        return _load_one(df, **options)
    _no_missing(df[condition_col], condition_col)
    labels = list(pd.unique(df[condition_col]))
    if len(labels) < 2:
        raise ValueError(f"column {condition_col!r} (condition_col) needs at least two condition "
                         f"labels, found only {labels!r}; load without condition_col instead")
    return BenchmarkGroup(
        {label: _load_one(df[df[condition_col] == label], **options) for label in labels},
        condition_col,
    )


def _task_metadata_frame(given: Any) -> pd.DataFrame:
    """``task_metadata=`` as a DataFrame: the frame itself, or the CSV file it names."""
    if isinstance(given, pd.DataFrame):
        return given
    if not isinstance(given, (str, PathLike)):
        raise TypeError(f"task_metadata must be a path to a CSV file or a pandas DataFrame, "
                        f"got {type(given).__name__}")
    if not Path(given).is_dir() and not Path(given).is_file():
        raise FileNotFoundError(f"task_metadata file {str(given)!r} not found")
    return read_table(given)


def _require_columns(df: pd.DataFrame, columns: dict[str, Any]) -> None:
    for option, name in columns.items():
        if name not in df.columns:
            raise ValueError(f"column {name!r} (given as {option}=) not found in the frame; "
                             f"its columns are {list(df.columns)!r}{_wide_hint(df, columns)}")


def _wide_hint(df: pd.DataFrame, columns: dict[str, Any]) -> str:
    """A hint to melt ``df`` when it looks wide: at least two number columns that are
    none of the named ones, and neither the dataset nor the score column present."""
    if columns["dataset"] in df.columns or columns["score"] in df.columns:
        return ""
    numbers = [c for c in df.columns if c not in columns.values()
               and pd.api.types.is_numeric_dtype(df[c].dtype)
               and not pd.api.types.is_bool_dtype(df[c].dtype)]
    if len(numbers) < 2:
        return ""
    ids = [c for c in df.columns if c not in numbers]
    shown = ", ".join(repr(str(c)) for c in numbers[:4]) + (", …" if len(numbers) > 4 else "")
    return (f". This looks like a wide table (a column of scores per dataset: {shown}); "
            f"arenalite needs a long one, one row per model and dataset. Melt it first: "
            f"df.melt(id_vars={[str(c) for c in ids]!r}, var_name='dataset', "
            "value_name='score'), then add a 'metric' column")


def _check_bound_metrics(bounds: Mapping[str, Any], metrics: pd.Series) -> None:
    """Every key of ``metric_type_bounds`` is a metric of the data or a registered one
    (a configuration may list metrics a suite lacks); anything else is a typo."""
    present = {str(m).lower() for m in metrics.dropna().unique()}
    unknown = sorted(str(k) for k in bounds if str(k).lower() not in present
                     and get_metric(str(k)) is None)
    if unknown:
        raise ValueError(f"metric_type_bounds names metric(s) {unknown!r} that are neither in "
                         f"the data nor registered; metrics in the data: {sorted(present)!r}; "
                         f"registered: {known_metrics()!r}")


def _check_direction_option(given: Mapping[str, str] | None, datasets: set[str],
                            metrics: set[str]) -> dict[str, str]:
    """``metric_direction`` with string keys, each a dataset or a metric of the data."""
    out = {str(k): v for k, v in (given or {}).items()}
    for key, value in out.items():
        if value not in DIRECTIONS:
            raise ValueError(f"metric_direction[{key!r}] must be 'max' or 'min', got {value!r}")
    lowered = {m.lower() for m in metrics}
    unknown = sorted(k for k in out if k not in datasets and k.lower() not in lowered)
    if unknown:
        raise ValueError(f"metric_direction names {unknown!r}, neither a dataset nor a metric "
                         f"of the data; datasets are {sorted(datasets)!r}, metrics "
                         f"{sorted(metrics)!r}")
    return out


def _check_dict_keys(ref: Any, option: str, datasets: set[str]) -> None:
    if isinstance(ref, (Mapping, pd.Series)):
        unknown = sorted(str(k) for k in ref.keys() if str(k) not in datasets)
        if unknown:
            raise ValueError(f"{option} names dataset(s) {unknown!r} that are not in the data; "
                             f"datasets are {sorted(datasets)!r}")


def _no_missing(values: pd.Series, column: str) -> None:
    missing = values.isna().to_numpy()
    if missing.any():
        raise ValueError(f"column {column!r} has a missing value in row "
                         f"{plain(values.index[missing.argmax()])!r}")


def _load_one(
    df: pd.DataFrame,
    *,
    model: str,
    dataset: str,
    metric: str,
    score: str,
    seed: str | None,
    metric_type_bounds: Mapping[str, tuple[Any, Any]] | None,
    norm_ref_low: Any,
    norm_ref_high: Any,
    metric_direction: dict[str, str],
    drop_incomplete: bool,
    error_scores: bool,
    runners: bool,
) -> Benchmark:
    columns = {"model": model, "dataset": dataset, "metric": metric, "score": score}
    if seed is not None:
        columns["seed"] = seed
    for key, name in columns.items():
        if key != "score":
            _no_missing(df[name], name)
    long = pd.DataFrame({
        "model": df[model].astype(str),
        "dataset": df[dataset].astype(str),
        **({"seed": df[seed]} if seed is not None else {}),
        "metric": df[metric].astype(str),
        "score": numeric_scores(df[score], score),
        **time_columns(df),
        **({"runner": df["runner"].astype(str)} if runners else {}),
    }, index=df.index)

    metrics = _one_metric_per_dataset(long, metric)
    _no_duplicates(long, columns)
    directions, explicit = _directions(metrics, metric_direction, metric_type_bounds,
                                       error_scores)
    _warn_suspicious_directions(long, metrics, directions, explicit, score)
    long = _complete(long, drop_incomplete)
    long, low, high = normalize(long, directions=directions, metrics=metrics,
                                metric_type_bounds=metric_type_bounds,
                                norm_ref_low=norm_ref_low, norm_ref_high=norm_ref_high)
    return Benchmark(long, directions=directions, metrics=metrics, has_seeds=seed is not None,
                     norm_low=low, norm_high=high)


def numeric_scores(values: pd.Series, column: str) -> pd.Series:
    """``values`` as float, or a ValueError naming the first non-numeric/non-finite row.

    In an object column (a CSV column that pandas could not parse as numbers) the
    message names the first value that is not a number even as text, e.g. ``'abc'``
    in row 5 rather than the numeric text ``'0.959'`` in row 0; a column of numbers
    stored as text is an error of its own (nothing is coerced silently).
    """
    if pd.api.types.is_bool_dtype(values.dtype):
        raise ValueError(f"column {column!r} holds booleans (dtype {values.dtype}); scores must "
                         f"be numbers, e.g. {plain(values.iloc[0])!r} in row "
                         f"{plain(values.index[0])!r}")
    if not pd.api.types.is_numeric_dtype(values.dtype):
        cells = values.to_numpy(dtype=object)
        number = _each(cells, is_number)
        if not number.all():
            is_text = _each(cells, lambda v: isinstance(v, str))
            text = pd.Series(np.where(is_text, cells, None), dtype=object)
            is_numeric_text = is_text & pd.to_numeric(text, errors="coerce").notna().to_numpy()
            bad = ~(number | is_numeric_text)
            row = values.index[(bad if bad.any() else ~number).argmax()]
            if bad.any():
                raise ValueError(f"column {column!r} has a non-numeric value "
                                 f"{plain(values[row])!r} in row {plain(row)!r}")
            raise ValueError(f"column {column!r} holds numbers stored as text, e.g. "
                             f"{plain(values[row])!r} in row {plain(row)!r}; convert the column "
                             "with pd.to_numeric before loading")
    numeric = values.astype(float)
    nonfinite = ~np.isfinite(numeric.to_numpy())
    if nonfinite.any():
        row = values.index[nonfinite.argmax()]
        raise ValueError(f"column {column!r} has a non-finite value {plain(values[row])!r} in "
                         f"row {plain(row)!r}; scores must be finite numbers")
    return numeric


def _each(cells: np.ndarray, test: Any) -> np.ndarray:
    """Boolean mask of ``test(cell)`` over an object array."""
    return np.fromiter((test(v) for v in cells), dtype=bool, count=len(cells))


def _one_metric_per_dataset(long: pd.DataFrame, column: str) -> pd.Series:
    counts = long.groupby("dataset", sort=True)["metric"].nunique()
    if (counts > 1).any():
        ds = counts.index[(counts > 1).to_numpy().argmax()]
        rows = long[long["dataset"] == ds]
        first = rows.drop_duplicates("metric")
        shown = ", ".join(f"{m!r} (row {plain(r)!r})" for r, m in first["metric"].items())
        raise ValueError(f"dataset {ds!r} has more than one metric in column {column!r}: {shown}; "
                         "one metric per dataset is allowed")
    metrics = long.groupby("dataset", sort=True)["metric"].first()
    metrics.name = "metric"
    return metrics


def _no_duplicates(long: pd.DataFrame, columns: dict[str, str]) -> None:
    keys = [k for k in ("model", "dataset", "seed") if k in long.columns]
    dup = long.duplicated(keys, keep=False).to_numpy()
    if not dup.any():
        return
    first = long[dup].iloc[0]
    where = ", ".join(f"{columns[k]}={plain(first[k])!r}" for k in keys)
    rows = [plain(r) for r in long.index[dup][:5]]
    hint = "" if "seed" in keys else "; if these are repeated runs, pass seed=<column>"
    raise ValueError(f"duplicate rows for ({where}) in rows {rows!r}; one row per "
                     f"({', '.join(columns[k] for k in keys)}) is allowed{hint}")


def _directions(
    metrics: pd.Series,
    given: dict[str, str],
    metric_type_bounds: Mapping[str, Any] | None,
    error_scores: bool,
) -> tuple[pd.Series, pd.Series]:
    """Each dataset's direction, and whether it was given explicitly.

    Order: the dataset's key in ``given``, its metric's key (case-insensitive), "min" when
    the format's scores are errors, the registry, else "max" with a warning. An explicit
    direction against the registry is noted in one line.
    """
    by_metric = {k.lower(): v for k, v in given.items()}
    out, explicit, unknown, overridden = {}, {}, [], {}
    listed = {str(k).lower() for k in (metric_type_bounds or {})}
    for ds, name in metrics.items():
        spec = get_metric(name)
        if spec is None and metric_type_bounds is not None and name.lower() not in listed:
            raise ValueError(f"Unknown metric '{name}' (dataset {ds!r}) is neither registered "
                             "nor listed in metric_type_bounds; add it there or register_metric it")
        key = ds if ds in given else name.lower() if name.lower() in by_metric else None
        explicit[ds] = key is not None
        if key is not None:
            out[ds] = given[ds] if key == ds else by_metric[key]
            if spec is not None and out[ds] != spec.direction:
                overridden.setdefault(repr(key) if key == ds else repr(name), out[ds])
        elif error_scores:
            out[ds] = "min"
        elif spec is not None:
            out[ds] = spec.direction
        else:
            out[ds] = "max"
            unknown.append(name)
    if overridden:
        shown = ", ".join(f"{k} as {_BETTER[v]}" for k, v in overridden.items())
        warnings.warn(f"metric_direction: read {shown}, against the metric registry; "
                      "improvability measures such scores from 0 (TabArena's metric_error "
                      "convention)", LoadNote, stacklevel=4)
    if unknown:
        names = sorted(set(unknown))
        warnings.warn(f"Unknown metric '{names[0]}' treated as higher-is-better (unknown metrics: "
                      f"{names!r}); pass metric_direction={{metric: 'min'}} or register_metric "
                      "to say otherwise", UserWarning, stacklevel=4)
    index = metrics.index
    return (pd.Series(out, name="direction").loc[index],
            pd.Series(explicit, name="explicit").loc[index])


_BETTER = {"max": "higher-is-better", "min": "lower-is-better"}


def _error_named(column: str) -> bool:
    """Whether a score column's name reads like an error or a loss (``metric_error``, ``err``)."""
    name = column.lower()
    words = set(filter(None, "".join(c if c.isalnum() else " " for c in name).split()))
    return any(word in name for word in ERROR_WORDS) or "err" in words


def _warn_suspicious_directions(long: pd.DataFrame, metrics: pd.Series, directions: pd.Series,
                                explicit: pd.Series, score: str) -> None:
    """Warn (what is suspected, and the fix) when the directions look wrong for the data.

    An error-named score column read as higher-is-better from the registry; or most
    datasets of a metric with a chance level (ROC AUC 0.5) on the wrong side of it, by
    their median score over every row.
    """
    if _error_named(score):
        read_max = (directions == "max") & ~explicit
        if read_max.any():
            names = sorted(set(metrics[read_max]))
            warnings.warn(f"score column {score!r} is named like an error or a loss, but "
                          f"metric(s) {names!r} are read as higher-is-better (the metric "
                          f"registry's direction) on {int(read_max.sum())} dataset(s); if lower "
                          f"is better, pass metric_direction={{{names[0]!r}: 'min'}} (command "
                          f"line: --direction {names[0]}=min)", UserWarning, stacklevel=4)
    median = long.groupby("dataset", sort=True)["score"].median()
    for name in sorted(set(metrics)):
        spec = get_metric(name)
        on = metrics.index[metrics == name]
        if spec is None or directions[on].nunique() != 1:
            continue
        direction = directions[on[0]]
        chance = chance_level(spec, direction)
        if chance is None:
            continue
        values = median.loc[on].to_numpy()
        worse = values < chance if direction == "max" else values > chance
        if 2 * worse.sum() > len(on):
            side = "below" if direction == "max" else "above"
            other = "min" if direction == "max" else "max"
            warnings.warn(f"{int(worse.sum())} of {len(on)} dataset(s) of metric {name!r} score "
                          f"{side} its chance level {chance:g} (median per dataset) read as "
                          f"{_BETTER[direction]}: the scores may run the other way (e.g. "
                          f"errors, 1 − AUC); if so, pass metric_direction={{{name!r}: "
                          f"{other!r}}} (command line: --direction {name}={other})",
                          UserWarning, stacklevel=4)


def _complete(long: pd.DataFrame, drop_incomplete: bool) -> pd.DataFrame:
    model_codes, models = pd.factorize(long["model"], sort=True)  # hashing, not a string sort
    dataset_codes, datasets = pd.factorize(long["dataset"], sort=True)
    models, datasets = models.to_numpy(dtype=str), datasets.to_numpy(dtype=str)
    cells = np.zeros((models.size, datasets.size), dtype=bool)
    cells[model_codes, dataset_codes] = True
    if cells.all():
        return long
    rows, cols = np.nonzero(~cells)
    names = list(zip(models[rows].tolist(), datasets[cols].tolist(), strict=True))
    if not drop_incomplete:
        shown = ", ".join(f"({m!r}, {d!r})" for m, d in names[:10])
        more = f" and {len(names) - 10} more" if len(names) > 10 else ""
        raise ValueError(f"missing (model, dataset) cells: {shown}{more}; pass "
                         "drop_incomplete=True to drop the models that miss datasets")
    incomplete = sorted({m for m, _ in names})
    kept = long[~long["model"].isin(incomplete)]
    if kept.empty:
        raise ValueError("drop_incomplete=True would drop every model: no model has a score on "
                         f"all datasets (incomplete: {incomplete!r})")
    warnings.warn(f"drop_incomplete=True: dropped models {incomplete!r}, which miss datasets",
                  UserWarning, stacklevel=4)
    return kept
