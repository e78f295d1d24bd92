"""Google TabFM's preprocessing and ensemble (arenalite.models.tabfm.preprocessing /
.ensemble) against what ``tabfm`` 1.0.1's wrappers computed
(scripts/make_tabfm_wrapper_fixtures.py, tests/data/tabfm/wrappers/): the numeric table
of a DataFrame, the unique filter, every member's draws, the fitted pipelines and the
model's inputs, bit for bit or to float64 round-off; and the aggregation from the
package's own member outputs.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import settings as settings_hyp
from hypothesis import strategies as st

from arenalite.models.tabfm import ensemble as E
from arenalite.models.tabfm import preprocessing as P

DATA = Path(__file__).parent / "data" / "tabfm" / "wrappers"
CASES = json.loads((DATA / "cases.json").read_text())["cases"]


def frames(case: dict) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The case's context and query DataFrames, each column in its recorded dtype."""
    out = []
    for part in ("train", "test"):
        cols = {}
        for name, col in case["frame"].items():
            dtype, cells = col["dtype"], col[part]
            if dtype.startswith("datetime64"):
                cols[name] = pd.to_datetime(pd.Series(cells, dtype=object))
            elif dtype == "category":
                cols[name] = pd.Series(cells, dtype=object).astype("category")
            elif dtype == "object":
                cols[name] = pd.Series(cells, dtype=object)
            elif dtype in ("str", "Int64", "boolean"):  # pandas' nullable dtypes
                cols[name] = pd.Series(cells, dtype=dtype)
            else:
                cols[name] = pd.Series([np.nan if v is None else v for v in cells]).astype(dtype)
        out.append(pd.DataFrame(cols))
    return out[0], out[1]


def tables(name: str) -> tuple[np.ndarray, np.ndarray, int]:
    case = CASES[name]
    if case["kind"] == "array":
        return np.array(case["x_train"]), np.array(case["x_test"]), 0
    return tuple(P.numeric_table(*frames(case)))


def settings(case: dict) -> E.Settings:
    keys = ("n_estimators", "softmax_temperature", "average_logits", "random_state",
            "outlier_threshold", "max_num_features")
    return E.settings_from({k: v for k, v in case["options"].items() if k in keys})


@pytest.mark.parametrize("name", [n for n, c in CASES.items() if c["kind"] == "frame"])
def test_numeric_table_is_transform_to_numerical(name: str) -> None:
    ref = np.load(DATA / f"{name}.npz")
    train, test, n_cat = tables(name)
    assert n_cat == int(ref["n_categorical"])
    np.testing.assert_array_equal(train, ref["numeric_train"])
    np.testing.assert_array_equal(test, ref["numeric_test"])


def test_categories_in_appearance_order_rare_unseen_and_missing_are_minus_one() -> None:
    train = pd.DataFrame({"c": ["b", "a", "b", None, "a", "z", "nan", "nan"], "x": range(8)})
    test = pd.DataFrame({"c": ["a", "b", "z", "q", None], "x": range(5)})
    out = P.numeric_table(train, test)
    assert out.n_categorical == 1
    np.testing.assert_array_equal(out.train[:, 0], [0, 1, 0, -1, 1, -1, -1, -1])
    np.testing.assert_array_equal(out.test[:, 0], [1, 0, -1, -1, -1])


def test_dates_become_their_parts_without_pandas_deprecations() -> None:
    """A date column: its epoch nanoseconds, year, month, day and day of the week (Monday
    0), the missing date filled as the package does; no deprecated pandas accessor."""
    import warnings

    train = pd.DataFrame({"d": pd.to_datetime(["2024-01-01", "2024-02-29", None, "2023-12-31"]),
                          "x": range(4)})
    test = pd.DataFrame({"d": pd.to_datetime(["2024-03-03", None]), "x": range(2)})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = P.numeric_table(train, test)
    np.testing.assert_array_equal(out.train[[0, 1, 3], 2:],  # after x and the timestamp
                                  [[2024, 1, 1, 0], [2024, 2, 29, 3], [2023, 12, 31, 6]])
    np.testing.assert_array_equal(out.test[0, 2:], [2024, 3, 3, 6])
    np.testing.assert_array_equal(out.train[2, 1:], out.test[1, 1:])  # one fill for both


