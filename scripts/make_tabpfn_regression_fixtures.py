"""Write the fixtures of TabPFN v3's regression target side (tests/test_tabpfn_regression.py).

Needs torch, scikit-learn and ``tabpfn`` 9.2.0 (never installed in CI), e.g.
``.venv-tabpfn/bin/python scripts/make_tabpfn_regression_fixtures.py``. Per case it fits
``TabPFNRegressor(model_path=tests/data/tabpfn/regressor_small.ckpt, device="cpu",
fit_mode="low_memory", inference_precision=torch.float32, random_state=..., n_estimators=...)``
on a small float table and records:

- ``y_train``, ``target_index`` (each member's index into
  ``REGRESSION_Y_PREPROCESS_TRANSFORMS``), ``borders`` (the checkpoint's, as the package holds
  them: ``znorm_space_bardist_.borders``), ``y_mean`` / ``y_std`` (``y_train_mean_`` /
  ``y_train_std_``);
- per member ``m`` (in ``ensemble_configs_`` order): ``member_y_<m>``, the member's target as
  ``_transform_labels_one`` returns it (hooked) and ``logits_<m>``, the model's raw output for
  the test rows (hooked at the executor's ``iter_outputs``, before the temperature),
  ``member_borders_<m>``, the borders ``TabPFNRegressor.forward`` hands back for it;
- ``mean``, ``median``, ``mode`` and ``quantiles`` (at ``QUANTILES``) from
  ``predict(X_test, output_type="full", quantiles=QUANTILES)``, and ``predict_mean`` from a
  plain ``predict(X_test)``.

Also ``regression_transforms.npz``: for each target transform in ``TRANSFORMS``, the package's
own pipeline (``get_all_reshape_feature_distribution_preprocessors``) fitted on the z-scored
``y_train`` of the ``skewed`` case: ``y_<name>`` (its ``fit_transform``), and
``transform_borders_one`` of the checkpoint's borders: ``borders_<name>``, ``mask_<name>``
(all False when it cancels no bucket).

Writes ``tests/data/tabpfn/regression_<case>.npz``, ``regression_transforms.npz`` and
``regression.json`` (versions, cases, options).
"""

from __future__ import annotations

import importlib.metadata
import json
from pathlib import Path

import numpy as np
import tabpfn.preprocessing.transform as transform_module
import torch
from tabpfn import TabPFNRegressor
from tabpfn.preprocessing.steps.reshape_feature_distribution_step import (
    get_all_reshape_feature_distribution_preprocessors,
)
from tabpfn.utils import transform_borders_one

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "tabpfn"
QUANTILES = [0.1, 0.5, 0.9]
TRANSFORMS = ("safepower", "power", "log", "1_plus_log", "exp")

CASES = {
    "plain": dict(seed=21, n_train=60, n_test=12, n_features=4, n_estimators=4,
                  random_state=0, y="normal"),
    "skewed": dict(seed=22, n_train=50, n_test=9, n_features=3, n_estimators=6,
                   random_state=3, y="skewed"),
    "large": dict(seed=23, n_train=80, n_test=15, n_features=5, n_estimators=5,
                  random_state=7, y="large"),
}

LABELS: dict[int, np.ndarray] = {}
OUTPUTS: list[tuple[object, np.ndarray]] = []
_labels = transform_module._transform_labels_one


def _recording_labels(config, y_train):
    """Records each member's target as the package hands it on."""
    out = _labels(config, y_train)
    LABELS[id(config)] = np.array(out, copy=True)
    return out


transform_module._transform_labels_one = _recording_labels


