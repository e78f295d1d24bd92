"""Lazy tasks: a task is names and a split index; its rows are cut when it runs.

A :class:`Board` is one table as the models take it (features without the excluded
columns, target, task) with its split file's row indices. A worker receives each board
once (:mod:`.execute`) and then only :class:`Task` records, a few names each, so memory
follows the largest table plus one model's working set, whatever the number of splits
and models. :func:`play` runs one task and returns its results row or the failure:
an exception, or a bad output (a wrong shape, a non-finite value, probabilities that do
not sum to 1, a non-finite score).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .. import results_table as runner
from ..datasets import table as tables
from .entrants import Model

PROBABILITY_TOLERANCE = 1e-4
"""A row of class probabilities may miss 1 by this much (float32 models included)."""


@dataclass(frozen=True, eq=False)
class Board:
    """One table ready for its tasks: features X (n × F, a float matrix or typed columns),
    target y, task, classes, and each split's (id, repeat, fold, train rows, test rows)."""

    name: str
    task: str
    n_classes: int | None
    X: np.ndarray | pd.DataFrame
    y: np.ndarray
    splits: tuple[tuple[str, int, int, np.ndarray, np.ndarray], ...]
    n_folds: int

    @property
    def n_features(self) -> int:
        return int(self.X.shape[1])

    def rows(self, index: np.ndarray) -> np.ndarray | pd.DataFrame:
        return self.X.iloc[index] if isinstance(self.X, pd.DataFrame) else self.X[index]


def make_board(table: tables.Table, persisted: dict[str, Any]) -> Board:
    """The board of ``table`` under its split file (its excluded columns left out)."""
    ds = tables.to_dataset(table, drop=persisted.get("excluded_columns", ()))
    entries = tuple((e["id"], int(e["repeat"]), int(e["fold"]),
                     np.asarray(e["train"], dtype=np.intp), np.asarray(e["test"], dtype=np.intp))
                    for e in persisted["splits"])
    return Board(table.name, table.task, table.n_classes, ds.X, ds.y, entries,
                 int(persisted["n_folds"]))


@dataclass(frozen=True)
class Task:
    """One (table, model, split): names and the split's index in its board."""

    table: str
    model: str
    split: int
    split_id: str

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.table, self.model, self.split_id)


@dataclass(frozen=True)
class Outcome:
    """A played task: its results row, or the failure (kind, exception type, message)."""

    task: Task
    row: dict[str, Any] | None = None
    kind: str = ""
    exception: str = ""
    message: str = ""

    @property
    def ok(self) -> bool:
        return self.row is not None


class BadOutput(ValueError):
    """A model's output that cannot be scored."""


def check_output(output: Any, task: str, n_test: int, n_classes: int | None) -> np.ndarray:
    """The output as float64, or :class:`BadOutput` naming what is wrong with it."""
    try:
        out = np.asarray(output, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise BadOutput(f"the output is not numbers: {error}") from None
    shape = (n_test,) if task == "regression" else (n_test, n_classes)
    if out.shape != shape:
        raise BadOutput(f"the output has shape {out.shape}, expected {shape}")
    bad = ~np.isfinite(out)
    if bad.any():
        i = int(np.argwhere(bad)[0][0])
        raise BadOutput(f"the output has {int(bad.sum())} non-finite value(s), first in row "
                        f"{i}")
    if task != "regression":
        if (out < 0).any() or (out > 1).any():
            i = int(np.argwhere((out < 0) | (out > 1))[0][0])
            raise BadOutput(f"row {i}'s probabilities are not in [0, 1]")
        sums = out.sum(axis=1)
        off = np.abs(sums - 1.0) > PROBABILITY_TOLERANCE
        if off.any():
            i = int(np.argmax(off))
            raise BadOutput(f"the probabilities of {int(off.sum())} row(s) do not sum to 1 "
                            f"(row {i}: {sums[i]:.6g})")
    return out


def play(board: Board, model: Model, task: Task) -> Outcome:
    """Run ``model`` on one split of ``board``: its results row, or the failure."""
    split_id, repeat, fold, train, test = board.splits[task.split]
    try:
        output, t = model.predict_timed(board.rows(train), board.y[train], board.rows(test),
                                        board.task, board.n_classes)
        output = check_output(output, board.task, len(test), board.n_classes)
        score, error = runner.task_metric(board.task, board.y[test], output)
        if not (np.isfinite(score) and np.isfinite(error)):
            raise BadOutput(f"the score is not finite ({score!r})")
    except BadOutput as error:
        return Outcome(task, kind="bad output", exception=type(error).__name__,
                       message=str(error))
    except Exception as error:  # noqa: BLE001 - a model's failure is recorded, not raised
        return Outcome(task, kind="raised", exception=type(error).__name__,
                       message=str(error) or repr(error))
    floor_ms = time.get_clock_info("perf_counter").resolution * 1e3
    total = max(float(t["total"]), floor_ms)
    row = {"model": model.label, "dataset": board.name, "task": board.task,
           "metric": runner.METRIC_OF_TASK[board.task], "score": float(score),
           "error": float(error), "split_id": split_id, "repeat": repeat, "fold": fold,
           "seed": repeat * board.n_folds + fold, "n_train": len(train), "n_test": len(test),
           "runner": "python", "device": runner.device_description(),
           "embed_ms": float(t["embed"]), "layers_ms": float(sum(t["layers"])),
           "head_ms": float(t["head"]), "total_ms": total,
           "rows_per_s": len(test) / (total / 1e3),
           **dict.fromkeys(runner.GPU_COLUMNS, np.nan),
           "layer_times_ms": runner.layer_times(t["layers"]), "gpu_layer_times_ms": np.nan}
    return Outcome(task, row=row)