def test_numbers_mean_imputed_and_all_missing_column_dropped() -> None:
    train = pd.DataFrame({"a": [1.0, np.nan, 3.0], "b": [np.nan] * 3, "c": [True, False, True]})
    test = pd.DataFrame({"a": [np.nan], "b": [1.0], "c": [False]})
    out = P.numeric_table(train, test)
    np.testing.assert_array_equal(out.train, [[1, 1], [2, 0], [3, 1]])
    np.testing.assert_array_equal(out.test, [[2, 0]])
    with pytest.raises(ValueError, match="column 'a' has an infinite value inf in row 1"):
        P.numeric_table(pd.DataFrame({"a": [1.0, np.inf]}), pd.DataFrame({"a": [1.0]}))
    with pytest.raises(TypeError, match="X_test column 'a' holds a cell that is no number"):
        P.numeric_table(pd.DataFrame({"a": [1.0, 2.0]}), pd.DataFrame({"a": ["x"]}))


POWER_ON_ANOTHER_LIBM = sys.platform == "wasi"
"""Yeo-Johnson's λ is a Brent search that stops at xtol 1.48e-8, so wasm32's libm (an ulp
apart in the log-likelihood) stops it elsewhere and the "power" members' values move by
~3e-8 (observed in the wasm32 lane), as the package's own run there would. There the
pipelines and the float32 model inputs are compared within 1e-6; bit for bit elsewhere."""
PIPELINE_TOL = 1e-6 if POWER_ON_ANOTHER_LIBM else 1e-12


def assert_inputs_equal(actual: np.ndarray, desired: np.ndarray) -> None:
    if POWER_ON_ANOTHER_LIBM:
        np.testing.assert_allclose(actual, desired, rtol=1e-6, atol=1e-6)
    else:
        np.testing.assert_array_equal(actual, desired)


@pytest.mark.parametrize("name", list(CASES))
def test_members_and_inputs_are_the_packages(name: str) -> None:
    case, ref = CASES[name], np.load(DATA / f"{name}.npz")
    train, test, n_cat = tables(name)
    plan = E.fit_members(train, np.array(case["y_train"]), case["task"], n_cat, settings(case))
    np.testing.assert_array_equal(plan.features, ref["features_kept"])
    np.testing.assert_array_equal(plan.patterns, ref["patterns"])
    np.testing.assert_array_equal(plan.offsets, ref["offsets"])
    assert list(plan.methods) == ref["methods"].tolist()
    kept_test = test[:, plan.features]
    for method, fit in plan.pipelines.items():
        np.testing.assert_allclose(fit.x_train, ref[f"pipeline_{method}_train"],
                                   rtol=PIPELINE_TOL, atol=PIPELINE_TOL)
        np.testing.assert_allclose(P.transform(fit, kept_test), ref[f"pipeline_{method}_test"],
                                   rtol=PIPELINE_TOL, atol=PIPELINE_TOL)
    inputs = E.member_inputs(plan, test)
    assert_inputs_equal(inputs.x, ref["xs"].astype(np.float32))
    np.testing.assert_array_equal(inputs.y_train, ref["ys"].astype(np.float32))
    np.testing.assert_array_equal(inputs.d, ref["ds"])
    np.testing.assert_array_equal(inputs.cat_mask, ref["cat_masks"])
    if case["task"] == "regression":
        assert plan.y_mean == pytest.approx(float(ref["y_mean"][0]), rel=1e-15)
        assert plan.y_scale == pytest.approx(float(ref["y_scale"][0]), rel=1e-15)


@pytest.mark.parametrize("name", list(CASES))
def test_aggregation_of_the_packages_member_outputs(name: str) -> None:
    """From the package's own (un-shifted) member outputs, shifted back to what the model
    returned, the aggregation gives the wrapper's prediction to float32 round-off."""
    case, ref = CASES[name], np.load(DATA / f"{name}.npz")
    train, _, n_cat = tables(name)
    s = settings(case)
    plan = E.fit_members(train, np.array(case["y_train"]), case["task"], n_cat, s)
    raw = ref["raw"]
    if case["task"] == "regression":
        out = E.aggregate_regression(raw[..., np.newaxis], plan)
        np.testing.assert_allclose(out, ref["output"], rtol=0, atol=1e-6 * np.std(case["y_train"]))
        return
    c = raw.shape[-1]
    index = (np.arange(c)[None, :] - plan.offsets[:, None]) % c  # the model's shifted order
    shifted = np.take_along_axis(raw, index[:, None, :], axis=2)
    np.testing.assert_array_equal(E.unshift(shifted, plan.offsets), raw)
    out = E.aggregate_proba(shifted, plan, s.softmax_temperature, s.average_logits)
    np.testing.assert_allclose(out, ref["output"], rtol=0, atol=1e-6)


