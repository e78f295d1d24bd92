"""Benchmark the in-context models on the bundled datasets against a trivial baseline.

``python bench/bench_models.py [--repeats R]`` runs every model on the persisted
IID splits (R repeats × 3 folds) of each bundled dataset and prints, per dataset and
model, the task metric (ROC AUC / log loss / RMSE), accuracy for classification and
rows per second, next to the baseline measured on the same splits in the same run:
the training-fold class prior (majority-class accuracy) or the training-fold mean.
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

import arenalite.datasets as D
from arenalite.models import model_label, predict_timed
from arenalite.runner import METRIC_OF_TASK, task_metric
from arenalite.splits import make_splits

MODELS = [{"name": "knn", "k": 5}, {"name": "attention"}, {"name": "icl_transformer"}]


def baseline(y_train: np.ndarray, n_test: int, n_classes: int | None) -> np.ndarray:
    """Training prior for every test row (classification) or the training mean."""
    if n_classes is None:
        return np.full(n_test, y_train.mean())
    prior = np.bincount(y_train, minlength=n_classes) / len(y_train)
    return np.tile(prior, (n_test, 1))


def evaluate(name: str, repeats: int) -> list[dict]:
    """One row per (model or baseline, split) of a dataset."""
    ds = D.load(name)
    splits = make_splits(ds.n_rows, ds.task, y=None if ds.task == "regression" else ds.y,
                         dataset=name, n_repeats=repeats)
    rows = []
    for split in splits["splits"]:
        tr, te = np.asarray(split["train"]), np.asarray(split["test"])
        outputs = [("baseline (prior/mean)", baseline(ds.y[tr], len(te), ds.n_classes), None)]
        for model in MODELS:
            out, t = predict_timed(model, ds.X[tr], ds.y[tr], ds.X[te], ds.task, ds.n_classes)
            outputs.append((model_label(model), out, len(te) / (t["total"] / 1e3)))
        for label, out, speed in outputs:
            score, _ = task_metric(ds.task, ds.y[te], out)
            acc = np.nan if ds.n_classes is None else np.mean(out.argmax(axis=1) == ds.y[te])
            rows.append({"dataset": name, "model": label, "metric": METRIC_OF_TASK[ds.task],
                         "score": score, "accuracy": acc, "rows_per_s": speed})
    return rows


def main(argv: list[str] | None = None) -> pd.DataFrame:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=2, help="repeats of the 3-fold split")
    args = parser.parse_args(argv)
    rows = [row for name in D.names() for row in evaluate(name, args.repeats)]
    table = (pd.DataFrame(rows).groupby(["dataset", "model"], sort=False)
             .agg(metric=("metric", "first"), score=("score", "mean"),
                  accuracy=("accuracy", "mean"), rows_per_s=("rows_per_s", "mean"))
             .reset_index())
    with pd.option_context("display.width", 120, "display.float_format", "{:.4g}".format):
        print(table.to_string(index=False))
    return table


if __name__ == "__main__":
    main()
