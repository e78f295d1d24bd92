"""Write the fixtures of TabPFN v3's end-to-end classifier (tests/test_tabpfn_predictor.py).

Needs torch, scikit-learn and ``tabpfn`` 9.2.0 (never installed in CI), e.g.
``.venv-tabpfn/bin/python scripts/make_tabpfn_wrapper_fixtures.py``. Per case it fits
``TabPFNClassifier(model_path=<tests/data/tabpfn ckpt>, device="cpu", fit_mode="low_memory",
inference_precision=torch.float32, random_state=..., n_estimators=..., **options)`` on a
small float table (NaN cells, a skewed column, outliers, a low-cardinality column past 100
rows) and records ``X_train``, ``y_train``, ``X_test`` and the package's ``predict_proba``.
Writes ``tests/data/tabpfn/wrapper_<case>.npz`` and ``wrapper.json`` (versions, options).
"""

from __future__ import annotations

import importlib.metadata
import json
from pathlib import Path

import numpy as np
import torch
from tabpfn import TabPFNClassifier

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "tabpfn"

CASES = {
    "binary": dict(seed=21, n_train=70, n_test=15, n_features=4, n_classes=2, nan=False,
                   options=dict(n_estimators=4, random_state=0)),
    "three_nan": dict(seed=22, n_train=60, n_test=19, n_features=6, n_classes=3, nan=True,
                      options=dict(n_estimators=8, random_state=1)),
    "seven_low_card": dict(seed=23, n_train=140, n_test=12, n_features=5, n_classes=7,
                           nan=True, low_card=True,
                           options=dict(n_estimators=5, random_state=42)),
    "auto_members": dict(seed=24, n_train=50, n_test=10, n_features=3, n_classes=3,
                         nan=False, options=dict(random_state=7)),
    "options": dict(seed=25, n_train=55, n_test=11, n_features=5, n_classes=4, nan=True,
                    options=dict(n_estimators=3, random_state=3, softmax_temperature=0.5,
                                 average_before_softmax=True, balance_probabilities=True)),
}


def table(o: dict):
    rng = np.random.default_rng(o["seed"])
    n = o["n_train"] + o["n_test"]
    x = rng.standard_normal((n, o["n_features"])) * rng.uniform(0.1, 30, o["n_features"])
    x[:, 0] = np.exp(x[:, 0] / x[:, 0].std())
    x[rng.random(n) < 0.05, 1] *= 50
    if o.get("low_card"):
        x[:, -1] = rng.choice([-1.5, 4.0, 7.25], n)
    if o["nan"]:
        x[rng.random(x.shape) < 0.08] = np.nan
    y = rng.integers(0, o["n_classes"], o["n_train"])
    y[: o["n_classes"]] = np.arange(o["n_classes"])
    return x[: o["n_train"]], y, x[o["n_train"]:]


def main() -> None:
    manifest = {"tabpfn": importlib.metadata.version("tabpfn"), "torch": torch.__version__,
                "checkpoint": "classifier_small.ckpt", "cases": {}}
    for case, o in CASES.items():
        x_train, y, x_test = table(o)
        est = TabPFNClassifier(model_path=str(DATA / "classifier_small.ckpt"), device="cpu",
                               fit_mode="low_memory", inference_precision=torch.float32,
                               **o["options"]).fit(x_train, y)
        proba = est.predict_proba(x_test)
        np.savez_compressed(DATA / f"wrapper_{case}.npz", X_train=x_train, y_train=y,
                            X_test=x_test, proba=proba)
        manifest["cases"][case] = {**o, "n_estimators_used": int(est.n_estimators_)}
        print(case, proba.shape, est.n_estimators_)
    (DATA / "wrapper.json").write_text(json.dumps(manifest, indent=1) + "\n")


if __name__ == "__main__":
    main()