def test_shuffles_cycle_when_fewer_permutations_than_members() -> None:
    members = E.draw_members(2, 3, E.Settings(n_estimators=5))
    assert [m[0] for m in members] == ["none"] * 3 + ["power"] * 2
    assert sorted(tuple(m[1]) for m in members) == [(0, 1)] * 3 + [(1, 0)] * 2 or \
        sorted(tuple(m[1]) for m in members) == [(0, 1)] * 2 + [(1, 0)] * 3


def test_too_many_classes_refused_with_the_packages_message() -> None:
    x = np.random.default_rng(0).normal(size=(30, 3))
    with pytest.raises(ValueError, match=r"The number of classes \(11\) exceeds the maximum "
                                         r"number of classes \(10\) supported by the model"):
        E.fit_members(x, np.arange(30) % 11, "multiclass", max_classes=10)


def test_nan_in_an_array_refused_as_the_package_does() -> None:
    x = np.ones((4, 2))
    x[2, 1] = np.nan
    with pytest.raises(ValueError, match="non-finite value nan in row 2, column 1"):
        E.fit_members(x, np.array([0, 1, 0, 1]), "binary")


@pytest.mark.parametrize(("option", "value"), [
    ("norm_methods", ["none", "quantile"]), ("norm_methods", "robust"),
    ("permute_categorical", True), ("max_num_rows", 100), ("n_feature_crosses", "sqrt"),
    ("n_svd_features", "sqrt"), ("total_svd_pool", 8), ("enable_nnls", True),
    ("binary_calibration_method", "platt"), ("multiclass_calibration_method", "vector"),
    ("cat_encoder_mode", "frequency"), ("ensemble", True)])
def test_unported_options_refused_by_name(option: str, value: object) -> None:
    with pytest.raises(ValueError, match=f"tabfm option {option}=.* is not ported"):
        E.settings_from({option: value})


def test_ported_and_ignored_options() -> None:
    assert E.settings_from({}) == E.Settings()
    s = E.settings_from({"norm_methods": "power", "batch_size": 4, "use_amp": False,
                         "class_shift": False, "max_num_features": None})
    assert s.norm_methods == ("power",) and not s.class_shift and s.max_num_features is None
    with pytest.raises(ValueError, match="unknown tabfm option 'zz'"):
        E.settings_from({"zz": 1})
    with pytest.raises(ValueError, match="'n_estimators' must be an integer ≥ 1, got 0"):
        E.settings_from({"n_estimators": 0})


@settings_hyp(max_examples=60, deadline=None)
@given(st.integers(1, 12), st.integers(0, 6), st.integers(1, 40), st.integers(0, 2**31),
       st.sampled_from([None, 3, 500]))
def test_draws_are_permutations_and_balanced(n_features: int, n_classes: int, n_est: int,
                                             seed: int, max_features: int | None) -> None:
    s = E.Settings(n_estimators=n_est, random_state=seed, max_num_features=max_features)
    members = E.draw_members(n_features, n_classes, s)
    assert len(members) == n_est
    k = n_features if max_features is None else min(n_features, max_features)
    for _, pattern, offset in members:
        assert len(pattern) == len(set(pattern)) == k and set(pattern) <= set(range(n_features))
        assert 0 <= offset < max(n_classes, 1)
    methods = [m for m, _, _ in members]
    assert methods == ["none"] * ((n_est + 1) // 2) + ["power"] * (n_est // 2)
    if n_classes > 1 and n_est > 1:  # each shift equally often, up to the last cycle
        counts = np.bincount([o for _, _, o in members], minlength=n_classes)
        assert counts.max() - counts.min() <= 1
