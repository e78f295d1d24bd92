"""TabPFN v3 end to end: arenalite's classifier against the package's ``predict_proba``
(fixtures by scripts/make_tabpfn_wrapper_fixtures.py, tabpfn 9.2.0, the small
random-weight checkpoint), the aggregation's invariants and the refusals."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from arenalite.models import tabpfn
from arenalite.models.tabpfn import predictor as P

DATA = Path(__file__).resolve().parent / "data" / "tabpfn"
MANIFEST = json.loads((DATA / "wrapper.json").read_text())
CASES = sorted(MANIFEST["cases"])
MODEL = tabpfn.load(DATA / "classifier_small.ckpt")
REGRESSOR = tabpfn.load(DATA / "regressor_small.ckpt")


def settings(options: dict) -> P.Settings:
    return P.Settings(**options)


@pytest.mark.parametrize("case", CASES)
def test_predict_proba_equals_the_package(case):
    d = dict(np.load(DATA / f"wrapper_{case}.npz"))
    o = MANIFEST["cases"][case]
    ours = P.predict_proba(MODEL, d["X_train"], d["y_train"], d["X_test"], o["n_classes"],
                           settings(o["options"]))
    assert ours.shape == d["proba"].shape
    # 1e-4, not 1e-7: a member's fingerprint hashes its rows rounded to 12 decimals, and
    # float64 noise from the machine's BLAS kernels (AVX-512 OpenBLAS, wasm32's reference
    # BLAS) flips a row's hash where a value sits on a rounding boundary, as it would the
    # package's own on that machine (observed: 5.4e-5 with one training row's hash flipped;
    # 3e-8 with OpenBLAS's Haswell kernels, as on the machine that made the fixtures)
    assert np.abs(ours - d["proba"]).max() <= 1e-4
    assert np.allclose(ours.sum(axis=1), 1.0)


def test_member_count_follows_the_package():
    o = MANIFEST["cases"]["auto_members"]
    assert P.n_members(None, MODEL.inference_config) == o["n_estimators_used"]
    assert P.n_members(5, MODEL.inference_config) == 5


def test_probabilities_properties():
    rng = np.random.default_rng(0)
    z = rng.standard_normal((4, 9, 3)).astype(np.float32) * 3
    for before in (False, True):
        p = P.probabilities(z, 0.9, before)
        assert p.shape == (9, 3) and np.allclose(p.sum(axis=1), 1) and (p > 0).all()
    one = P.probabilities(z[:1], 1.0)
    e = np.exp(z[0] - z[0].max(axis=1, keepdims=True))
    assert np.allclose(one, e / e.sum(axis=1, keepdims=True), atol=1e-6)
    # shifting every logit of a row by a constant changes nothing
    assert np.allclose(P.probabilities(z + 5, 0.9), P.probabilities(z, 0.9), atol=1e-6)
    flat = P.probabilities(z, 0.9, class_counts=np.array([1.0, 1.0, 1.0]))
    assert np.allclose(flat, P.probabilities(z, 0.9), atol=1e-6)


def test_refusals():
    x = np.random.default_rng(1).standard_normal((20, 3))
    y = np.arange(20) % 2
    bad = x.copy()
    bad[4, 2] = np.inf
    with pytest.raises(ValueError, match=r"X_train has an infinite value inf at row 4, column 2"):
        P.predict_proba(MODEL, bad, y, x[:3], 2)
    with pytest.raises(ValueError, match="task 'regression' needs a TabPFN v3 regressor"):
        P.check_task(MODEL, "regression", "checkpoint 'c.ckpt'")
    with pytest.raises(ValueError, match="is a TabPFN v3 regressor"):
        P.check_task(REGRESSOR, "binary", "checkpoint 'r.ckpt'")
    with pytest.raises(ValueError, match="at most"):
        P.predict_proba(MODEL, x, np.arange(20) % 12, x[:3], 12)
    wide = dict(MODEL.inference_config)
    wide["SUBSAMPLE_SAMPLES"] = 10
    odd = tabpfn.TabPFNModel(MODEL.config, MODEL.tensors, wide)
    with pytest.raises(ValueError, match="SUBSAMPLE_SAMPLES=10"):
        P.predict_proba(odd, x, y, x[:3], 2)



REGRESSION = json.loads((DATA / "regression.json").read_text())


def close(a, b, tol):
    """Within tol, relative where |b| > 1."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return np.abs(a - b).max() <= tol * max(1.0, float(np.abs(b).max()))


@pytest.mark.parametrize("case", sorted(REGRESSION["cases"]))
def test_predict_regression_equals_the_package(case):
    """From the raw rows: the members' logits and ``TabPFNRegressor.predict``'s outputs
    (fixtures of scripts/make_tabpfn_regression_fixtures.py); 1e-4: see the classifier."""
    d = dict(np.load(DATA / f"regression_{case}.npz"))
    o = REGRESSION["cases"][case]
    settings = P.Settings(n_estimators=o["n_estimators"], random_state=o["random_state"])
    logits, fits = P.regression_members(REGRESSOR, d["X_train"], d["y_train"], d["X_test"],
                                        settings)
    assert len(logits) == o["n_estimators_used"]
    for i, z in enumerate(logits):
        assert z.dtype == np.float32 and close(z, d[f"logits_{i}"], 1e-4), i
    assert close(P.predict_regression(REGRESSOR, d["X_train"], d["y_train"], d["X_test"],
                                      settings), d["predict_mean"], 1e-4)
    main = P.predict_regression(REGRESSOR, d["X_train"], d["y_train"], d["X_test"], settings,
                                "main", [float(q) for q in d["quantile_levels"]])
    for key in ("mean", "median", "mode"):
        assert main[key].shape == (len(d["X_test"]),) and close(main[key], d[key], 1e-4), key
    assert close(np.stack(main["quantiles"]), d["quantiles"], 1e-4)


def test_constant_target_predicts_it_without_the_model():
    x = np.random.default_rng(2).standard_normal((12, 3))
    y = np.full(12, 3.25)
    assert P.predict_regression(REGRESSOR, x, y, x[:4]).tolist() == [3.25] * 4
    qs = P.predict_regression(REGRESSOR, x, y, x[:2], output_type="quantiles",
                              quantiles=[0.1, 0.9])
    assert [q.tolist() for q in qs] == [[3.25, 3.25]] * 2
    with pytest.raises(ValueError, match="output_type 'full'"):
        P.predict_regression(REGRESSOR, x, y, x[:2], output_type="full")


def test_regression_refuses_classifier_settings():
    x = np.random.default_rng(3).standard_normal((12, 3))
    with pytest.raises(ValueError, match="classifier settings"):
        P.predict_regression(REGRESSOR, x, x[:, 0], x[:2],
                             P.Settings(average_before_softmax=True))
