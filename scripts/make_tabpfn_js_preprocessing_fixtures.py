"""Write tests/data/tabpfn/js/preprocessing.json: what arenalite's numpy TabPFN pipeline
(pkg/arenalite/models/tabpfn/{ensemble,preprocessing,regression,predictor}.py) makes of a
few tables, for the JavaScript twin (webgpu_bridge/src/tabpfn/) to be tested against.

Per case (a table, a task, an inference config's member configs and settings): the members'
draws, the modalities, the cleaned rows, and per member its CPU pipeline's training and test
rows (float64), its categorical columns, its output columns' sources, the fingerprint
column's position and values, and the model input (float32, the soft clip included);
regression cases also each member's target fit and model ``y_train``, and the aggregation of
seeded random logits (``predict_from_logits``: mean, median, mode, quantiles) with the
member borders. The tables: the package fixtures' inputs of tests/data/tabpfn/preprocessing_*.npz
and hostile ones (NaN, ±inf, text-coded categorical columns, constant and all-NaN columns,
duplicate rows), under the checkpoints' configs and configs that reach the other ported
transforms (power, robust, the quantile presets, originals appended, rotate shifts).

Numbers: float64 as Python's repr, float32 as numpy's shortest float32 repr, NaN / ±inf as
the strings "nan", "inf", "-inf".
Run: ``.venv-pins/bin/python scripts/make_tabpfn_js_preprocessing_fixtures.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from arenalite.models.tabpfn import checkpoint as ck
from arenalite.models.tabpfn import ensemble, predictor, preprocessing, regression

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "tabpfn"
OUT = DATA / "js" / "preprocessing.json"


def f64(a) -> list:
    return [v if np.isfinite(v) else str(v) for v in np.asarray(a, np.float64).ravel().tolist()]


def f32(a) -> list:
    return [float(str(v)) if np.isfinite(v) else str(v)
            for v in np.asarray(a, np.float32).ravel()]


def ints(a) -> list:
    return [int(v) for v in np.asarray(a).ravel()]


def transform(name, categorical="numeric", append=False, svd=None, max_features=500):
    return {**ck.PREPROCESSOR_DEFAULTS, "name": name, "categorical_name": categorical,
            "append_original": append, "global_transformer_name": svd,
            "max_features_per_estimator": max_features}


CLASSIFIER_CFG = ck.read_checkpoint(DATA / "classifier_small.ckpt").inference_config
REGRESSOR_CFG = ck.read_checkpoint(DATA / "regressor_small.ckpt").inference_config
SVD = "svd_quarter_components"
ODD_TRANSFORMS = [transform("safepower", "ordinal_very_common_categories_shuffled", svd="svd"),
                  transform("robust", append=True), transform("quantile_norm", svd=SVD),
                  transform("power"), transform("quantile_uni_fine", append="auto"),
                  transform("quantile_norm_coarse")]


def hostile(seed: int, n_train: int, n_test: int, low_card: int = 0):
    """NaN and ±inf cells, a text-coded column (integer codes, declared categorical), a
    constant and an all-NaN column, duplicated rows."""
    rng = np.random.default_rng(seed)
    n = n_train + n_test
    x = rng.normal(size=(n, 7)) * rng.uniform(0.1, 50, 7)
    x[:, 1] = rng.lognormal(size=n)
    x[:, 2] = rng.integers(0, 6, n)  # a text column's codes
    x[:, 3] = 4.25  # constant
    x[:, 4] = np.nan  # all NaN
    x[rng.random((n, 7)) < 0.08] = np.nan
    x[:, 3] = 4.25
    x[5, 0], x[9, 1], x[n_train + 1, 5], x[n_train + 2, 0] = np.inf, -np.inf, np.inf, -np.inf
    x[12] = x[11]  # a duplicated training row
    for j in range(low_card):
        x[:, 6 - j] = rng.integers(0, 3, n)
    return x[:n_train], x[n_train:], [2]


def cases() -> dict:
    out = {}
    for name in ("classifier", "classifier_categorical", "classifier_categorical_common",
                 "classifier_duplicates", "classifier_nan_constant", "regressor",
                 "regressor_odd"):
        d = np.load(DATA / f"preprocessing_{name}.npz")
        kind = "regression" if name.startswith("regressor") else "classification"
        cfg = REGRESSOR_CFG if kind == "regression" else CLASSIFIER_CFG
        y = d["y_train"]
        out[name] = dict(task=kind, x_train=d["X_train"], x_test=d["X_test"], y_train=y,
                         categorical=None, cfg=cfg, n_estimators=4, random_state=1)
    x_train, x_test, cats = hostile(7, 150, 23, low_card=2)
    y = (np.nan_to_num(x_train[:, 0], posinf=1, neginf=-1) > 0).astype(int) + \
        (np.nan_to_num(x_train[:, 5]) > 1).astype(int)
    out["hostile_classifier"] = dict(task="classification", x_train=x_train, x_test=x_test,
                                     y_train=y, categorical=cats, cfg=CLASSIFIER_CFG,
                                     n_estimators=6, random_state=3)
    out["hostile_classifier_odd"] = dict(
        task="classification", x_train=x_train, x_test=x_test, y_train=y, categorical=cats,
        cfg={**CLASSIFIER_CFG, "PREPROCESS_TRANSFORMS": ODD_TRANSFORMS,
             "FEATURE_SHIFT_METHOD": "rotate", "CLASS_SHIFT_METHOD": "rotate"},
        n_estimators=6, random_state=5)
    x_train, x_test, cats = hostile(11, 60, 15)
    rng = np.random.default_rng(4)
    y = np.exp(rng.normal(size=60)) * 3 + 1
    out["hostile_regressor"] = dict(task="regression", x_train=x_train, x_test=x_test,
                                    y_train=y, categorical=cats, cfg=REGRESSOR_CFG,
                                    n_estimators=4, random_state=2)
    out["hostile_regressor_odd"] = dict(
        task="regression", x_train=x_train, x_test=x_test, y_train=y, categorical=cats,
        cfg={**REGRESSOR_CFG, "PREPROCESS_TRANSFORMS": ODD_TRANSFORMS[:3],
             "REGRESSION_Y_PREPROCESS_TRANSFORMS": (None, "power", "1_plus_log", "safepower"),
             "FINGERPRINT_FEATURE": False, "OUTLIER_REMOVAL_STD": 3.0},
        n_estimators=7, random_state=9)
    return out


def clean_rows(cfg: dict, x_train: np.ndarray, x_test: np.ndarray, categorical):
    """predictor.clean_rows without its ±inf refusal (the member pipeline takes ±inf cells;
    the predictor refuses them before, as the package does without PASSTHROUGH_INF)."""
    transforms = predictor._refuse_unported(cfg, x_train.shape[1])
    modality = preprocessing.modalities(
        x_train, categorical, min_samples=cfg["MIN_NUMBER_SAMPLES_FOR_CATEGORICAL_INFERENCE"],
        max_unique_for_category=cfg["MAX_UNIQUE_FOR_CATEGORICAL_FEATURES"],
        min_unique_for_numerical=cfg["MIN_UNIQUE_FOR_NUMERICAL_FEATURES"])
    fit, train = preprocessing.fit_clean(x_train, modality)
    return predictor.CleanRows(modality, train, preprocessing.clean(fit, x_test), transforms)


def run(case: dict) -> dict:
    cfg = case["cfg"]
    classification = case["task"] == "classification"
    rows = clean_rows(cfg, case["x_train"], case["x_test"], case["categorical"])
    m = case["n_estimators"]
    if classification:
        n_classes = int(np.max(case["y_train"])) + 1
        members = ensemble.draw_members(m, len(rows.transforms), case["random_state"],
                                        n_classes=n_classes,
                                        class_shift_method=cfg["CLASS_SHIFT_METHOD"])
    else:
        targets = list(cfg["REGRESSION_Y_PREPROCESS_TRANSFORMS"])
        members = ensemble.draw_members(m, len(rows.transforms), case["random_state"],
                                        n_target_transforms=len(targets))
    rec = {"task": case["task"], "x_train": f64(case["x_train"]), "x_test": f64(case["x_test"]),
           "shape": [len(case["x_train"]), len(case["x_test"]), case["x_train"].shape[1]],
           "y_train": f64(case["y_train"]), "categorical_indices": case["categorical"],
           "inference_config": {k: (list(v) if isinstance(v, tuple) else v)
                                for k, v in cfg.items()},
           "n_estimators": m, "random_state": case["random_state"],
           "members": {"feature_shifts": ints(members.feature_shifts),
                       "config_index": ints(members.config_index),
                       "class_perms": None if members.class_perms is None
                       else members.class_perms.tolist(),
                       "target_index": None if members.target_index is None
                       else ints(members.target_index),
                       "pipeline_seeds": ints(members.pipeline_seeds)},
           "modality": ints(rows.modality), "clean_train": f64(rows.train),
           "clean_test": f64(rows.test), "member": []}
    outlier = cfg["OUTLIER_REMOVAL_STD"]
    if outlier == "auto":
        kind = "CLASSIFICATION" if classification else "REGRESSION"
        outlier = cfg[f"_{kind}_DEFAULT_OUTLIER_REMOVAL_STD"]
    rec["outlier_std"] = outlier
    logits, fits = [], []
    rng = np.random.default_rng(0)
    borders = ck.read_checkpoint(DATA / "regressor_small.ckpt").borders
    for i in range(m):
        t = rows.transforms[members.config_index[i]]
        fit, train = preprocessing.fit_member(
            rows.train, rows.modality, t["name"], t["categorical_name"],
            int(members.pipeline_seeds[i]), t["append_original"],
            t["max_features_per_estimator"], t["global_transformer_name"],
            add_fingerprint=bool(cfg["FINGERPRINT_FEATURE"]), shuffle=True,
            shift_method=cfg["FEATURE_SHIFT_METHOD"], shift=int(members.feature_shifts[i]))
        test = preprocessing.transform_member(fit, rows.test)
        x = preprocessing.model_input(fit, train, test, outlier)
        fp = None
        if fit.n_cells is not None:
            fp = int(np.flatnonzero(fit.order == train.shape[1] - 1)[0])
        one = {"train": f64(train), "test": f64(test), "cols": train.shape[1],
               "categorical": ints(fit.categorical), "sources": ints(fit.sources),
               "fingerprint_column": fp, "model_input": f32(x)}
        if not classification:
            tfit, y_member = regression.fit_target(case["y_train"],
                                                   targets[members.target_index[i]])
            one["target"] = {"mean": tfit.mean, "std": tfit.std, "lmbda": tfit.lmbda,
                             "scaler_mean": tfit.scaler_mean,
                             "scaler_scale": tfit.scaler_scale, "y": f32(y_member)}
            z = rng.normal(size=(len(rows.test), len(borders) - 1)).astype(np.float32) * 3
            frm, mask = regression.member_borders(tfit, borders)
            one["logits"] = f32(z)
            one["borders"] = f32(frm)
            one["mask"] = None if mask is None else [bool(v) for v in mask]
            logits.append(z)
            fits.append(tfit)
        rec["member"].append(one)
    if not classification:
        temperature = float(cfg["SOFTMAX_TEMPERATURE"])
        main = regression.predict_from_logits(logits, fits, borders, temperature, "main")
        rec["regression"] = {"borders": f32(borders), "temperature": temperature,
                             **{k: f64(main[k]) for k in ("mean", "median", "mode")},
                             "quantiles": [f64(q) for q in main["quantiles"]]}
    return rec


def main() -> None:
    out = {name: run(case) for name, case in cases().items()}
    OUT.write_text(json.dumps(out, separators=(",", ":")) + "\n")
    print(f"wrote {OUT} ({OUT.stat().st_size // 1024} KB, {len(out)} cases)")


if __name__ == "__main__":
    main()
