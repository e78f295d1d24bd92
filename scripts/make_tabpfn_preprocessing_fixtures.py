"""Write the fixtures of TabPFN v3's per-member preprocessing (tests/test_tabpfn_preprocessing.py).

Needs torch, scikit-learn and ``tabpfn`` 9.2.0 (never installed in CI), e.g.
``.venv-tabpfn/bin/python scripts/make_tabpfn_preprocessing_fixtures.py``. Per case it fits
``TabPFNClassifier`` / ``TabPFNRegressor(model_path=<tests/data/tabpfn ckpt>, device="cpu",
fit_mode="low_memory", random_state=..., n_estimators=...)`` on a small float table and
records, from the fitted estimator:

- the members' draws: ``feature_shifts``, ``class_perms`` (classification), ``config_index``
  (the index of the member's ``PreprocessorConfig`` in the inference config's
  ``PREPROCESS_TRANSFORMS``), ``target_index`` (regression: the index into
  ``REGRESSION_Y_PREPROCESS_TRANSFORMS``), ``pipeline_seeds``;
- ``clean_train`` / ``clean_test``: the rows after ``clean_data`` / ``clean_data_transform``
  (the ordinal codes of the categorical columns, a constant column's training value);
- ``modalities`` (the inferred feature schema: 0 numerical, 1 categorical, 2 constant);
- per member ``m``, the first steps of the member's own CPU pipeline run on the training rows
  and then on the test rows: ``kept_<m>`` (``RemoveConstantFeaturesStep``'s selection),
  ``reshape_train_<m>`` / ``reshape_test_<m>`` (after ``ReshapeFeatureDistributionsStep``,
  float64) and ``encode_train_<m>`` / ``encode_test_<m>`` (after
  ``EncodeCategoricalFeaturesStep`` too), ``svd_train_<m>`` / ``svd_test_<m>`` (after
  ``AddSVDFeaturesStep`` too, for the members whose config has one), for the members whose
  reshape transform is ``squashing_scaler_default``, ``quantile_uni_coarse`` or ``none``;
  ``member_train_<m>`` / ``member_test_<m>``: the member's whole CPU pipeline (also the
  fingerprint feature and the feature shuffle), as ``fit_transform`` / ``transform`` give it;
  ``model_x_<m>`` (float32, train then test rows) and ``model_categorical_<m>``: what the
  package's torch steps (the soft clip at ``outlier_removal_std`` σ) made of it in
  ``predict_proba`` / ``predict``, i.e. the member's model input, and its categorical
  columns.

Also ``preprocessing_rotate.npz``: the package's ``_generate_class_permutations`` with
``"rotate"`` for a few (members, classes, seed), keyed ``rotate_<M>_<C>_<seed>``.

Writes ``tests/data/tabpfn/preprocessing_<case>.npz`` and ``preprocessing.json`` (versions,
cases, options).
"""

from __future__ import annotations

import importlib.metadata
import json
from pathlib import Path

import numpy as np
import tabpfn.inference
import torch
from tabpfn import TabPFNClassifier, TabPFNRegressor
from tabpfn.preprocessing.clean import clean_data_transform
from tabpfn.preprocessing.datamodel import FeatureModality
from tabpfn.preprocessing.ensemble import _generate_class_permutations
from tabpfn.preprocessing.pipeline_interface import PreprocessingPipeline
from tabpfn.preprocessing.steps.add_svd_features_step import AddSVDFeaturesStep

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "tabpfn"
MODALITY = {FeatureModality.NUMERICAL: 0, FeatureModality.CATEGORICAL: 1,
            FeatureModality.CONSTANT: 2}


def table(seed: int, n_train: int, n_test: int, n_features: int, nan: bool,
          low_card: int = 0, constant: bool = False, infs: bool = False, dup: bool = False):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n_train + n_test, n_features)) * rng.uniform(0.1, 30, n_features)
    x[:, 0] = np.exp(x[:, 0] / x[:, 0].std())  # skewed
    if n_features > 2:
        x[rng.random(len(x)) < 0.05, 1] *= 50  # outliers
    if n_features > 3:  # one column mostly one value (the minmax branch of the scaler)
        x[:, 3] = np.where(rng.random(len(x)) < 0.8, 2.0, x[:, 3])
    if nan:
        x[rng.random(x.shape) < 0.08] = np.nan
    for j in range(low_card):  # 2 or 3 distinct values (NaN counts): categorical past 100 rows
        col = n_features - 1 - j
        x[:, col] = np.where(np.isnan(x[:, col]), np.nan,
                             rng.choice([-1.5, 4.0, 7.25][: 3 - j], len(x)))
    if constant:  # constant in training, other values in the test rows
        x[:n_train, 2] = 1.5
    if low_card:  # a category unseen in training
        x[n_train, n_features - 2] = 9.0
    if infs:  # ±inf cells, and a column constant but for its +inf cells (kept)
        x[3, 0], x[5, 1], x[n_train + 1, 4], x[n_train + 2, 0] = np.inf, -np.inf, np.inf, -np.inf
        x[:n_train, 5] = 0.25
        x[[7, 9], 5] = np.inf
    if dup:  # duplicated training rows (the fingerprint's collision handling), one in test
        x[10:16] = x[0:6]
        x[17] = x[0]
        x[n_train] = x[1]
    return x[:n_train], x[n_train:]


