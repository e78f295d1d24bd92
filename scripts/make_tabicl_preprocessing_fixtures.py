"""Write the fixtures of TabICL's preprocessing and ensemble (tests/test_tabicl_preprocessing.py).

Needs torch, scikit-learn and ``tabicl`` 2.2.0 (never installed in CI), e.g.
``/work/venv-tabicl/bin/python scripts/make_tabicl_preprocessing_fixtures.py``. It runs
``TabICLClassifier(device="cpu")`` / ``TabICLRegressor(device="cpu")`` at their defaults
(``n_estimators=8``, ``random_state=42``) on small float datasets, with one change: the
checkpoint is a tiny randomly initialised ``TabICL`` whose ``_inference_forward`` records
what the wrapper feeds it and answers with known outputs (random logits, or crossing raw
quantiles). So the files hold the package's own per-member model inputs and what its
aggregation makes of known per-member outputs. Per case,
``tests/data/tabicl/preprocessing_<case>.npz``:

- ``X_train``, ``y_train``, ``X_test`` and the options (``options`` JSON string);
- ``methods`` (the package's member order: its groups follow a Python set's order),
  ``member_x`` (members × (n_train + n_test) × F float32), ``member_y``,
  ``feature_perms``, ``class_perms`` (classification), ``lambdas`` (PowerTransformer);
- classification: ``outputs`` (the recorded logits), ``proba`` (``predict_proba``);
- regression: ``outputs`` (raw quantiles), ``pred_<type>`` for each output type at the
  default alphas and ``tails_quantiles`` at ``TAIL_ALPHAS``.

The script reruns itself with PYTHONHASHSEED=0 (the package's group order depends on
it). ``preprocessing_alpha_levels.npy`` holds the model's float32 quantile levels (torch's
linspace), ``preprocessing_manifest.json`` the versions and the cases.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import sys
from pathlib import Path

import numpy as np
import torch
from tabicl import TabICLClassifier, TabICLRegressor
from tabicl._model.tabicl import TabICL

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "data" / "tabicl"
TAIL_ALPHAS = [0.0002, 0.0007, 0.05, 0.5, 0.9993, 0.9999]
OUTPUT_TYPES = ["mean", "variance", "median", "quantiles", "raw_quantiles"]
TINY = dict(embed_dim=8, col_num_blocks=1, col_nhead=2, col_num_inds=4, row_num_blocks=1,
            row_nhead=2, row_num_cls=2, icl_num_blocks=1, icl_nhead=2)


class Recorder:
    """Stands in for ``TabICL._inference_forward``: records inputs, answers known outputs."""

    def __init__(self, seed: int, regression: bool, levels: np.ndarray):
        self.rng = np.random.default_rng(seed)
        self.regression = regression
        self.levels = levels
        self.calls = []
        self.replay = None  # set to 0 to answer the recorded outputs again, in order

    def __call__(self, X, y_train, feature_shuffles=None, embed_with_test=False,
                 return_logits=True, softmax_temperature=0.9, inference_config=None):
        if self.replay is not None:
            call = self.calls[self.replay]
            assert np.array_equal(call["x"], X.detach().cpu().numpy())
            self.replay += 1
            return torch.from_numpy(call["out"])
        x = X.detach().cpu().numpy().copy()
        y = y_train.detach().cpu().numpy().copy()
        b, t = x.shape[0], x.shape[1] - y.shape[1]
        if self.regression:
            from scipy.special import ndtri
            z = ndtri(self.levels.astype(np.float64))
            mu = self.rng.normal(0, 1, (b, t, 1))
            sd = self.rng.uniform(0.2, 1.5, (b, t, 1))
            sparse = self.rng.random((b, t, z.size)) < 0.1
            jitter = self.rng.normal(0, 0.02, (b, t, z.size)) * sparse
            out = np.round((mu + sd * z + jitter) * 1024) / 1024  # crossing, compressible
        else:
            c = len(np.unique(y[0]))
            out = np.round(self.rng.normal(0, 2, (b, t, c)) * 256) / 256
        out = out.astype(np.float32)
        self.calls.append(dict(x=x, y=y, shuffles=feature_shuffles, out=out))
        return torch.from_numpy(out)


def tiny_loader(regression: bool):
    def _load_model(self):
        torch.manual_seed(0)
        config = dict(TINY, max_classes=0 if regression else 10)
        self.model_ = TabICL(**config)
        self.model_config_ = config
        self.model_path_ = None
        self.model_.eval()
    return _load_model


def datasets():
    rng = np.random.default_rng(20240601)
    cases = {}

    x = rng.normal(size=(40, 4)) * [1, 10, 0.1, 3] + [0, 5, -1, 100]
    y = np.where(x[:, 0] + 0.1 * x[:, 1] > 0.5, 7, 3)
    cases["binary"] = dict(task="binary", X_train=x, y_train=y,
                           X_test=rng.normal(size=(8, 4)) * [1, 10, 0.1, 3] + [0, 5, -1, 100])

    x = rng.normal(size=(45, 5))
    y = np.array(["a", "b", "c"])[np.argmax(x[:, :3] + 0.5 * rng.normal(size=(45, 3)), axis=1)]
    cases["multiclass3"] = dict(task="multiclass", X_train=x, y_train=y,
                                X_test=rng.normal(size=(7, 5)))
    cases["multiclass3_seed0"] = dict(task="multiclass", X_train=x, y_train=y,
                                      X_test=rng.normal(size=(5, 5)),
                                      options=dict(n_estimators=5, random_state=0))

    x = rng.normal(size=(65, 3))
    y = np.repeat(np.arange(13), 5)
    cases["many13"] = dict(task="multiclass", X_train=x + y[:, None] * 0.3, y_train=y,
                           X_test=rng.normal(size=(6, 3)) + 1.5)

    x = rng.normal(size=(50, 4))
    y = 1000 + 50 * (x[:, 0] - 0.5 * x[:, 1] ** 2 + 0.1 * rng.normal(size=50))
    cases["regression"] = dict(task="regression", X_train=x, y_train=y,
                               X_test=rng.normal(size=(3, 4)))

    x = rng.normal(size=(36, 6))
    x[:, 1] = 2.5  # constant column
    x[:, 4] = np.nan  # all-NaN column (imputed with 0, then dropped)
    x[rng.random((36, 6)) < 0.12] = np.nan  # scattered NaNs
    x[::5, 3] = np.nan
    x[:, 5] = np.where(rng.random(36) < 0.3, np.nan, -1.0)  # constant once imputed
    xt = rng.normal(size=(6, 6))
    xt[0, 0] = xt[1, 2] = xt[2, 3] = np.nan
    xt[3, :] = np.nan
    y = np.arange(36) % 3
    cases["nan_constant"] = dict(task="multiclass", X_train=x, y_train=y, X_test=xt)

    x = rng.normal(size=(30, 1))
    cases["one_feature"] = dict(task="binary", X_train=x, y_train=(x[:, 0] > 0).astype(int),
                                X_test=rng.normal(size=(5, 1)))
    x = rng.normal(size=(30, 2))
    cases["two_features_regression"] = dict(task="regression", X_train=x,
                                            y_train=x[:, 0] * 3 - x[:, 1],
                                            X_test=rng.normal(size=(2, 2)))

    x = np.column_stack([rng.lognormal(0, 2, 60), rng.exponential(1, 60) ** 3,
                         rng.standard_t(1.5, 60), -rng.lognormal(1, 1, 60),
                         rng.normal(size=60), rng.integers(0, 4, 60).astype(float),
                         rng.pareto(1.2, 60), rng.normal(size=60) ** 2])
    x[7, 4] = 80.0
    x[11, 2] = -500.0
    xt = np.column_stack([rng.lognormal(0, 2, 6), rng.exponential(1, 6) ** 3,
                          rng.standard_t(1.5, 6), -rng.lognormal(1, 1, 6),
                          rng.normal(size=6), rng.integers(0, 4, 6).astype(float),
                          rng.pareto(1.2, 6), rng.normal(size=6) ** 2])
    xt[0] = [1e4, 1e6, -1e5, -1e4, 300, 9, 1e5, 1e3]  # far outside the training range
    y = (np.log1p(x[:, 0]) + x[:, 4] > 0.5).astype(int)
    cases["skew_outliers"] = dict(task="binary", X_train=x, y_train=y, X_test=xt)
    return cases


def main() -> None:
    if os.environ.get("PYTHONHASHSEED") != "0":
        # The package orders its method groups by iterating a set of strings: pin the hash
        # seed so that the files are reproducible (0 puts "power" first, which the tests'
        # reordering then has to undo).
        os.execve(sys.executable, [sys.executable, *sys.argv],
                  {**os.environ, "PYTHONHASHSEED": "0"})
    torch.set_num_threads(1)
    OUT.mkdir(parents=True, exist_ok=True)
    levels = TabICL(max_classes=0, **TINY).quantile_dist.alpha_levels.numpy().astype(np.float32)
    np.save(OUT / "preprocessing_alpha_levels.npy", levels)
    TabICLClassifier._load_model = tiny_loader(False)
    TabICLRegressor._load_model = tiny_loader(True)
    manifest = {"tabicl": importlib.metadata.version("tabicl"),
                "sklearn": __import__("sklearn").__version__,
                "scipy": __import__("scipy").__version__, "numpy": np.__version__,
                "torch": torch.__version__, "PYTHONHASHSEED": os.environ.get("PYTHONHASHSEED"),
                "cases": {}}
    for i, (name, case) in enumerate(datasets().items()):
        options = case.get("options", {})
        regression = case["task"] == "regression"
        cls = TabICLRegressor if regression else TabICLClassifier
        est = cls(device="cpu", **options).fit(case["X_train"], case["y_train"])
        rec = Recorder(1000 + i, regression, levels)
        est.model_._inference_forward = rec
        eg = est.ensemble_generator_
        data = dict(X_train=case["X_train"], y_train=case["y_train"], X_test=case["X_test"],
                    options=json.dumps(dict(task=case["task"], **options)))
        if regression:
            types = est.predict(case["X_test"], output_type=OUTPUT_TYPES)
            for key in OUTPUT_TYPES:
                data[f"pred_{key}"] = types[key]
            rec.replay = 0  # the same raw quantiles again, other alphas
            data["tails_quantiles"] = est.predict(case["X_test"], output_type="quantiles",
                                                  alphas=TAIL_ALPHAS)
        else:
            data["proba"] = est.predict_proba(case["X_test"])
        methods = [m for m, configs in eg.ensemble_configs_.items() for _ in configs]
        data["methods"] = np.array(methods)
        data["member_x"] = np.concatenate([c["x"] for c in rec.calls])
        data["member_y"] = np.concatenate([c["y"] for c in rec.calls])
        data["outputs"] = np.concatenate([c["out"] for c in rec.calls])
        data["feature_perms"] = np.array([p for ps in eg.feature_shuffles_.values() for p in ps])
        if not regression:
            data["class_perms"] = np.array([p for ps in eg.class_shuffles_.values() for p in ps])
            passed = [p for c in rec.calls for p in c["shuffles"]]
            assert np.array_equal(np.array(passed), data["feature_perms"])
        if "power" in eg.preprocessors_:
            data["lambdas"] = eg.preprocessors_["power"].normalizer_.lambdas_
        np.savez_compressed(OUT / f"preprocessing_{name}.npz", **data)
        manifest["cases"][name] = dict(task=case["task"], members=len(methods), methods=methods,
                                       **options)
        print(name, case["task"], "members", len(methods), methods, file=sys.stderr)
    (OUT / "preprocessing_manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")


if __name__ == "__main__":
    main()
