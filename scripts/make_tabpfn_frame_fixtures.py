"""Write the fixtures of TabPFN v3 on typed DataFrames (tests/test_tabpfn_frames.py).

Needs torch, scikit-learn and ``tabpfn`` 9.2.0 (never installed in CI), e.g.
``.venv-tabpfn/bin/python scripts/make_tabpfn_frame_fixtures.py``. Per case it builds a
small DataFrame pair (text, ``category``, bool, nullable and NaN-holding number columns,
missing text cells, categories the training rows never hold), fits
``TabPFNClassifier`` / ``TabPFNRegressor(model_path=<tests/data/tabpfn ckpt>,
device="cpu", fit_mode="low_memory", inference_precision=torch.float32, random_state=...,
n_estimators=...)`` on it and records what the package's own cleaning handed its model
pipeline: the categorical indices it passed to ``detect_feature_modalities``, the
modalities it inferred, the float64 rows ``clean_data`` / ``clean_data_transform``
returned, and ``predict_proba`` / ``predict``. Writes ``tests/data/tabpfn/frame_<case>.json``
(the frames, column by column with their dtype, rebuilt by :func:`frame_from_json`),
``frame_<case>.npz`` (the arrays), ``frame_cleaning.json`` (single-column oddities: the
cleaning alone) and ``frame.json`` (versions, options).
"""

from __future__ import annotations

import importlib.metadata
import json
from pathlib import Path

import numpy as np
import pandas as pd
import sklearn
import torch
from tabpfn import TabPFNClassifier, TabPFNRegressor, base, classifier, regressor

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "tabpfn"


def column_to_json(series: pd.Series) -> dict:
    """A column as its dtype name, its values (missing: None) and, for ``category``, the
    dtype's categories."""
    values = [None if pd.isna(v) else (v.item() if hasattr(v, "item") else v)
              for v in series.astype(object)]
    out = {"name": series.name, "dtype": str(series.dtype), "values": values}
    if isinstance(series.dtype, pd.CategoricalDtype):
        out["categories"] = [c.item() if hasattr(c, "item") else c
                             for c in series.dtype.categories]
    return out


def frame_to_json(frame: pd.DataFrame) -> list[dict]:
    return [column_to_json(frame[c]) for c in frame.columns]


def frame_from_json(columns: list[dict]) -> pd.DataFrame:
    """The frame :func:`frame_to_json` wrote, dtypes included (the tests' copy is alike)."""
    out = {}
    for c in columns:
        if c["dtype"] == "category":
            out[c["name"]] = pd.Categorical(c["values"], categories=c["categories"])
        elif c["dtype"] in ("float64", "object"):
            out[c["name"]] = pd.Series([np.nan if v is None else v for v in c["values"]],
                                       dtype=c["dtype"])
        else:
            out[c["name"]] = pd.Series(c["values"], dtype=c["dtype"])
    return pd.DataFrame(out)


def text_binary(rng: np.random.Generator):
    """Text (str) with missing cells and an unseen value in the test rows, numbers with
    NaN, a numpy bool column; two classes."""
    n, m = 80, 20
    words = np.array(["red", "green", "blue", "amber"])
    x0 = rng.standard_normal(n + m) * 3
    x0[rng.random(n + m) < 0.1] = np.nan
    text = words[rng.integers(0, 4, n + m)].astype(object)
    text[[3, 17, n + 2]] = None
    text[[n + 5, n + 9]] = "violet"
    flag = rng.random(n + m) < 0.4
    frame = pd.DataFrame({"x0": x0, "colour": pd.Series(text, dtype="str"), "flag": flag,
                          "x1": rng.uniform(0, 10, n + m)})
    y = ((np.nan_to_num(x0) + (text == "red") * 2 + flag) > 1).astype(np.int64)[:n]
    return frame.iloc[:n].reset_index(drop=True), y, frame.iloc[n:].reset_index(drop=True)


def category_multiclass(rng: np.random.Generator):
    """A string ``category`` column (an unused category, missing cells, a category only
    the test rows hold), an integer ``category`` column, a nullable boolean with NA, a
    nullable Int64 with NA and an object text column; three classes, past 100 rows."""
    n, m = 120, 25
    shape = np.array(["circle", "square", "triangle", "hexagon", "star"])[
        rng.integers(0, 5, n + m)].astype(object)
    shape[[1, 40, n + 3]] = None
    shape[[n + 1, n + 7]] = "zigzag"
    size = rng.choice([3, 1, 2], n + m)
    nb = pd.array(rng.random(n + m) < 0.5, dtype="boolean")
    nb[[0, 9, n + 4]] = pd.NA
    count = pd.array(rng.integers(0, 12, n + m), dtype="Int64")
    count[[5, n]] = pd.NA
    city = np.array(["oslo", "rome", "lima"])[rng.integers(0, 3, n + m)].astype(object)
    city[[7, n + 11]] = np.nan
    train_shapes = ["triangle", "circle", "square", "hexagon", "star", "unused"]
    frame_shape = pd.Series(shape, dtype=object)
    y = (rng.integers(0, 3, n + m) + (shape == "circle") + size) % 3
    train = pd.DataFrame({
        "shape": pd.Categorical(frame_shape[:n], categories=train_shapes),
        "size": pd.Categorical(size[:n], categories=[1, 2, 3]),
        "nb": nb[:n], "count": count[:n], "city": pd.Series(city[:n], dtype=object),
        "x": rng.standard_normal(n)})
    test = pd.DataFrame({
        "shape": pd.Categorical(frame_shape[n:].reset_index(drop=True),
                                categories=train_shapes + ["zigzag"]),
        "size": pd.Categorical(size[n:], categories=[1, 2, 3]),
        "nb": nb[n:], "count": count[n:], "city": pd.Series(city[n:], dtype=object),
        "x": rng.standard_normal(m)})
    return train, y[:n].astype(np.int64), test


