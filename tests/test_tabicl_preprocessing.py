"""TabICL's preprocessing and ensemble (arenalite.models.tabicl.preprocessing / .ensemble).

The fixtures (scripts/make_tabicl_preprocessing_fixtures.py) hold what ``tabicl`` 2.2.0's
wrappers fed the model per member and what their aggregation made of known member
outputs; the numpy reference must give the same within 1e-6 (it gives them bit for bit).
No torch or scikit-learn here.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from arenalite.models.tabicl import ensemble as E
from arenalite.models.tabicl import preprocessing as P

DATA = Path(__file__).resolve().parent / "data" / "tabicl"
CASES = sorted(p.stem.removeprefix("preprocessing_") for p in DATA.glob("preprocessing_*.npz"))
TAIL_ALPHAS = [0.0002, 0.0007, 0.05, 0.5, 0.9993, 0.9999]
TOL = 1e-6


def load(case: str):
    d = dict(np.load(DATA / f"preprocessing_{case}.npz"))
    options = json.loads(str(d.pop("options")))
    task = options.pop("task")
    plan = E.fit_members(d["X_train"], d["y_train"], task, **options)
    # The package orders its method groups as a Python set iterates; ours by first use.
    groups = list(dict.fromkeys(plan.methods))
    methods = list(d["methods"])
    order = sorted(range(len(methods)), key=lambda i: (groups.index(methods[i]), i))
    return d, plan, np.array(order)


def test_fixtures_present():
    assert {"binary", "multiclass3", "many13", "regression", "nan_constant", "one_feature",
            "two_features_regression", "skew_outliers", "multiclass3_seed0"} <= set(CASES)


@pytest.mark.parametrize("case", CASES)
def test_member_inputs_match_package(case):
    d, plan, order = load(case)
    inputs = E.member_inputs(plan, d["X_test"])
    assert plan.methods == tuple(d["methods"][order])
    assert np.array_equal(plan.feature_perms, d["feature_perms"][order])
    assert np.array_equal(inputs.feature_perms, plan.feature_perms)
    if plan.class_perms is not None:
        assert np.array_equal(plan.class_perms, d["class_perms"][order])
    assert inputs.x.dtype == np.float32 and inputs.y_train.dtype == np.float32
    assert inputs.x.shape == d["member_x"].shape
    assert np.abs(inputs.x - d["member_x"][order]).max() <= TOL
    assert np.abs(inputs.y_train - d["member_y"][order]).max() <= TOL
    if "lambdas" in d:
        # λ sits at a flat optimum: another libm (wasm32's log1p/expm1) moves it by ~3e-8
        # while the transformed inputs above stay within TOL
        assert np.allclose(plan.pipelines["power"].power.lambdas, d["lambdas"], rtol=0, atol=1e-6)


@pytest.mark.parametrize("case", [c for c in CASES if "regression" not in c])
def test_proba_match_package(case):
    d, plan, order = load(case)
    proba = E.aggregate_proba(d["outputs"][order], plan)
    assert proba.dtype == np.float32
    assert np.abs(proba - d["proba"]).max() <= TOL
    assert np.array_equal(plan.classes, np.unique(d["y_train"]))


@pytest.mark.parametrize("case", [c for c in CASES if "regression" in c])
def test_regression_match_package(case):
    d, plan, order = load(case)
    raw = d["outputs"][order]
    torch_levels = np.load(DATA / "preprocessing_alpha_levels.npy")
    for kind in E.OUTPUT_TYPES:
        want = d[f"pred_{kind}"]
        scale = max(1.0, float(np.abs(want).max()))
        for levels in (None, torch_levels):
            got = E.predict_regression(raw, plan, kind, alpha_levels=levels)
            assert got.shape == want.shape
            assert np.abs(got - want).max() <= TOL * scale, kind
    got = E.predict_regression(raw, plan, "quantiles", alphas=TAIL_ALPHAS,
                               alpha_levels=torch_levels)
    want = d["tails_quantiles"]
    assert np.abs(got - want).max() <= TOL * max(1.0, float(np.abs(want).max()))
    both = E.predict_regression(raw, plan, ["mean", "median"])
    assert set(both) == {"mean", "median"}


def test_alpha_levels_within_an_ulp_of_torch():
    torch_levels = np.load(DATA / "preprocessing_alpha_levels.npy")
    ours = E.default_alpha_levels()
    assert ours.shape == torch_levels.shape == (E.NUM_QUANTILES,)
    assert np.abs(ours - torch_levels).max() <= 6e-8


# ---- the RNG draws ----

@pytest.mark.parametrize("n", [1, 2, 3, 5, 8, 13])
def test_latin_square_is_latin(n):
    rows = np.array(E.latin_square(n, random.Random(42)))
    assert rows.shape == (n, n)
    full = np.arange(n)
    assert all(np.array_equal(np.sort(r), full) for r in rows)
    assert all(np.array_equal(np.sort(c), full) for c in rows.T)


def test_shuffle_patterns():
    assert E.shuffle_patterns(4, "shift", 8, 42) == [[0, 1, 2, 3], [3, 0, 1, 2], [2, 3, 0, 1],
                                                     [1, 2, 3, 0]]
    assert E.shuffle_patterns(4, "none", 8, 42) == [[0, 1, 2, 3]]
    assert E.shuffle_patterns(4, "latin", 1, 42) == [[0, 1, 2, 3]]
    rnd = E.shuffle_patterns(4, "random", 5, 42)
    assert len(rnd) == 5 and len({tuple(p) for p in rnd}) == 5
    assert len(E.shuffle_patterns(9, "random", 3, 42)) == 3
    assert E.shuffle_patterns(6, "latin", 8, 7) == E.shuffle_patterns(6, "latin", 8, 7)


def test_member_count_and_grouping():
    members = E.draw_members(1, 2, 8, ("none", "power"), "latin", "shift", 42)
    assert [m for m, _, _ in members] == ["none", "none", "power", "power"]
    members = E.draw_members(5, None, 8, ("power", "none"), "latin", "shift", 42)
    assert [m for m, _, _ in members] == ["power"] * 4 + ["none"] * 4
    members = E.draw_members(5, 3, 3, ("none", "power"), "latin", "shift", 42)
    assert [m for m, _, _ in members] == ["none", "none", "power"]


# ---- properties of the aggregation ----

def small_plan(n_classes=3, seed=0, **kw):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(30, 4))
    y = np.arange(30) % n_classes
    return E.fit_members(x, y, "multiclass", **kw), rng.normal(size=(5, 4))


def test_unshift_inverts_the_class_shift():
    plan, _ = small_plan(4)
    true = np.random.default_rng(1).normal(size=(6, 4)).astype(np.float32)
    # member i shows original class c as class perm[c]: its column perm[c] holds c's logit
    shown = np.empty((plan.n_members, 6, 4), dtype=np.float32)
    for i, perm in enumerate(plan.class_perms):
        shown[i][:, perm] = true
    assert np.array_equal(E.unshift(shown, plan.class_perms),
                          np.repeat(true[None], plan.n_members, 0))
    proba = E.aggregate_proba(shown, plan)
    assert np.allclose(proba, E.softmax(true, 0.9), atol=1e-6)


def test_member_labels_are_shifted():
    plan, xt = small_plan(3)
    inputs = E.member_inputs(plan, xt)
    for perm, y in zip(plan.class_perms, inputs.y_train, strict=True):
        assert np.array_equal(y, perm[plan.y_train].astype(np.float32))


def test_proba_rows_sum_to_one():
    plan, _ = small_plan(5)
    logits = np.random.default_rng(2).normal(0, 5, (plan.n_members, 7, 5))
    for average_logits in (True, False):
        out = logits if average_logits else E.softmax(logits)
        p = E.aggregate_proba(out, plan, average_logits=average_logits)
        assert p.shape == (7, 5) and (p >= 0).all()
        assert np.allclose(p.sum(axis=1), 1, atol=1e-6)


def test_member_x_is_a_column_permutation():
    plan, xt = small_plan(3)
    inputs = E.member_inputs(plan, xt)
    methods = np.array(plan.methods)
    first = {m: int(np.flatnonzero(methods == m)[0]) for m in plan.pipelines}
    for i, (m, perm) in enumerate(zip(plan.methods, plan.feature_perms, strict=True)):
        j = first[m]
        back = np.empty_like(inputs.x[i])
        back[:, perm] = inputs.x[i]
        base = np.empty_like(inputs.x[j])
        base[:, plan.feature_perms[j]] = inputs.x[j]
        assert np.array_equal(back, base)
    assert sum(len(b) for b in E.model_batches(plan)) == plan.n_members


# ---- properties of the preprocessing ----

def test_yeo_johnson_matches_scipy():
    rng = np.random.default_rng(3)
    for x in (rng.lognormal(0, 1.5, 80), -rng.exponential(2, 50), rng.normal(size=40),
              rng.standard_t(2, 60)):
        lam = P.yeo_johnson_lambda(x)
        assert abs(lam - stats.yeojohnson_normmax(x)) <= 1e-6  # 1e-12 in CPython; see above
        assert np.allclose(P.yeo_johnson(x, lam), stats.yeojohnson(x, lam), rtol=1e-14, atol=0)
    assert P.yeo_johnson_lambda(np.zeros(5)) == 1.0


def test_imputation_and_constant_columns():
    x = np.array([[1.0, 5.0, np.nan, 2.0], [3.0, 5.0, np.nan, np.nan],
                  [np.nan, 5.0, np.nan, 2.0], [2.0, 5.0, np.nan, 2.0]])
    means = P.impute_means(x)
    assert np.array_equal(means, [2.0, 5.0, 0.0, 2.0])
    assert np.array_equal(P.kept_features(P.impute(x, means)), [True, False, False, False])
    assert np.array_equal(P.kept_features(np.ones((3, 2))), [True, False])
    plan = E.fit_members(x, [0, 1, 0, 1], "binary")
    inputs = E.member_inputs(plan, [[np.nan, 0, 0, 0]])
    assert inputs.x.shape[2] == 1 and np.isfinite(inputs.x).all()


def test_power_overflow_falls_back_to_clipping():
    rng = np.random.default_rng(4)
    fit = P.fit_pipeline(rng.normal(size=(20, 2)), "power")
    big = P.PowerFit(np.array([200.0, 1.0]), fit.power.constant, fit.power.mean, fit.power.scale)
    fit = P.PipelineFit(**{**fit.__dict__, "power": big})
    out = P.transform(fit, np.array([[1e3, 0.0], [0.0, 0.0]]))
    assert np.isfinite(out).all()


def test_regression_targets():
    y = np.array([3.0, 3.0, 3.0])
    scaled, mean, scale = E.scale_targets(y)
    assert scale == 1.0 and mean == 3.0 and np.array_equal(scaled, np.zeros(3, np.float32))
    plan = E.fit_members(np.arange(6.0)[:, None], [1.0, 2, 3, 4, 5, 6], "regression")
    assert plan.class_perms is None and plan.y_train.dtype == np.float32
    assert abs(float(plan.y_train.mean())) < 1e-6 and abs(float(plan.y_train.std()) - 1) < 1e-6
    stats_ = np.zeros((plan.n_members, 2), np.float32)
    assert np.allclose(E.aggregate_regression(stats_, plan), 3.5)


def test_quantile_summary():
    levels = E.default_alpha_levels(9)
    q = np.array([[0.3, 0.1, 0.2, 0.4, 0.5, 0.6, 0.7, 0.9, 0.8]], np.float32)
    assert np.array_equal(E.quantile_summary(q, "raw_quantiles", alpha_levels=levels)[0],
                          np.sort(q[0]))
    assert np.allclose(E.quantile_summary(q, "median", alpha_levels=levels), 0.5)
    grid = np.linspace(0.001, 0.999, 50)
    vals = E.quantile_summary(q, "quantiles", alphas=grid, alpha_levels=levels)[0]
    assert (np.diff(vals) >= 0).all()
    assert np.allclose(E.quantile_summary(q, "quantiles", alphas=levels, alpha_levels=levels)[0],
                       np.sort(q[0]))


# ---- bad inputs ----

@pytest.mark.parametrize("args, kwargs, error, words", [
    (([[1.0], [2.0]], [0, np.nan], "binary"), {}, ValueError, "y_train"),
    (([[1.0], [2.0]], [0.0, np.inf], "regression"), {}, ValueError, "y_train"),
    (([[1.0], [2.0]], [0.0, 1e39], "regression"), {}, ValueError, "float32"),
    (([1.0, 2.0], [0, 1], "binary"), {}, ValueError, "2-dimensional"),
    (([[1.0], [2.0]], [0, 1, 1], "binary"), {}, ValueError, "3 values"),
    (([[1.0], [np.inf]], [0, 1], "binary"), {}, ValueError, "X_train"),
    (([["a"], ["b"]], [0, 1], "binary"), {}, TypeError, "X_train"),
    (([[1.0], [2.0]], [0, 1], "ranking"), {}, ValueError, "task"),
    (([[1.0], [2.0], [3.0]], [0, 1, 2], "binary"), {}, ValueError, "exactly 2"),
    (([[1.0], [2.0]], [1, 1], "binary"), {}, ValueError, "single class"),
    (([[1.0], [2.0]], [0.5, 1.0], "binary"), {}, ValueError, "non-integer"),
    (([[1.0], [2.0]], [0, 1], "binary"), {"n_estimators": 0}, ValueError, "n_estimators"),
    (([[1.0], [2.0]], [0, 1], "binary"), {"n_estimators": True}, TypeError, "n_estimators"),
    (([[1.0], [2.0]], [0, 1], "binary"), {"norm_methods": ["quantile"]}, ValueError,
     "norm_methods"),
    (([[1.0], [2.0]], [0, 1], "binary"), {"feat_shuffle_method": "x"}, ValueError,
     "feat_shuffle_method"),
    (([[1.0], [2.0]], [0, 1], "binary"), {"outlier_threshold": -1.0}, ValueError,
     "outlier_threshold"),
    (([[1.0], [2.0]], [0, 1], "binary"), {"random_state": 1.5}, TypeError, "random_state"),
])
def test_bad_fit_inputs(args, kwargs, error, words):
    with pytest.raises(error, match=words):
        E.fit_members(*args, **kwargs)


def test_many_classes_need_support():
    x = np.arange(24.0)[:, None]
    plan = E.fit_members(x, np.arange(24) % 12, "multiclass")
    assert plan.many_classes and plan.class_perms.shape[1] == 12
    with pytest.raises(ValueError, match="support_many_classes"):
        E.fit_members(x, np.arange(24) % 12, "multiclass", support_many_classes=False)


def test_bad_predict_inputs():
    plan, xt = small_plan(3)
    with pytest.raises(ValueError, match="X_test has 3 feature columns"):
        E.member_inputs(plan, xt[:, :3])
    with pytest.raises(ValueError, match="members"):
        E.aggregate_proba(np.zeros((2, 5, 3)), plan)
    with pytest.raises(ValueError, match="classes"):
        E.aggregate_proba(np.zeros((plan.n_members, 5, 4)), plan)
    with pytest.raises(ValueError, match="non-finite"):
        E.aggregate_proba(np.full((plan.n_members, 5, 3), np.nan), plan)
    with pytest.raises(ValueError, match="softmax_temperature"):
        E.aggregate_proba(np.zeros((plan.n_members, 5, 3)), plan, softmax_temperature=0)
    with pytest.raises(ValueError, match="regression plan"):
        E.aggregate_regression(np.zeros((plan.n_members, 5)), plan)
    reg = E.fit_members(xt, np.arange(5.0), "regression")
    with pytest.raises(ValueError, match="classification plan"):
        E.aggregate_proba(np.zeros((reg.n_members, 5, 3)), reg)
    with pytest.raises(ValueError, match="output_type"):
        E.predict_regression(np.zeros((reg.n_members, 2, 9)), reg, "mode")