def target(kind: str, x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The training target of a case: normal, skewed positive, or of magnitude 1e4."""
    noise = rng.standard_normal(len(x))
    if kind == "normal":
        return x[:, 0] - 0.5 * x[:, 1] + 0.3 * noise
    if kind == "skewed":
        return np.exp(0.8 * x[:, 0] + 0.6 * noise) + 0.1
    return 2.5e4 + 4e3 * x[:, 1] + 1.5e3 * noise


def make(o: dict) -> dict:
    rng = np.random.default_rng(o["seed"])
    x = rng.standard_normal((o["n_train"] + o["n_test"], o["n_features"]))
    x_train, x_test = x[: o["n_train"]], x[o["n_train"]:]
    y = target(o["y"], x_train, rng)
    est = TabPFNRegressor(model_path=str(DATA / "regressor_small.ckpt"), device="cpu",
                          fit_mode="low_memory", inference_precision=torch.float32,
                          random_state=o["random_state"], n_estimators=o["n_estimators"])
    est.fit(x_train, y)
    members = est.ensemble_configs_
    names = list(est.inference_config_.REGRESSION_Y_PREPROCESS_TRANSFORMS)
    named = [i for i, n in enumerate(names) if n is not None]
    assert len(named) == 1, names  # a member's transform is a copy: told apart by None
    target_index = [names.index(None) if m.target_transform is None else named[0]
                    for m in members]

    iter_outputs = est.executor_.iter_outputs

    def recording_outputs(*args, **kwargs):
        for output, config in iter_outputs(*args, **kwargs):
            OUTPUTS.append((config, output.detach().numpy().copy()))
            yield output, config

    est.executor_.iter_outputs = recording_outputs
    LABELS.clear()
    OUTPUTS.clear()
    full = est.predict(x_test, output_type="full", quantiles=QUANTILES)
    plain = est.predict(x_test)
    OUTPUTS.clear()
    _, _, member_borders = est.forward(x_test, use_inference_mode=True)

    out = dict(X_train=x_train, X_test=x_test, y_train=y,
               target_index=np.array(target_index),
               borders=est.znorm_space_bardist_.borders.numpy(),
               y_mean=np.float64(est.y_train_mean_), y_std=np.float64(est.y_train_std_),
               mean=full["mean"], median=full["median"], mode=full["mode"],
               quantiles=np.stack(full["quantiles"]), predict_mean=plain,
               quantile_levels=np.array(QUANTILES))
    assert len(OUTPUTS) == len(members) == len(member_borders)
    for (config, logits), borders_t in zip(OUTPUTS, member_borders, strict=True):
        m = next(i for i, c in enumerate(members) if c is config)
        out[f"logits_{m}"] = logits.reshape(len(x_test), -1)
        out[f"member_borders_{m}"] = np.asarray(borders_t)
        out[f"member_y_{m}"] = LABELS[id(config)]
    o["target_transforms"] = names
    o["softmax_temperature"] = float(est.softmax_temperature_)
    o["average_before_softmax"] = bool(est.average_before_softmax)
    o["ensemble_softmax_temperature"] = float(est.ensemble_softmax_temperature_)
    o["downsample_correction"] = est.downsample_correction_log_weights_ is not None
    o["fix_nan_borders"] = bool(est.inference_config_.FIX_NAN_BORDERS_AFTER_TARGET_TRANSFORM)
    o["n_estimators_used"] = int(est.n_estimators_)
    o["quantiles"] = QUANTILES
    return out


def transforms(arrays: dict) -> dict:
    """The package's target transforms alone, on one case's z-scored target."""
    y = arrays["y_train"]
    z = (y - np.mean(y)) / (np.std(y) + 1e-20)
    out = {}
    for name in TRANSFORMS:
        pipe = get_all_reshape_feature_distribution_preprocessors(len(y), 0)[name]
        out[f"y_{name}"] = pipe.fit_transform(z.reshape(-1, 1)).ravel()
        mask, descending, borders_t = transform_borders_one(
            arrays["borders"], pipe, repair_nan_borders_after_transform=True)
        assert not descending, name
        out[f"borders_{name}"] = np.asarray(borders_t)
        out[f"mask_{name}"] = (np.zeros(len(borders_t) - 1, bool) if mask is None
                               else np.asarray(mask))
    return out


def main() -> None:
    manifest = {"versions": {p: importlib.metadata.version(p)
                             for p in ("tabpfn", "torch", "numpy", "scikit-learn", "scipy")},
                "checkpoint": "regressor_small.ckpt", "transforms": list(TRANSFORMS), "cases": {}}
    for case, o in CASES.items():
        o = dict(o)
        arrays = make(o)
        np.savez_compressed(DATA / f"regression_{case}.npz", **arrays)
        manifest["cases"][case] = o
        if case == "skewed":
            np.savez_compressed(DATA / "regression_transforms.npz", **transforms(arrays))
    (DATA / "regression.json").write_text(json.dumps(manifest, indent=1) + "\n")


if __name__ == "__main__":
    main()