CASES = {
    "classifier": dict(kind="classifier", ckpt="classifier_small.ckpt", seed=1, n_train=60,
                       n_test=17, n_features=5, n_classes=3, nan=False, n_estimators=8,
                       random_state=0),
    "classifier_nan_constant": dict(kind="classifier", ckpt="classifier_small.ckpt", seed=2,
                                    n_train=48, n_test=11, n_features=6, n_classes=7,
                                    nan=True, constant=True, infs=True, n_estimators=5,
                                    random_state=3),
    "classifier_categorical": dict(kind="classifier", ckpt="classifier_small.ckpt", seed=3,
                                   n_train=130, n_test=20, n_features=6, n_classes=4,
                                   nan=True, low_card=2, n_estimators=4, random_state=42),
    "classifier_categorical_common": dict(kind="classifier", ckpt="classifier_small.ckpt",
                                          seed=6, n_train=200, n_test=25, n_features=7,
                                          n_classes=3, nan=True, low_card=3, n_estimators=6,
                                          random_state=7),
    "classifier_wide": dict(kind="classifier", ckpt="classifier_small.ckpt", seed=8,
                            n_train=90, n_test=21, n_features=13, n_classes=5, nan=True,
                            n_estimators=4, random_state=123),
    "classifier_duplicates": dict(kind="classifier", ckpt="classifier_small.ckpt", seed=9,
                                  n_train=45, n_test=8, n_features=9, n_classes=2, nan=True,
                                  dup=True, n_estimators=3, random_state=5),
    "regressor": dict(kind="regressor", ckpt="regressor_small.ckpt", seed=4, n_train=50,
                      n_test=13, n_features=4, nan=True, n_estimators=8, random_state=0),
    "regressor_odd": dict(kind="regressor", ckpt="regressor_small.ckpt", seed=5, n_train=40,
                          n_test=9, n_features=3, nan=False, n_estimators=7, random_state=11),
}


RECORDED: list[tuple[np.ndarray, np.ndarray, list[int]]] = []
_gpu = tabpfn.inference._maybe_run_gpu_preprocessing


def _recording_gpu(X, gpu_preprocessor, feature_schema, **kwargs):
    """Records each member's tensor before and after the package's torch steps."""
    out, schema = _gpu(X, gpu_preprocessor, feature_schema, **kwargs)
    RECORDED.append((X[:, 0].numpy().copy(), out[:, 0].numpy().copy(),
                     list(schema.indices_for(FeatureModality.CATEGORICAL))))
    return out, schema


tabpfn.inference._maybe_run_gpu_preprocessing = _recording_gpu


