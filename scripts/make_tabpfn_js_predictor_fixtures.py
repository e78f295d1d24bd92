"""Write tests/data/tabpfn/js/predictor.json: arenalite's numpy TabPFN end to end
(``arenalite.models.predict`` / ``predict_distribution`` with ``{"name": "tabpfn", ...}``) on
small tables, for the WebGPU predictor (webgpu_bridge/src/tabpfn/predictor.js) to equal.

Per case: the checkpoint (a committed fixture of tests/data/tabpfn/), the model's settings,
the table as the bridge gets it (the encoded float64 rows of ``encoding.encode_table`` and a
DataFrame's declared categorical columns) and Python's output: classification probabilities
(m × C), regression the mean and the spread (half the Φ(1) − Φ(−1) range). The hostile tables
are DataFrames with a text column, missing cells, a constant and an all-missing column.

Numbers as in make_tabpfn_js_preprocessing_fixtures.py (NaN as "nan").
Run: ``.venv-pins/bin/python scripts/make_tabpfn_js_predictor_fixtures.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from arenalite import models
from arenalite.models import encoding

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "tabpfn"
OUT = DATA / "js" / "predictor.json"


def f64(a) -> list:
    return [v if np.isfinite(v) else str(v) for v in np.asarray(a, np.float64).ravel().tolist()]


def numeric(name: str, n_train: int | None = None):
    d = np.load(DATA / f"preprocessing_{name}.npz")
    n = n_train or len(d["X_train"])
    return d["X_train"][:n], d["y_train"][:n], d["X_test"]


def frames(seed: int, n_train: int, n_test: int):
    """A DataFrame pair: numbers, a text column, missing cells, a constant and an
    all-missing column."""
    rng = np.random.default_rng(seed)
    n = n_train + n_test
    df = pd.DataFrame({
        "a": rng.normal(size=n) * 4,
        "text": rng.choice(["red", "green", "blue", "ochre"], n),
        "b": rng.lognormal(size=n),
        "constant": np.full(n, 2.5),
        "empty": np.full(n, np.nan),
        "c": rng.integers(0, 5, n).astype(float),
    })
    df.loc[rng.random(n) < 0.1, "a"] = np.nan
    df.loc[rng.random(n) < 0.1, "text"] = None
    df.loc[rng.random(n) < 0.1, "b"] = np.nan
    return df.iloc[:n_train].reset_index(drop=True), df.iloc[n_train:].reset_index(drop=True)


def case(ckpt: str, task: str, x_train, y_train, x_test, **settings) -> dict:
    model = {"name": "tabpfn", "weights": str(DATA / ckpt), **settings}
    enc_train, enc_test, categorical = encoding.encode_table("tabpfn", x_train, x_test)
    enc_train = np.asarray(enc_train, np.float64)
    enc_test = np.asarray(enc_test, np.float64)
    out = {"ckpt": ckpt, "task": task, "settings": settings,
           "shape": [len(enc_train), len(enc_test), enc_train.shape[1]],
           "x_train": f64(enc_train), "x_test": f64(enc_test),
           "y_train": f64(y_train), "categorical_indices": categorical}
    if task == "regression":
        mean, spread = models.predict_distribution(model, x_train, y_train, x_test)
        out["mean"], out["spread"] = f64(mean), f64(spread)
    else:
        n_classes = int(np.max(y_train)) + 1
        out["n_classes"] = n_classes
        out["proba"] = f64(models.predict(model, x_train, y_train, x_test, task, n_classes))
    return out


def main() -> None:
    cases = {}
    x, y, xt = numeric("classifier")
    cases["classifier"] = case("classifier_small.ckpt", "multiclass", x, y, xt)
    cases["classifier_settings"] = case("classifier_wide.ckpt", "multiclass", x, y, xt,
                                        n_estimators=3, random_state=4,
                                        softmax_temperature=0.6, average_before_softmax=True,
                                        balance_probabilities=True)
    x, y, xt = numeric("regressor")
    cases["regressor"] = case("regressor_small.ckpt", "regression", x, y, xt, n_estimators=3)
    train, test = frames(3, 70, 12)
    yc = (np.nan_to_num(train["a"].to_numpy()) > 0).astype(int) + (train["text"] == "red")
    cases["hostile_classifier"] = case("classifier_small.ckpt", "multiclass", train,
                                       yc.to_numpy(), test, random_state=2)
    train, test = frames(5, 50, 9)
    yr = np.nan_to_num(train["b"].to_numpy()) * 3 + np.random.default_rng(1).normal(size=50)
    cases["hostile_regressor"] = case("regressor_saved.ckpt", "regression", train, yr, test,
                                      n_estimators=4, random_state=1)
    OUT.write_text(json.dumps(cases, separators=(",", ":")) + "\n")
    print(f"wrote {OUT} ({OUT.stat().st_size // 1024} KB, {len(cases)} cases)")


if __name__ == "__main__":
    main()