def text_regression(rng: np.random.Generator):
    """Regression: a str column with missing cells, a constant text column, a category
    column, numbers with NaN, a bool column."""
    n, m = 60, 15
    grade = np.array(["low", "mid", "high"])[rng.integers(0, 3, n + m)].astype(object)
    grade[[4, n + 1]] = None
    x = rng.standard_normal(n + m)
    x[[2, 30, n + 6]] = np.nan
    kind = np.array(["a", "b"])[rng.integers(0, 2, n + m)]
    kind[n + 2] = "c"
    flag = rng.random(n + m) < 0.5
    frame = pd.DataFrame({"grade": pd.Series(grade, dtype="str"),
                          "same": pd.Series(["k"] * (n + m), dtype="str"),
                          "kind": pd.Categorical(kind), "x": x, "flag": flag})
    y = (np.nan_to_num(x) * 2 + (grade == "high") * 3 + flag + rng.standard_normal(n + m)
         * 0.3)[:n]
    train = frame.iloc[:n].reset_index(drop=True)
    test = frame.iloc[n:].reset_index(drop=True)
    train["kind"] = pd.Categorical(kind[:n], categories=["a", "b"])
    test["kind"] = pd.Categorical(kind[n:], categories=["a", "b", "c"])
    return train, y, test


CASES = {
    "text_binary": dict(make=text_binary, seed=31, task="binary",
                        checkpoint="classifier_small.ckpt",
                        options=dict(n_estimators=4, random_state=0)),
    "category_multiclass": dict(make=category_multiclass, seed=32, task="multiclass",
                                checkpoint="classifier_small.ckpt",
                                options=dict(n_estimators=5, random_state=1)),
    "text_regression": dict(make=text_regression, seed=33, task="regression",
                            checkpoint="regressor_small.ckpt",
                            options=dict(n_estimators=3, random_state=2)),
}


def cleaning_frames() -> dict:
    """Single-column oddities (next to a number column), for the cleaning alone: each
    (train, test) with 40 and 6 rows."""
    n = 40

    def pair(train_values, test_values, dtype=None, categories=None):
        def col(values):
            if categories is not None:
                return pd.Categorical(values, categories=categories)
            return pd.Series(values, dtype=dtype)
        return (pd.DataFrame({"c": col(train_values), "x": np.arange(n) * 1.0}),
                pd.DataFrame({"c": col(test_values), "x": np.arange(6) * 0.5}))

    return {
        "unused_category": pair(["b", "c"] * 20, ["c", "b", "aaa", None, "b", "c"],
                                categories=["c", "b", "aaa"]),
        "spelled_numbers": pair(["2", "10", "3", "1"] * 10, ["1", "7", None, "2", "3", "10"],
                                dtype=object),
        "spelled_numbers_missing": pair(["2", "10", None, "-1"] * 10,
                                        ["-1", "7", None, "2", "__MISSING__", "10"],
                                        dtype="str"),
        "spelled_and_words": pair(["2", "10", "3", "x"] * 10, ["x", "y", None, "2", "3", "10"],
                                  dtype=object),
        "object_numbers": pair([2.5, 1, None, 3] * 10, [1, 2.5, None, 3, 4, 1], dtype=object),
        "integer_category": pair([3, 1, None, 2] * 10, [1, 2, 3, None, 4, 1],
                                 categories=[1, 2, 3, 4]),
        "number_category_40": pair([i * 1.5 for i in range(n)], [0.0, 1.5, 3.0, 99.0, None, 6.0],
                                   categories=[i * 1.5 for i in range(n)] + [99.0]),
        "constant_category": pair(["a"] * n, ["a", "b", None, "a", "a", "a"],
                                  categories=["a", "b"]),
        "constant_text": pair(["k"] * n, ["k", "j", None, "k", "k", "k"], dtype="str"),
        "all_missing_text": pair([None] * n, ["k", None, "j", None, None, None], dtype=object),
        "sort_order": pair(["B", "a", "_z", "__MISSING__"] * 10,
                           ["a", "B", "__MISSING__", None, "_z", "b"], dtype="str"),
        "nullable_float": pair([0.5, None, 2.0, 4.0] * 10, [None, 1.0, 2.0, 4.0, 0.5, 3.0],
                               dtype="Float64"),
    }


