"""Rank sensitivity between conditions: Kendall τ-b vs scipy, bootstrap interval, errors, plot."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from matplotlib.figure import Figure
from scipy import stats

import arenalite
from arenalite.stats.sensitivity import kendall_tau_b


def _group(shuffle: float, n_models: int = 6, n_datasets: int = 10, seed: int = 0,
           extra_condition: bool = False) -> arenalite.BenchmarkGroup:
    rng = np.random.default_rng(seed)
    quality = np.linspace(0.6, 0.9, n_models)
    rows = []
    conditions = {"frozen": quality, "full_ft": quality + shuffle * rng.normal(size=n_models)}
    if extra_condition:
        conditions["linear"] = quality[::-1].copy()
    for cond, level in conditions.items():
        for i in range(n_models):
            for j in range(n_datasets):
                rows.append({"model": f"m{i}", "dataset": f"d{j}", "metric": "accuracy",
                             "cond": cond, "score": level[i] + rng.normal(0, 0.02)})
    return arenalite.load_df(pd.DataFrame(rows), condition_col="cond", norm_ref_low=0.0,
                             norm_ref_high=1.0)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), k=st.integers(2, 12), levels=st.sampled_from([3, 100]))
def test_kendall_tau_b_equals_scipy(seed: int, k: int, levels: int) -> None:
    rng = np.random.default_rng(seed)
    x = rng.integers(0, levels, k).astype(float)
    y = rng.integers(0, levels, k).astype(float)
    ours = kendall_tau_b(x, y)
    if np.all(x == x[0]) or np.all(y == y[0]):
        assert np.isnan(ours)
        return
    assert ours == pytest.approx(stats.kendalltau(x, y).statistic, abs=1e-12)
    # vectorized over leading axes
    batch = kendall_tau_b(np.stack([x, y]), np.stack([y, x]))
    np.testing.assert_allclose(batch, [ours, ours])


def test_identical_rankings_give_tau_one_and_reversed_minus_one() -> None:
    group = _group(shuffle=0.0, extra_condition=True)
    result = group.rank_sensitivity("frozen", "full_ft", random_state=0, n_bootstrap=300)
    row = result.table.iloc[0]
    assert row.tau == pytest.approx(1.0)
    assert row.CI_low <= row.tau <= row.CI_high + 1e-12
    assert row.paired and row.n_models == 6 and row.n_undefined == 0
    reversed_ = group.rank_sensitivity("frozen", "linear", random_state=0, n_bootstrap=300)
    assert reversed_.table.loc[0, "tau"] == pytest.approx(-1.0)


def test_point_estimate_equals_scipy_on_average_ranks() -> None:
    group = _group(shuffle=0.1, seed=4)
    result = group.rank_sensitivity(agg="avg_rank", random_state=1, n_bootstrap=500)
    avg = {c: pd.DataFrame(group[c].scores_).rank(ascending=False).mean(axis=1)
           for c in ("frozen", "full_ft")}
    expected = stats.kendalltau(avg["frozen"], avg["full_ft"]).statistic
    row = result.table.iloc[0]
    assert row.tau == pytest.approx(expected)
    assert -1 <= row.CI_low <= row.CI_high <= 1
    assert list(result.table.columns[:5]) == ["condition_a", "condition_b", "tau", "CI_low",
                                              "CI_high"]
    mean = group.rank_sensitivity(agg="mean", random_state=1, n_bootstrap=100).table.loc[0, "tau"]
    means = {c: group[c].scores_.mean(axis=1) for c in ("frozen", "full_ft")}
    assert mean == pytest.approx(stats.kendalltau(means["frozen"], means["full_ft"]).statistic)


def test_reproducible_with_random_state() -> None:
    group = _group(shuffle=0.03, seed=2)
    one = group.rank_sensitivity(random_state=7, n_bootstrap=400).table
    two = group.rank_sensitivity(random_state=7, n_bootstrap=400).table
    pd.testing.assert_frame_equal(one, two)


def test_all_pairs_of_conditions() -> None:
    group = _group(shuffle=0.05, extra_condition=True)
    result = group.rank_sensitivity(random_state=0, n_bootstrap=100)
    assert list(zip(result.table.condition_a, result.table.condition_b, strict=True)) == [
        ("frozen", "full_ft"), ("frozen", "linear"), ("full_ft", "linear")]
    assert list(result.ranks.columns) == ["frozen", "full_ft", "linear"]


def test_errors() -> None:
    group = _group(shuffle=0.05)
    with pytest.raises(ValueError, match="condition_b 'lora' not found"):
        group.rank_sensitivity("frozen", "lora")
    with pytest.raises(ValueError, match="give both condition_a and condition_b"):
        group.rank_sensitivity("frozen")
    with pytest.raises(ValueError, match="both 'frozen'"):
        group.rank_sensitivity("frozen", "frozen")
    with pytest.raises(ValueError, match="agg must be one of"):
        group.rank_sensitivity(agg="elo")
    with pytest.raises(ValueError, match="n_bootstrap must be a positive integer, got 0"):
        group.rank_sensitivity(n_bootstrap=0)
    with pytest.raises(TypeError, match="random_state must be None, an int or a numpy Generator"):
        group.rank_sensitivity(random_state="seven")
    uneven = arenalite.BenchmarkGroup(
        {"frozen": group["frozen"], "full_ft": group["full_ft"].drop_models("m0")}, "cond")
    with pytest.raises(ValueError, match=r"only in 'frozen': \['m0'\]"):
        uneven.rank_sensitivity()


def test_plot() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = _group(shuffle=0.05).rank_sensitivity(random_state=0, n_bootstrap=100)
    fig = result.plot()
    assert isinstance(fig, Figure)
    assert fig.axes[0].get_title().startswith("Rank sensitivity: Kendall τ-b =")
    assert len(fig.axes[0].lines) == 6


def _solver_group() -> arenalite.BenchmarkGroup:
    """The evaluma rank-sensitivity tutorial's data: B and D swap places between solvers."""
    rng = np.random.RandomState(42)
    datasets = [f"D{i:02d}" for i in range(1, 7)]
    adam = {"Model-A": 0.88, "Model-B": 0.74, "Model-C": 0.61, "Model-D": 0.47}
    sgd = {"Model-A": 0.87, "Model-B": 0.45, "Model-C": 0.60, "Model-D": 0.73}
    rows = [{"model": m, "dataset": d, "metric": "acc", "score": round(float(s), 4),
             "solver": solver}
            for solver, means in [("Adam", adam), ("SGD", sgd)] for m, mu in means.items()
            for d, s in zip(datasets, np.clip(rng.normal(mu, 0.08, 6), 0, 1), strict=True)]
    return arenalite.load_df(pd.DataFrame(rows), norm_ref_low=0.0, norm_ref_high=1.0,
                             condition_col="solver")


