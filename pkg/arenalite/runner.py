"""The Python ("server") runner: every model on every persisted split of every dataset.

``run`` turns (datasets, persisted splits, model dicts) into the long results table of
docs/ARCHITECTURE.md, one row per model × dataset × split, which ``load_df`` reads
directly (``seed="seed"`` makes each split a match day). Work is cut into one lazy task
per (dataset, model, split) — names and a split index, the rows cut when it runs — and
run by :mod:`arenalite.tournament.execute`: in process, on a process pool or on Dask;
the table comes back in task order whichever executor ran it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import Executor
from typing import Any

import numpy as np
import pandas as pd

from . import datasets as bundled
from . import splits as split_io
from .models import check_model, model_label
from .progress import Progress
from .results_table import (  # noqa: F401 - the results table's names, as before
    BASE_COLUMNS,
    COLUMNS,
    GPU_COLUMNS,
    LAYER_COLUMNS,
    METRIC_OF_TASK,
    TIE_TOLERANCE,
    device_description,
    layer_times,
    merge_near_ties,
    task_metric,
)


def _datasets(datasets: Mapping[str, bundled.Dataset] | Iterable[str]) -> dict:
    if isinstance(datasets, str):
        raise TypeError("datasets must be a mapping name → Dataset or a list of names, "
                        f"got the string {datasets!r}")
    if isinstance(datasets, Mapping):
        out = dict(datasets)
        for name, ds in out.items():
            if not isinstance(ds, bundled.Dataset):
                raise TypeError(f"datasets[{name!r}] must be an arenalite.datasets.Dataset, "
                                f"got {type(ds).__name__}")
    else:
        out = {name: bundled.load(name) for name in datasets}
    if not out:
        raise ValueError("datasets is empty: nothing to run")
    return out


def _features(ds: bundled.Dataset, excluded: Sequence[str],
              name: str) -> np.ndarray | pd.DataFrame:
    unknown = [c for c in excluded if c not in ds.feature_names]
    if unknown:
        raise ValueError(f"splits[{name!r}] excludes columns {unknown} that dataset {name!r} "
                         f"does not have")
    drop = set(excluded)
    keep = [i for i, c in enumerate(ds.feature_names) if c not in drop]
    if not keep:
        raise ValueError(f"splits[{name!r}] excludes every feature column of {name!r}")
    if isinstance(ds.X, pd.DataFrame):  # a table's typed columns, encoded per model
        return ds.X.iloc[:, keep]
    return np.asarray(ds.X)[:, keep]


def _check_split(name: str, ds: bundled.Dataset, s: Any) -> None:
    split_io.validate(s, source=f"splits[{name!r}]")
    if s["dataset"] is not None and s["dataset"] != name:
        raise ValueError(f"splits[{name!r}] is for dataset {s['dataset']!r}")
    if s["n_rows"] != ds.n_rows:
        raise ValueError(f"splits[{name!r}] has n_rows={s['n_rows']} but dataset {name!r} has "
                         f"{ds.n_rows} rows")
    if s["task"] != ds.task:
        raise ValueError(f"splits[{name!r}] has task {s['task']!r} but dataset {name!r} is "
                         f"{ds.task!r}")


def boards_and_tasks(datasets: Mapping[str, bundled.Dataset] | Iterable[str],
                     splits: Mapping[str, dict], models: Sequence[dict]) -> tuple[Any, ...]:
    """Validate the inputs of :func:`run`; returns (boards by dataset name, lazy tasks in
    dataset, model, split order, models by label). A task is names and a split index:
    its rows are cut when it runs (:mod:`arenalite.tournament.tasks`)."""
    from .tournament.entrants import RegistryModel
    from .tournament.tasks import Board, Task

    ds_map = _datasets(datasets)
    if not isinstance(splits, Mapping):
        raise TypeError(f"splits must be a mapping dataset name → split dict, "
                        f"got {type(splits).__name__}")
    missing = [n for n in ds_map if n not in splits]
    extra = [n for n in splits if n not in ds_map]
    if missing or extra:
        raise ValueError(f"splits must have one entry per dataset: missing {missing}, "
                         f"unknown {extra}")
    if isinstance(models, dict) or not isinstance(models, Sequence) or not models:
        raise TypeError("models must be a non-empty list of model dicts such as "
                        "[{'name': 'knn', 'k': 5}]")
    checked = [RegistryModel(check_model(m)) for m in models]
    labels = [model_label(m) for m in models]
    dup = sorted({x for x in labels if labels.count(x) > 1})
    if dup:
        raise ValueError(f"models have duplicate labels {dup}; give them distinct 'label' keys")
    for model, label in zip(checked, labels, strict=True):
        model.label = label
    boards, tasks = {}, []
    for name, ds in ds_map.items():
        s = splits[name]
        _check_split(name, ds, s)
        entries = tuple((e["id"], int(e["repeat"]), int(e["fold"]),
                         np.asarray(e["train"], dtype=np.intp),
                         np.asarray(e["test"], dtype=np.intp)) for e in s["splits"])
        boards[name] = Board(name, ds.task, ds.n_classes, _features(ds, s["excluded_columns"],
                                                                    name),
                             np.asarray(ds.y), entries, int(s["n_folds"]))
        tasks += [Task(name, label, i, e[0]) for label in labels
                  for i, e in enumerate(entries)]
    return boards, tasks, {m.label: m for m in checked}


def run(datasets: Mapping[str, bundled.Dataset] | Iterable[str], splits: Mapping[str, dict],
        models: Sequence[dict], executor: Executor | None = None,
        progress: bool | None = None) -> pd.DataFrame:
    """Run every model on every split of every dataset; returns the results table.

    ``datasets``: mapping name → :class:`arenalite.datasets.Dataset`, or bundled names.
    ``splits``: mapping dataset name → persisted split dict (:mod:`arenalite.splits`).
    ``models``: model dicts (``{"name": "knn", "k": 5}``; an optional ``label`` names
    the model in the table). ``executor``: any ``concurrent.futures.Executor`` (a
    ``ProcessPoolExecutor`` runs as a pool of its size, each worker receiving each
    dataset once) or a Dask client; one lazy task per (dataset, model, split), its rows
    cut when it runs; None (the default) runs them in this process, the only way in
    Pyodide and on WASI, which start no processes. ``progress``: a progress bar on stderr
    when it is a terminal (False: never). Rows come in task order: dataset, model, split
    as given. A model's error is raised (:func:`arenalite.tournament` records it instead).
    """
    from .tournament.execute import execute

    boards, tasks, by_label = boards_and_tasks(datasets, splits, models)
    order = {task.key: i for i, task in enumerate(tasks)}
    rows: list[dict | None] = [None] * len(tasks)
    with Progress(len(tasks), "run", enabled=progress) as bar:
        for outcome in execute(tasks, boards.__getitem__, by_label, executor):
            if not outcome.ok:
                kind = {"ValueError": ValueError, "TypeError": TypeError}.get(
                    outcome.exception, RuntimeError)
                task = outcome.task
                raise kind(f"{task.model} on {task.table}, split {task.split_id}: "
                           f"{outcome.message}" if kind is RuntimeError else outcome.message)
            rows[order[outcome.task.key]] = outcome.row
            bar.update()
    return pd.DataFrame(rows, columns=COLUMNS)


def summarize(results: pd.DataFrame) -> pd.DataFrame:
    """Per dataset and model: mean over the K splits and its standard error sqrt(var/K).

    Columns: dataset, model, task, metric, n_folds, score, score_se, error, error_se,
    rows_per_s (mean). Needs K ≥ 2 splits per (dataset, model). Tables written before
    the GPU columns existed (:data:`BASE_COLUMNS` only) are accepted.
    """
    if not isinstance(results, pd.DataFrame):
        raise TypeError(f"results must be a DataFrame, got {type(results).__name__}")
    missing = [c for c in BASE_COLUMNS if c not in results.columns]
    if missing:
        raise ValueError(f"results is missing column(s) {missing} of the results table")
    by = ("dataset", "model")
    score = split_io.fold_summary_table(results, score="score", by=by)
    error = split_io.fold_summary_table(results, score="error", by=by)
    meta = results.groupby(list(by), sort=True).agg(
        task=("task", "first"), metric=("metric", "first"),
        rows_per_s=("rows_per_s", "mean")).reset_index()
    out = meta.merge(score.rename(columns={"mean": "score", "se": "score_se"}), on=list(by))
    out = out.merge(error.rename(columns={"mean": "error", "se": "error_se"})
                    .drop(columns="n_folds"), on=list(by))
    return out[["dataset", "model", "task", "metric", "n_folds", "score", "score_se", "error",
                "error_se", "rows_per_s"]]
