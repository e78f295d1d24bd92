"""The probabilistic track: the honest constant spread and its CRPS / NLL against closed forms."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import arenalite
from arenalite.probabilistic import (
    OOF_COLUMNS,
    honest_spread,
    spread_baseline,
    track_scores,
)


def _phi(z: float) -> float:
    return math.exp(-z * z / 2) / math.sqrt(2 * math.pi)


def _cdf(z: float) -> float:
    return 0.5 * (1 + math.erf(z / math.sqrt(2)))


def test_honest_spread_is_the_rmse_of_the_residuals():
    assert honest_spread([1, 2, 3, 4], [1.5, 1.5, 3.5, 3.5]) == 0.5
    assert honest_spread([0, 0, 0], [3, -3, 0]) == pytest.approx(math.sqrt(6))


def test_residuals_of_equal_size_give_the_closed_forms_at_z_equal_one():
    """Every |residual| = a: sigma = a, every z = ±1, so CRPS and NLL are closed forms in a."""
    a = 2.5
    y = np.array([10.0, 20.0, 30.0, 40.0])
    point = y + a * np.array([1, -1, -1, 1])
    base = spread_baseline(y, point)
    crps_unit = 2 * _cdf(1) - 1 + 2 * _phi(1) - 1 / math.sqrt(math.pi)
    assert crps_unit == pytest.approx(0.6024413576276163, abs=1e-15)
    assert base.sigma == a and base.n == 4
    assert base.crps == pytest.approx(a * crps_unit, rel=1e-13)
    assert base.gaussian_nll == pytest.approx(0.5 * math.log(2 * math.pi) + math.log(a) + 0.5,
                                              rel=1e-13)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(2, 200), st.floats(0.01, 1e3))
def test_baseline_nll_is_half_log_two_pi_sigma_squared_plus_half(seed, n, scale):
    rng = np.random.default_rng(seed)
    y = rng.normal(0, scale, n)
    point = y + rng.standard_t(3, n) * scale
    base = spread_baseline(y, point)
    assert base.sigma == pytest.approx(math.sqrt(np.mean((y - point) ** 2)), rel=1e-12)
    assert base.gaussian_nll == pytest.approx(0.5 * math.log(2 * math.pi * base.sigma**2) + 0.5,
                                              rel=1e-9, abs=1e-12)
    # the NLL-optimal constant: any other constant spread scores worse
    for factor in (0.9, 0.99, 1.01, 1.1):
        other = arenalite.metrics.gaussian_nll(y, point, np.full(n, base.sigma * factor))
        assert other > base.gaussian_nll


def test_calibrated_gaussian_residuals_give_crps_sigma_over_root_pi():
    """E CRPS of N(mu, s²) for y ~ N(mu, s²) is E|X − Y| − E|X − X'| / 2 = s / sqrt(pi)."""
    rng = np.random.default_rng(7)
    s = 3.0
    y = rng.normal(0, 1, 200_000)
    point = y - rng.normal(0, s, y.size)
    base = spread_baseline(y, point)
    assert base.sigma == pytest.approx(s, rel=0.01)
    assert base.crps == pytest.approx(base.sigma / math.sqrt(math.pi), rel=0.01)


def _oof(n: int = 400, seed: int = 0) -> pd.DataFrame:
    """Two datasets whose noise is heteroscedastic: std 0.2 on half the rows, 5 on the rest."""
    rng = np.random.default_rng(seed)
    frames = []
    for name in ("a", "b"):
        mean = rng.normal(0, 10, n)
        std = np.where(np.arange(n) % 2 == 0, 0.2, 5.0)
        y = mean + std * rng.normal(0, 1, n)
        frames.append(pd.DataFrame({"dataset": name, "y_true": y, "mean": mean, "std": std,
                                    "point": mean}))
    return pd.concat(frames, ignore_index=True)


def test_track_scores_long_table_and_an_informative_spread_wins():
    oof = _oof()
    table = track_scores(oof, candidate="local", reference="constant")
    assert list(table.columns) == ["model", "dataset", "metric", "score", "spread"]
    assert len(table) == 8
    wide = table.pivot_table(index=["dataset", "metric"], columns="model", values="score")
    assert (wide["local"] < wide["constant"]).all()  # its spread carries information
    for name, part in oof.groupby("dataset"):
        base = spread_baseline(part["y_true"], part["point"])
        row = table.set_index(["model", "dataset", "metric"])
        assert row.loc[("constant", name, "crps"), "score"] == base.crps
        assert row.loc[("constant", name, "gaussian_nll"), "score"] == base.gaussian_nll
        assert row.loc[("constant", name, "crps"), "spread"] == base.sigma
        assert row.loc[("local", name, "crps"), "spread"] == pytest.approx(
            math.sqrt((0.2**2 + 5**2) / 2))


def test_a_candidate_with_the_baselines_own_spread_ties_it():
    oof = _oof()
    for _, part in oof.groupby("dataset"):
        oof.loc[part.index, "std"] = honest_spread(part["y_true"], part["point"])
    table = track_scores(oof)
    wide = table.pivot_table(index=["dataset", "metric"], columns="model", values="score")
    np.testing.assert_allclose(wide["candidate"], wide["reference"], rtol=1e-14)


def test_track_scores_feed_load_df_and_the_gate_one_metric_at_a_time():
    frames = []
    for j in range(8):
        part = _oof(200, seed=j)
        frames.append(part[part["dataset"] == "a"].assign(dataset=f"d{j}"))
    table = track_scores(pd.concat(frames, ignore_index=True))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # observed min/max normalization
        nll = arenalite.load_df(table[table["metric"] == "gaussian_nll"])
        crps = arenalite.load_df(table[table["metric"] == "crps"])
    row = nll.gate("candidate", "reference").table.iloc[0]
    assert (row.margin, row.verdict, row.passed) == (0.01, "superior", True)
    with pytest.raises(ValueError, match=r"no default margin for metric 'crps'.*pass margin="):
        crps.gate("candidate", "reference")
    assert crps.gate("candidate", "reference", margin=0.05).table.loc[0, "verdict"] == "superior"


@pytest.mark.parametrize(("change", "exc", "pattern"), [
    (lambda f: f.drop(columns="point"), ValueError, r"oof is missing column\(s\) \['point'\]"),
    (lambda f: f.assign(std=np.where(f.index == 23, 0.0, f["std"])), ValueError,
     r"oof\['std'\] must be strictly positive; found 0 at row 23"),
    (lambda f: f.assign(point=f["y_true"]), ValueError,
     r"dataset 'a': the out-of-fold residuals are all 0"),
    (lambda f: f.assign(mean=np.where(f.index == 25, np.nan, f["mean"])), ValueError,
     r"oof\['mean'\] must be finite; found nan at position 25"),
    (lambda f: f.assign(y_true="x"), TypeError, r"oof\['y_true'\]"),
    (lambda f: f.assign(point=np.where(f["dataset"] == "b", f["y_true"], f["point"])),
     ValueError, r"dataset 'b': the out-of-fold residuals are all 0"),
    (lambda f: f.to_numpy(), TypeError, r"oof must be a DataFrame"),
])
def test_track_scores_bad_input(change, exc, pattern):
    with pytest.raises(exc, match=pattern):
        track_scores(change(_oof(20)))


def test_candidate_and_reference_need_two_names():
    with pytest.raises(ValueError, match=r"two different non-empty names"):
        track_scores(_oof(20), candidate="x", reference="x")
    assert OOF_COLUMNS == ("dataset", "y_true", "mean", "std", "point")