def make(case: str, o: dict) -> dict:
    x_train, x_test = table(o["seed"], o["n_train"], o["n_test"], o["n_features"], o["nan"],
                            o.get("low_card", 0), o.get("constant", False), o.get("infs", False),
                            o.get("dup", False))
    rng = np.random.default_rng(o["seed"] + 100)
    common = dict(model_path=str(DATA / o["ckpt"]), device="cpu", fit_mode="low_memory",
                  random_state=o["random_state"], n_estimators=o["n_estimators"],
                  inference_precision=torch.float32)
    if o.get("infs"):  # the package refuses ±inf cells unless told to pass them through
        common["inference_config"] = {"PASSTHROUGH_INF": True}
    if o["kind"] == "classifier":
        y = rng.integers(0, o["n_classes"], o["n_train"])
        y[: o["n_classes"]] = np.arange(o["n_classes"])
        est = TabPFNClassifier(**common).fit(x_train, y)
    else:
        y = x_train[:, 1] * 0.3 + rng.standard_normal(o["n_train"])
        y = np.nan_to_num(y)
        est = TabPFNRegressor(**common).fit(x_train, y)
    cfg = est.inference_config_
    transforms = list(cfg.PREPROCESS_TRANSFORMS)
    members = est.ensemble_configs_
    out = dict(X_train=x_train, y_train=y, X_test=x_test,
               feature_shifts=np.array([m.feature_shift_count for m in members]),
               config_index=np.array([transforms.index(m.preprocess_config) for m in members]),
               pipeline_seeds=np.asarray(est.ensemble_preprocessor_.pipeline_seeds),
               modalities=np.array([MODALITY[f.modality]
                                    for f in est.inferred_feature_schema_.features]))
    if o["kind"] == "classifier":
        out["class_perms"] = np.stack([m.class_permutation for m in members])
    else:
        names = list(cfg.REGRESSION_Y_PREPROCESS_TRANSFORMS)
        named = [i for i, n in enumerate(names) if n is not None]
        assert len(named) == 1, names  # a member's transform is a copy: told apart by None

        def target_index(t) -> int:
            return names.index(None) if t is None else named[0]

        out["target_index"] = np.array([target_index(m.target_transform) for m in members])
        o["target_transforms"] = names
    schema = est.inferred_feature_schema_
    clean_train = np.asarray(est.executor_.X_train, dtype=np.float64)
    clean_test = np.asarray(clean_data_transform(
        x_test, cat_indices=schema.indices_for(FeatureModality.CATEGORICAL),
        ord_encoder=est.ordinal_encoder_), dtype=np.float64)
    out["clean_train"], out["clean_test"] = clean_train, clean_test
    for i, pipe in enumerate(est.ensemble_preprocessor_.pipelines):
        steps = pipe._raw_steps
        reshape = steps[1]
        if reshape.transform_name not in ("squashing_scaler_default", "quantile_uni_coarse",
                                          "none"):
            continue
        part = PreprocessingPipeline(steps[:2])
        tr = part.fit_transform(clean_train, schema).X
        te = part.transform(clean_test).X
        out[f"kept_{i}"] = np.asarray(steps[0].sel_, dtype=bool)
        out[f"reshape_train_{i}"] = np.asarray(tr, dtype=np.float64)
        out[f"reshape_test_{i}"] = np.asarray(te, dtype=np.float64)
        part = PreprocessingPipeline(steps[:3])
        out[f"encode_train_{i}"] = np.asarray(part.fit_transform(clean_train, schema).X,
                                              dtype=np.float64)
        out[f"encode_test_{i}"] = np.asarray(part.transform(clean_test).X, dtype=np.float64)
        full = pipe.fit_transform(clean_train, schema).X
        out[f"member_train_{i}"] = np.asarray(full, dtype=np.float64)
        out[f"member_test_{i}"] = np.asarray(pipe.transform(clean_test).X, dtype=np.float64)
        if len(steps) > 3 and isinstance(steps[3], AddSVDFeaturesStep):
            part = PreprocessingPipeline(steps[:4])
            out[f"svd_train_{i}"] = np.asarray(part.fit_transform(clean_train, schema).X,
                                               dtype=np.float64)
            out[f"svd_test_{i}"] = np.asarray(part.transform(clean_test).X, dtype=np.float64)
    # the model inputs: predict once, match each recorded tensor to its member by its rows
    RECORDED.clear()
    if o["kind"] == "classifier":
        est.predict_proba(x_test)
    else:
        est.predict(x_test)
    for i in range(len(members) if not o.get("infs") else 0):  # (±inf: not recorded)
        full = np.vstack([out[f"member_train_{i}"], out[f"member_test_{i}"]]).astype(np.float32)
        hits = [r for r in RECORDED if r[0].shape == full.shape
                and np.array_equal(r[0], full, equal_nan=True)]
        assert len(hits) >= 1, (case, i)
        out[f"model_x_{i}"] = hits[0][1]
        out[f"model_categorical_{i}"] = np.array(hits[0][2], dtype=np.int64)
    o["outlier_removal_std"] = members[0].outlier_removal_std
    o["n_estimators_used"] = int(est.n_estimators_)
    o["transforms"] = [dict(name=t.name, categorical_name=t.categorical_name,
                            append_original=t.append_original,
                            global_transformer_name=t.global_transformer_name,
                            max_features_per_estimator=t.max_features_per_estimator)
                       for t in transforms]
    o["class_shift_method"] = cfg.CLASS_SHIFT_METHOD
    o["feature_shift_method"] = cfg.FEATURE_SHIFT_METHOD
    return out


def main() -> None:
    manifest = {"versions": {p: importlib.metadata.version(p)
                             for p in ("tabpfn", "torch", "numpy", "scikit-learn", "scipy")},
                "cases": {}}
    for case, o in CASES.items():
        o = dict(o)
        arrays = make(case, o)
        np.savez_compressed(DATA / f"preprocessing_{case}.npz", **arrays)
        manifest["cases"][case] = o
    # the "rotate" class shift, straight from the package's generator (M, C, seed)
    rotate = {f"rotate_{m}_{c}_{seed}": _generate_class_permutations(
        num_estimators=m, class_shift_method="rotate", n_classes=c,
        rng=np.random.default_rng(seed)) for m, c, seed in ((8, 3, 0), (5, 7, 9), (12, 10, 42))}
    np.savez_compressed(DATA / "preprocessing_rotate.npz",
                        **{k: np.stack(v) for k, v in rotate.items()})
    (DATA / "preprocessing.json").write_text(json.dumps(manifest, indent=1) + "\n")


if __name__ == "__main__":
    main()
