"""Google TabFM end to end: ``arenalite.models.predict({"name": "tabfm", "weights": DIR,
...})`` against the package's own wrappers, ``TabFMClassifier(tabfm_v1_0_0.load(
"classification", DIR, dtype=None), ...).fit(X, y).predict_proba(X_test)`` and
``TabFMRegressor(...).predict`` (scripts/make_tabfm_wrapper_fixtures.py; a small
random-weight checkpoint, the default 32 members), on numpy arrays and on DataFrames with
text, category, bool, datetime and missing cells and an unseen category; and the refusals.

The bound is 1e-5 (probabilities; regression relative to std y). What is left is float32
round-off of the forward (BLAS sums in another order than torch's kernels); measured, the
largest difference is 1.2e-6.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from arenalite import models
from arenalite.models import tabfm
from arenalite.models.tabfm import ensemble, predictor
from test_tabfm_preprocessing import frames

DATA = Path(__file__).parent / "data" / "tabfm" / "wrappers"
CKPT = DATA / "checkpoint"
CASES = json.loads((DATA / "cases.json").read_text())["cases"]
TOL = 1e-5


def inputs(case: dict) -> tuple[object, object]:
    if case["kind"] == "array":
        return np.array(case["x_train"]), np.array(case["x_test"])
    return frames(case)


@pytest.mark.parametrize("name", list(CASES))
def test_predict_equals_the_package_wrappers(name: str) -> None:
    case = CASES[name]
    x_train, x_test = inputs(case)
    y = np.array(case["y_train"])
    out = models.predict({"name": "tabfm", "weights": str(CKPT), **case["options"]}, x_train,
                         y, x_test, case["task"])
    ref = np.array(case["output"])
    assert out.shape == ref.shape
    scale = float(np.std(y)) if case["task"] == "regression" else 1.0
    assert np.abs(out - ref).max() <= TOL * scale
    if case["task"] != "regression":
        np.testing.assert_allclose(out.sum(axis=1), 1.0, atol=1e-6)


def test_a_class_absent_from_the_context_gets_zero() -> None:
    case = CASES["binary"]
    x_train, x_test = inputs(case)
    out = models.predict({"name": "tabfm", "weights": CKPT, "n_estimators": 2}, x_train,
                         np.array(case["y_train"]) * 2, x_test, "multiclass", 4)
    assert out.shape == (len(x_test), 4)
    assert (out[:, [1, 3]] == 0).all()


def test_the_checkpoints_task_folder_and_its_refusals() -> None:
    case = CASES["regression"]
    x_train, x_test = inputs(case)
    y = np.array(case["y_train"])
    whole = models.predict({"name": "tabfm", "weights": CKPT, "n_estimators": 3}, x_train, y,
                           x_test, "regression")
    folder = models.predict({"name": "tabfm", "weights": CKPT / "regression",
                             "n_estimators": 3}, x_train, y, x_test, "regression")
    np.testing.assert_array_equal(whole, folder)
    with pytest.raises(ValueError, match="is a classification checkpoint, asked for "
                                         "regression"):
        models.predict({"name": "tabfm", "weights": CKPT / "classification"}, x_train, y,
                       x_test, "regression")
    with pytest.raises(ValueError, match="model 'tabfm' needs a Google TabFM checkpoint: "):
        models.predict({"name": "tabfm"}, x_train, y, x_test, "regression")


def test_too_many_classes_refused_before_any_model_call(monkeypatch: pytest.MonkeyPatch
                                                        ) -> None:
    def no_call(*args: object, **kwargs: object) -> None:
        raise AssertionError("the model ran")

    monkeypatch.setattr(predictor, "fit_context", no_call)
    x = np.random.default_rng(0).normal(size=(40, 3))
    with pytest.raises(ValueError, match=r"^The number of classes \(11\) exceeds the maximum "
                                         r"number of classes \(10\) supported by the model\.$"):
        models.predict({"name": "tabfm", "weights": CKPT}, x[:33], np.arange(33) % 11, x[33:],
                       "multiclass")


def test_wider_than_max_num_features_is_subsampled_per_member() -> None:
    """The package does not refuse a wide table: each member sees ``max_num_features``
    (500) distinct columns drawn by the ensemble's generator (the fixture case
    "subsampled" checks the draws against the package at max_num_features=4)."""
    rng = np.random.default_rng(1)
    x = rng.normal(size=(12, 503))
    plan = ensemble.fit_members(x, np.arange(12) % 2, "binary")
    assert plan.patterns.shape == (32, 500)
    assert all(len(set(p)) == 500 for p in plan.patterns.tolist())
    out = models.predict({"name": "tabfm", "weights": CKPT, "n_estimators": 2}, x[:9],
                         np.arange(9) % 2, x[9:], "binary")
    assert out.shape == (3, 2) and np.isfinite(out).all()


def test_unported_options_refused_by_name() -> None:
    x = np.random.default_rng(2).normal(size=(20, 3))
    with pytest.raises(ValueError, match=r"model 'tabfm' has unknown parameters "
                                         r"\['enable_nnls'\]"):
        models.predict({"name": "tabfm", "weights": CKPT, "enable_nnls": True}, x[:15],
                       np.arange(15) % 2, x[15:], "binary")
    net = tabfm.load(CKPT, "classification")
    for option, value in (("norm_methods", "quantile"), ("max_num_rows", 10),
                          ("n_svd_features", "sqrt"), ("ensemble", True)):
        with pytest.raises(ValueError, match=f"tabfm option {option}=.* is not ported"):
            predictor.predict(net, x[:15], np.arange(15) % 2, x[15:], "binary",
                              settings=ensemble.settings_from({option: value}))


def test_nan_in_an_array_is_refused() -> None:
    x = np.random.default_rng(3).normal(size=(20, 3))
    x[4, 1] = np.nan
    with pytest.raises(ValueError, match="non-finite"):
        models.predict({"name": "tabfm", "weights": CKPT}, x[:15], np.arange(15) % 2, x[15:],
                       "binary")


def test_registry_entry() -> None:
    entry = models.registry.entry("tabfm")
    assert entry["runners"] == ["python", "webgpu"]
    assert models.registry.defaults("tabfm") == {
        "weights": None, "n_estimators": 32, "softmax_temperature": 0.9,
        "average_logits": True, "random_state": 42, "outlier_threshold": 4.0,
        "max_num_features": 500, "class_shift": True}
    assert "tabfm" not in models.SPREAD_MODELS and "tabfm" not in models.MISSING_CELL_MODELS
    with pytest.raises(ValueError, match="predicts no spread"):
        models.predict_distribution({"name": "tabfm", "weights": CKPT}, np.ones((3, 2)),
                                    np.arange(3.0), np.ones((1, 2)))


def test_float32_is_near_the_packages_default_bfloat16() -> None:
    """The package's default bfloat16 model is a different arithmetic: the recorded
    distance on the binary case (not a target, a report)."""
    bf = json.loads((DATA / "bfloat16.json").read_text())
    assert 0 < bf["max_abs_probability_difference"] < 0.05


def test_a_query_rows_prediction_does_not_depend_on_the_others() -> None:
    """Preprocessing is row-wise after the context fit and the forward runs query rows in
    fixed blocks: predicting a few rows alone gives exactly their rows of the whole."""
    case = CASES["frame_multiclass"]
    x_train, x_test = inputs(case)
    model = {"name": "tabfm", "weights": CKPT, "n_estimators": 4}
    y = np.array(case["y_train"])
    whole = models.predict(model, x_train, y, x_test, "multiclass")
    part = models.predict(model, x_train, y, x_test.iloc[[5, 0, 11]], "multiclass")
    np.testing.assert_array_equal(part, whole[[5, 0, 11]])


def test_the_converted_file_predicts_as_its_folder(tmp_path: Path) -> None:
    case = CASES["frame_regression"]
    x_train, x_test = inputs(case)
    y = np.array(case["y_train"])
    one = tabfm.convert(CKPT / "regression", tmp_path / "regression.safetensors")
    model = {"name": "tabfm", "n_estimators": 3}
    np.testing.assert_array_equal(
        models.predict({**model, "weights": one}, x_train, y, x_test, "regression"),
        models.predict({**model, "weights": CKPT}, x_train, y, x_test, "regression"))
