"""Write the fixtures of TabPFN v3's reshape presets (tests/test_tabpfn_reshape.py).

Needs torch, scikit-learn and ``tabpfn`` 9.2.0 (never installed in CI), e.g.
``.venv-tabpfn/bin/python scripts/make_tabpfn_reshape_fixtures.py``.

Per small table (NaN cells, a skewed column, a column with outliers, a constant-ish column, a
categorical column of ordinal codes as ``clean_data`` leaves them) and per reshape preset in
``PRESETS``, the package's own ``ReshapeFeatureDistributionsStep(transform_name=<preset>,
apply_to_categorical=..., append_to_original=..., random_state=0)`` is fitted on the training
rows (``fit_transform``) and applied to the test rows (``transform``), in the settings of
``SETTINGS``; recorded as ``<table>__<preset>__<setting>__train`` / ``__test`` (float64) in
``tests/data/tabpfn/reshape.npz``, with the tables as ``<table>__X_train`` / ``__X_test``
and ``__categorical``.

And end to end (``reshape_e2e_<case>.npz``): ``TabPFNClassifier(model_path=
tests/data/tabpfn/classifier_small.ckpt, device="cpu", fit_mode="low_memory",
inference_precision=torch.float32, n_estimators=4, random_state=0,
inference_config={"PREPROCESS_TRANSFORMS": [two PreprocessorConfig]})`` fitted on a small
table, and its ``predict_proba``. ``reshape.json``: versions, settings, the e2e configs.
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
import json
from pathlib import Path

import numpy as np
import torch
from tabpfn import TabPFNClassifier
from tabpfn.preprocessing.configs import PreprocessorConfig
from tabpfn.preprocessing.datamodel import FeatureSchema
from tabpfn.preprocessing.pipeline_interface import PreprocessingPipeline
from tabpfn.preprocessing.steps.reshape_feature_distribution_step import (
    ReshapeFeatureDistributionsStep,
)

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "tabpfn"

PRESETS = ("safepower", "power", "quantile_uni", "quantile_norm", "quantile_uni_coarse",
           "quantile_norm_coarse", "quantile_uni_fine", "quantile_norm_fine", "robust")
SETTINGS = {  # name: (apply_to_categorical, append_to_original)
    "plain": (False, False),
    "append": (False, True),
    "numeric": (True, False),
    "numeric_append": (True, True),
}


def table(seed: int, n_train: int, n_test: int, nan_constant: bool):
    """Columns: 0 skewed (exp), 1 outliers, 2 constant-ish, 3 normal, 4 categorical codes."""
    rng = np.random.default_rng(seed)
    n = n_train + n_test
    x = rng.standard_normal((n, 5)) * np.array([1.0, 4.0, 1.0, 0.3, 1.0])
    x[:, 0] = np.exp(1.5 * x[:, 0])
    x[rng.random(n) < 0.06, 1] *= 40
    if nan_constant:  # one value but for a few cells, NaN cells (the mean is NaN)
        x[:, 2] = np.where(rng.random(n) < 0.9, 2.0, np.round(x[:, 2], 1))
    else:  # 1.0 but for a cell an ulp or two away: sklearn's power step deems it constant
        x[:, 2] = 1.0
        x[[3, 11], 2] = 1.0 + 2 * np.finfo(np.float64).eps
        x[n_train + 2, 2] = 1.5
    x[:, 4] = rng.integers(0, 3, n).astype(np.float64)
    x[rng.random(x.shape) < 0.07] = np.nan
    if not nan_constant:
        x[:, 2] = np.where(np.isnan(x[:, 2]), 1.0, x[:, 2])
    x[n_train, 4] = -1.0  # an unseen category
    x[n_train + 1, 0] = 1e3  # far outside the training range
    x[n_train + 3, 3] = -50.0
    x[n_train + 4, 1] = np.nanmin(x[:n_train, 1])  # on the first quantile
    return x[:n_train], x[n_train:]


TABLES = {"small": dict(seed=31, n_train=60, n_test=14, nan_constant=False),
          "nan": dict(seed=32, n_train=45, n_test=10, nan_constant=True)}

E2E = {
    "safepower_quantile_norm": dict(seed=41, n_train=70, n_test=15, n_classes=3, configs=[
        dict(name="safepower", categorical_name="numeric", append_original=True),
        dict(name="quantile_norm", categorical_name="ordinal_very_common_categories_shuffled",
             global_transformer_name="svd_quarter_components")]),
    "robust_quantile_uni_fine": dict(seed=42, n_train=110, n_test=12, n_classes=2, configs=[
        dict(name="robust", categorical_name="numeric"),
        dict(name="quantile_uni_fine", categorical_name="numeric", append_original=True)]),
}


def step_output(x_train, x_test, cats, preset, apply_cat, append):
    step = ReshapeFeatureDistributionsStep(transform_name=preset, apply_to_categorical=apply_cat,
                                           append_to_original=append, random_state=0)
    pipe = PreprocessingPipeline([step])
    schema = FeatureSchema.from_only_categorical_indices(cats, x_train.shape[1])
    tr = pipe.fit_transform(x_train.copy(), schema).X
    te = pipe.transform(x_test.copy()).X
    return np.asarray(tr, dtype=np.float64), np.asarray(te, dtype=np.float64)


def e2e_table(o: dict):
    rng = np.random.default_rng(o["seed"])
    n = o["n_train"] + o["n_test"]
    x = rng.standard_normal((n, 5)) * rng.uniform(0.1, 30, 5)
    x[:, 0] = np.exp(x[:, 0] / x[:, 0].std())
    x[rng.random(n) < 0.05, 1] *= 50
    x[:, 4] = rng.choice([-1.5, 4.0, 7.25], n)
    x[rng.random(x.shape) < 0.08] = np.nan
    y = rng.integers(0, o["n_classes"], o["n_train"])
    y[: o["n_classes"]] = np.arange(o["n_classes"])
    return x[: o["n_train"]], y, x[o["n_train"]:]


def main() -> None:
    out = {}
    for tname, t in TABLES.items():
        x_train, x_test = table(**t)
        cats = [4]
        out[f"{tname}__X_train"], out[f"{tname}__X_test"] = x_train, x_test
        out[f"{tname}__categorical"] = np.array(cats)
        for preset in PRESETS:
            for sname, (apply_cat, append) in SETTINGS.items():
                if tname == "nan" and sname == "numeric_append":
                    continue
                tr, te = step_output(x_train, x_test, cats, preset, apply_cat, append)
                out[f"{tname}__{preset}__{sname}__train"] = tr
                out[f"{tname}__{preset}__{sname}__test"] = te
    np.savez_compressed(DATA / "reshape.npz", **out)
    manifest = {"versions": {p: importlib.metadata.version(p)
                             for p in ("tabpfn", "torch", "numpy", "scikit-learn", "scipy")},
                "presets": list(PRESETS), "settings": SETTINGS, "e2e": {}}
    for case, o in E2E.items():
        x_train, y, x_test = e2e_table(o)
        configs = [PreprocessorConfig(**c) for c in o["configs"]]
        est = TabPFNClassifier(model_path=str(DATA / "classifier_small.ckpt"), device="cpu",
                               fit_mode="low_memory", inference_precision=torch.float32,
                               n_estimators=4, random_state=0,
                               inference_config={"PREPROCESS_TRANSFORMS": configs})
        est.fit(x_train, y)
        proba = est.predict_proba(x_test)
        np.savez_compressed(DATA / f"reshape_e2e_{case}.npz", X_train=x_train, y_train=y,
                            X_test=x_test, proba=proba)
        manifest["e2e"][case] = {**o, "configs": [dataclasses.asdict(c) for c in configs],
                                 "n_estimators_used": int(est.n_estimators_)}
        print(case, proba.shape, est.n_estimators_)
    (DATA / "reshape.json").write_text(json.dumps(manifest, indent=1) + "\n")


if __name__ == "__main__":
    main()