def test_default_trimmed_mean_and_tutorial_values() -> None:
    group = _solver_group()
    result = group.rank_sensitivity("Adam", "SGD", random_state=42)
    trimmed = {c: stats.trim_mean(group[c].scores_.to_numpy(), 0.25, axis=1) for c in group.keys()}
    assert result.agg == "trimmed_mean"
    assert result.tau == pytest.approx(stats.kendalltau(trimmed["Adam"], trimmed["SGD"]).statistic)
    assert result.tau == pytest.approx(0.0)  # the B↔D swap: 3 concordant, 3 discordant pairs
    assert result.rho == pytest.approx(stats.spearmanr(trimmed["Adam"], trimmed["SGD"]).statistic)
    assert result.rho == pytest.approx(0.2)
    low, high = result.tau_ci
    assert -1 <= low <= result.tau <= high <= 1
    per_model = result.per_model
    assert list(per_model.columns) == ["model", "rank_Adam", "rank_SGD", "delta_rank"]
    assert set(per_model["model"][:2]) == {"Model-B", "Model-D"}
    assert per_model["delta_rank"].abs().tolist() == [2, 2, 0, 0]


def test_two_benchmarks_directly_equal_the_group() -> None:
    group = _solver_group()
    direct = group["Adam"].rank_sensitivity(group["SGD"], "Adam", "SGD", random_state=3,
                                            n_bootstrap=200)
    via_group = group.rank_sensitivity("Adam", "SGD", random_state=3, n_bootstrap=200)
    pd.testing.assert_frame_equal(direct.table, via_group.table)
    with pytest.raises(TypeError, match="other must be a Benchmark"):
        group["Adam"].rank_sensitivity("SGD")


def test_few_datasets_warn() -> None:
    group = _group(shuffle=0.05, n_datasets=4)
    with pytest.warns(UserWarning, match="fewer than 5 datasets"):
        group.rank_sensitivity(random_state=0, n_bootstrap=50)
