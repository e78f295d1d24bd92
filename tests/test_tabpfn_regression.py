"""TabPFN v3's regression target side against tabpfn 9.2.0's ``TabPFNRegressor``.

Fixtures: ``scripts/make_tabpfn_regression_fixtures.py`` (numpy only here, no torch).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from arenalite.models.tabpfn import regression as r

DATA = Path(__file__).parent / "data" / "tabpfn"
MANIFEST = json.loads((DATA / "regression.json").read_text())
CASES = sorted(MANIFEST["cases"])
BORDER_RTOL = 4 * float(np.finfo(np.float32).eps)
"""The member borders' float32 log/exp: numpy's and torch's agree bit for bit with numpy's
AVX2 kernels; its AVX-512 kernels and wasm32's libm are an ulp or two apart (observed:
relative 2.4e-7), so four float32 ulps."""


def load(case: str):
    d = np.load(DATA / f"regression_{case}.npz")
    o = MANIFEST["cases"][case]
    names = o["target_transforms"]
    m = len(d["target_index"])
    fits, ys = zip(*(r.fit_target(d["y_train"], names[d["target_index"][i]]) for i in range(m)),
                   strict=True)
    return d, o, list(fits), list(ys), [d[f"logits_{i}"] for i in range(m)]


def close(a, b, tol=1e-5):
    """Equal within tol, relative where |b| > 1."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return np.all(np.abs(a - b) <= tol * np.maximum(1.0, np.abs(b)))


@pytest.mark.parametrize("case", CASES)
def test_fixture_options(case):
    o = MANIFEST["cases"][case]
    assert not o["average_before_softmax"] and o["ensemble_softmax_temperature"] == 1.0
    assert not o["downsample_correction"] and o["fix_nan_borders"]


@pytest.mark.parametrize("case", CASES)
def test_member_targets_and_borders(case):
    d, _, fits, ys, _ = load(case)
    assert fits[0].mean == d["y_mean"] and fits[0].std == d["y_std"]
    for i, (fit, y) in enumerate(zip(fits, ys, strict=True)):
        assert y.dtype == np.float32
        np.testing.assert_allclose(y, d[f"member_y_{i}"], rtol=0, atol=1e-6)
        np.testing.assert_allclose(r.member_borders(fit, d["borders"])[0],
                                   d[f"member_borders_{i}"], rtol=BORDER_RTOL, atol=0)


@pytest.mark.parametrize("case", CASES)
def test_predictions(case):
    d, o, fits, _, logits = load(case)
    t = o["softmax_temperature"]
    out = r.predict_from_logits(logits, fits, d["borders"], t, "main", o["quantiles"])
    for key in ("mean", "median", "mode"):
        assert out[key].dtype == np.float64 and close(out[key], d[key]), key
    assert close(np.stack(out["quantiles"]), d["quantiles"])
    assert close(r.predict_from_logits(logits, fits, d["borders"], t), d["predict_mean"])


@pytest.mark.parametrize("name", MANIFEST["transforms"])
def test_transforms_alone(name):
    d = np.load(DATA / "regression_transforms.npz")
    y = np.load(DATA / "regression_skewed.npz")["y_train"]
    borders = np.load(DATA / "regression_skewed.npz")["borders"]
    fit, y_member = r.fit_target(y, name)
    ref = d[f"y_{name}"]
    assert np.array_equal(np.isnan(y_member), np.isnan(ref))
    np.testing.assert_allclose(y_member[~np.isnan(ref)], ref[~np.isnan(ref)], rtol=1e-6,
                               atol=1e-6)
    bt, mask = r.member_borders(fit, borders)
    np.testing.assert_allclose(bt, d[f"borders_{name}"], rtol=BORDER_RTOL, atol=0)
    got = np.zeros(len(bt) - 1, bool) if mask is None else mask
    np.testing.assert_array_equal(got, d[f"mask_{name}"])


def test_identity_round_trip():
    """No transform: the member's y is the z-score, its borders the model's."""
    rng = np.random.default_rng(0)
    y = rng.normal(5.0, 3.0, 30)
    fit, y_member = r.fit_target(y, None)
    np.testing.assert_allclose(y_member * fit.std + fit.mean, y, rtol=1e-6)
    borders = np.linspace(-4, 4, 11).astype(np.float32)
    bt, mask = r.member_borders(fit, borders)
    assert mask is None and np.array_equal(bt, borders)


def test_safepower_inverse_undoes_the_transform():
    """The borders' inverse transform takes the member's y back to the z-scored y."""
    y = np.exp(np.random.default_rng(1).normal(size=40))
    fit, y_member = r.fit_target(y, "safepower")
    assert fit.lmbda != 1.0
    z = (y - fit.mean) / fit.std
    np.testing.assert_allclose(r._inverse_target(fit, y_member), z, rtol=1e-5, atol=1e-5)


def test_rebinning_preserves_probability():
    d = np.load(DATA / "regression_skewed.npz")
    fit, _ = r.fit_target(d["y_train"], "safepower")
    frm, _ = r.member_borders(fit, d["borders"])
    w = r.rebin_matrix(frm, d["borders"])
    assert (w >= 0).all()
    np.testing.assert_allclose(w.sum(axis=1), 1.0, atol=1e-12)
    probs = r.member_probabilities(d["logits_1"], fit, d["borders"], 0.9)
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, atol=1e-5)
    same = r.rebin_matrix(d["borders"], d["borders"])
    np.testing.assert_allclose(same, np.eye(len(d["borders"]) - 1), atol=1e-12)


def test_quantiles_monotone():
    d, o, fits, _, logits = load("large")
    levels = [0.01, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99]
    qs = np.stack(r.predict_from_logits(logits, fits, d["borders"], 0.9, "quantiles", levels))
    assert (np.diff(qs, axis=0) >= 0).all()
    median = r.predict_from_logits(logits, fits, d["borders"], 0.9, "median")
    np.testing.assert_array_equal(qs[4], median)


def test_bad_input():
    y = np.arange(10.0)
    with pytest.raises(ValueError, match="quantile_norm"):
        r.fit_target(y, "quantile_norm")
    with pytest.raises(ValueError, match="constant"):
        r.fit_target(np.ones(5), None)
    with pytest.raises(ValueError, match="shape"):
        r.fit_target(np.ones((3, 2)), None)
    with pytest.raises(ValueError, match="NaN"):
        r.fit_target(np.array([1.0, np.nan, 2.0]), None)
    fit, _ = r.fit_target(y, None)
    borders = np.linspace(-3, 3, 9).astype(np.float32)
    with pytest.raises(ValueError, match=r"logits must be \(M, 8\).*\(4, 7\)"):
        r.predict_from_logits([np.zeros((4, 7))], [fit], borders, 1.0)
    with pytest.raises(ValueError, match="same length"):
        r.predict_from_logits([np.zeros((4, 8))], [fit, fit], borders, 1.0)
    with pytest.raises(ValueError, match="differ in shape"):
        r.predict_from_logits([np.zeros((4, 8)), np.zeros((3, 8))], [fit, fit], borders, 1.0)
    other, _ = r.fit_target(y * 2, None)
    with pytest.raises(ValueError, match="z-scoring"):
        r.predict_from_logits([np.zeros((4, 8))] * 2, [fit, other], borders, 1.0)
    with pytest.raises(ValueError, match="'ei'"):
        r.predict_from_logits([np.zeros((4, 8))], [fit], borders, 1.0, "ei")
    with pytest.raises(ValueError, match="quantiles"):
        r.predict_from_logits([np.zeros((4, 8))], [fit], borders, 1.0, "quantiles", [1])