def record_cleaning() -> dict:
    """The package's cleaning of each :func:`cleaning_frames` pair (one member fitted)."""
    out = {}
    for case, (train, test) in cleaning_frames().items():
        y = np.arange(len(train)) % 2
        with Recorder() as rec:
            TabPFNClassifier(model_path=str(DATA / "classifier_small.ckpt"), device="cpu",
                             fit_mode="low_memory", inference_precision=torch.float32,
                             n_estimators=1).fit(train, y).predict_proba(test)
        seen = rec.seen

        def floats(a):
            return [[None if np.isnan(v) else float(v) for v in row] for row in a.tolist()]

        out[case] = {"train": frame_to_json(train), "test": frame_to_json(test),
                     "X_train_clean": floats(seen["X_train_clean"]),
                     "X_test_clean": floats(seen["X_test_clean"]),
                     "provided_categorical_indices": seen["provided_categorical_indices"],
                     "modalities": seen["modalities"]}
        print(case, seen["provided_categorical_indices"], seen["modalities"])
    return out


class Recorder:
    """Wraps the package's cleaning functions (in the modules that call them) to keep
    what they were given and returned."""

    def __init__(self) -> None:
        self.seen: dict = {}
        self._undo: list = []

    def wrap(self, module, name: str, record) -> None:
        original = getattr(module, name)

        def wrapped(*args, **kwargs):
            out = original(*args, **kwargs)
            record(self.seen, args, kwargs, out)
            return out

        setattr(module, name, wrapped)
        self._undo.append((module, name, original))

    def __enter__(self) -> Recorder:
        def modalities(seen, args, kwargs, out):
            seen["provided_categorical_indices"] = list(
                kwargs.get("provided_categorical_indices") or [])
            seen["modalities"] = [f.modality.value for f in out.features]

        def fit(seen, args, kwargs, out):
            seen["X_train_clean"] = np.asarray(out[0], dtype=np.float64)

        def transform(seen, args, kwargs, out):
            seen["X_test_clean"] = np.asarray(out, dtype=np.float64)

        for module in (classifier, regressor):
            self.wrap(module, "detect_feature_modalities", modalities)
            self.wrap(module, "clean_data", fit)
        for module in (classifier, regressor, base):
            self.wrap(module, "clean_data_transform", transform)
        return self

    def __exit__(self, *exc) -> None:
        for module, name, original in reversed(self._undo):
            setattr(module, name, original)


def main() -> None:
    manifest = {"tabpfn": importlib.metadata.version("tabpfn"), "torch": torch.__version__,
                "pandas": pd.__version__, "numpy": np.__version__,
                "sklearn": sklearn.__version__, "cases": {}}
    for case, o in CASES.items():
        train, y, test = o["make"](np.random.default_rng(o["seed"]))
        cls = TabPFNRegressor if o["task"] == "regression" else TabPFNClassifier
        with Recorder() as rec:
            est = cls(model_path=str(DATA / o["checkpoint"]), device="cpu",
                      fit_mode="low_memory", inference_precision=torch.float32,
                      **o["options"]).fit(train, y)
            output = est.predict(test) if o["task"] == "regression" else est.predict_proba(test)
        seen = rec.seen
        (DATA / f"frame_{case}.json").write_text(json.dumps(
            {"train": frame_to_json(train), "test": frame_to_json(test),
             "y_train": y.tolist()}) + "\n")
        modality_codes = {"numerical": 0, "categorical": 1, "constant": 2}
        np.savez_compressed(
            DATA / f"frame_{case}.npz", output=np.asarray(output, dtype=np.float64),
            X_train_clean=seen["X_train_clean"], X_test_clean=seen["X_test_clean"],
            modalities=np.array([modality_codes[m] for m in seen["modalities"]]),
            provided_categorical_indices=np.array(seen["provided_categorical_indices"],
                                                  dtype=np.int64))
        manifest["cases"][case] = {
            "task": o["task"], "checkpoint": o["checkpoint"], "options": o["options"],
            "n_estimators_used": int(est.n_estimators_),
            "dtypes": {str(c): str(train[c].dtype) for c in train.columns},
            "provided_categorical_indices": seen["provided_categorical_indices"],
            "modalities": seen["modalities"]}
        print(case, np.shape(output), seen["provided_categorical_indices"], seen["modalities"])
    (DATA / "frame_cleaning.json").write_text(json.dumps(record_cleaning()) + "\n")
    (DATA / "frame.json").write_text(json.dumps(manifest, indent=1) + "\n")


if __name__ == "__main__":
    main()
