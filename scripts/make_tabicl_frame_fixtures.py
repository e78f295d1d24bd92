"""Write the TabICL-on-DataFrames parity fixture CI checks ``arenalite.models.predict`` against.

Needs the ``tabicl`` extra (torch and the ``tabicl`` package; CI never installs it):
``pip install -e ".[tabicl]"``, then ``python scripts/make_tabicl_frame_fixtures.py``.

Per case it builds a table of mixed columns (pandas ``str`` text and object text with
missing cells, a ``category`` column, a float column with NaN, an integer column, a
numpy ``bool`` column the package leaves out) whose test rows hold a category never seen
in the context, and writes ``tests/data/tabicl/frames_<case>.json``: the columns (dtype,
context cells, query cells; JSON null is a missing cell), the labels, and what
``TabICLClassifier(model_path=CKPT, device="cpu").fit(df_train, y).predict_proba(df_test)``
(or ``TabICLRegressor(...).predict``) returned, plus the package's ``TransformToNumerical``
output on both frames.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from tabicl import TabICLClassifier, TabICLRegressor

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "data" / "tabicl"
CASES = {  # name: checkpoint, context rows, query rows, classes (0: regression)
    "binary": ("classifier_small.ckpt", 70, 19, 2),
    "multiclass": ("classifier_small.ckpt", 90, 23, 4),
    "regression": ("regressor_small.ckpt", 80, 21, 0),
}


def make_frame(case: str, n: int, m: int, classes: int) -> tuple[pd.DataFrame, np.ndarray]:
    """A table whose target depends on text, category and number columns."""
    rng = np.random.default_rng(len(case) * 104729)
    rows = n + m
    colour = rng.choice(["red", "green", "blue", "amber"], rows).astype(object)
    colour[rng.random(rows) < 0.12] = None
    colour[n + 1] = "violet"  # only ever seen at test time
    shop = rng.choice(["north", "south", "east"], rows).astype(object)
    shop[rng.random(rows) < 0.1] = np.nan
    size = pd.Categorical(rng.choice(["S", "M", "L", "XL"], rows), categories=["S", "M", "L",
                                                                                "XL", "XXL"])
    size[rng.random(rows) < 0.08] = np.nan
    size[n + 2] = "XXL"
    amount = np.exp(rng.normal(size=rows))
    amount[rng.random(rows) < 0.15] = np.nan
    count = rng.integers(0, 40, rows)
    member = rng.random(rows) < 0.5
    frame = pd.DataFrame({
        "colour": pd.Series(colour, dtype="str"), "shop": pd.Series(shop, dtype=object),
        "amount": amount, "size": size, "count": count, "member": member})
    signal = (np.nan_to_num(amount, nan=1.0) + 0.05 * count
              + pd.Series(colour).map({"red": 1.0, "green": -1.0}).fillna(0).to_numpy()
              + 0.4 * size.codes + rng.normal(scale=0.3, size=rows))
    if classes:
        edges = np.quantile(signal[:n], np.linspace(0, 1, classes + 1)[1:-1])
        y = np.searchsorted(edges, signal[:n]).astype(np.int64)
    else:
        y = 2.0 * signal[:n] + 5.0
    return frame, y


def cells(series: pd.Series) -> list:
    return [None if pd.isna(v) else (v.item() if isinstance(v, np.generic) else v)
            for v in series.to_numpy(dtype=object)]


def main() -> None:
    torch.set_num_threads(1)
    torch.manual_seed(0)
    for case, (ckpt, n, m, classes) in CASES.items():
        frame, y = make_frame(case, n, m, classes)
        train, test = frame.iloc[:n], frame.iloc[n:]
        path = str(OUT / ckpt)
        wrapper = (TabICLClassifier(model_path=path, device="cpu") if classes
                   else TabICLRegressor(model_path=path, device="cpu"))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            wrapper.fit(train, y)
            predicted = wrapper.predict_proba(test) if classes else wrapper.predict(test)
        encoder = wrapper.X_encoder_
        record = {
            "checkpoint": ckpt, "context_rows": n, "query_rows": m, "classes": classes,
            "columns": {c: {"dtype": str(frame[c].dtype) if not isinstance(
                frame[c].dtype, pd.CategoricalDtype) else "category",
                "categories": (list(frame[c].cat.categories)
                               if isinstance(frame[c].dtype, pd.CategoricalDtype) else None),
                "cells": cells(frame[c])} for c in frame.columns},
            "y_train": y.tolist(),
            "encoded_train": encoder.transform(train).tolist(),
            "encoded_test": encoder.transform(test).tolist(),
            "wrapper": np.asarray(predicted, dtype=np.float64).tolist(),
        }
        (OUT / f"frames_{case}.json").write_text(json.dumps(record) + "\n")
        print(f"{case}: {ckpt}, {n} + {m} rows, output {np.shape(predicted)}")


if __name__ == "__main__":
    main()
