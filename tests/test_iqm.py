"""iqm_ranking: pooled per-seed IQM equal to scipy, stratified bootstrap, bad input, plot."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from matplotlib.figure import Figure
from scipy import stats

from arenalite import load_df
from arenalite.rankings import iqm as iqm_module
from arenalite.rankings.iqm import cell_layout, stratified_bootstrap_iqm
from conftest import seeded_frame

FIXED = {"norm_ref_low": 0.0, "norm_ref_high": 1.0}


@pytest.fixture
def bench(seeded):
    return load_df(seeded, seed="seed", **FIXED)


def test_table_and_point_estimate_equal_scipy(bench, seeded):
    table = bench.iqm_ranking(n_bootstrap=200, random_state=0).table
    assert list(table.columns) == ["model", "IQM", "CI_low", "CI_high"]
    assert table["model"].tolist() == ["A", "B", "C"]
    assert table["IQM"].is_monotonic_decreasing
    for model, value in zip(table["model"], table["IQM"], strict=True):
        pooled = seeded.loc[seeded["model"] == model, "score"]
        assert value == pytest.approx(stats.trim_mean(pooled, 0.25))
    assert (table["CI_low"] <= table["IQM"]).all() and (table["IQM"] <= table["CI_high"]).all()
    assert (table["CI_low"] < table["CI_high"]).all()


def test_reproducible_with_random_state(bench):
    a = bench.iqm_ranking(n_bootstrap=100, random_state=3).table
    pd.testing.assert_frame_equal(a, bench.iqm_ranking(n_bootstrap=100, random_state=3).table)
    c = bench.iqm_ranking(n_bootstrap=100, random_state=np.random.default_rng(4)).table
    assert not np.allclose(a["CI_low"], c["CI_low"])


def test_without_seeds_points_to_aggregate_ranking(four_models):
    with pytest.raises(ValueError, match="multiple seeds.*aggregate_ranking"):
        load_df(four_models, **FIXED).iqm_ranking()


def test_one_seed_per_cell_is_rejected(four_models):
    with pytest.raises(ValueError, match="multiple seeds.*single seed.*aggregate_ranking"):
        load_df(four_models.assign(seed=0), seed="seed", **FIXED).iqm_ranking()


@pytest.mark.parametrize("n_bootstrap, error", [(0, ValueError), (2.5, TypeError),
                                                (True, TypeError)])
def test_bad_n_bootstrap_names_it(bench, n_bootstrap, error):
    with pytest.raises(error, match="n_bootstrap"):
        bench.iqm_ranking(n_bootstrap=n_bootstrap)


def test_bad_random_state_names_it(bench):
    with pytest.raises(TypeError, match="random_state"):
        bench.iqm_ranking(n_bootstrap=10, random_state="seven")


def test_different_seed_counts_per_dataset(seeded):
    uneven = seeded[~((seeded["dataset"] == "D1") & (seeded["seed"] >= 2))]
    bench = load_df(uneven, seed="seed", **FIXED)
    table = bench.iqm_ranking(n_bootstrap=200, random_state=1).table
    for model, value in zip(table["model"], table["IQM"], strict=True):
        pooled = uneven.loc[uneven["model"] == model, "score"]
        assert value == pytest.approx(stats.trim_mean(pooled, 0.25))
    assert np.isfinite(table[["CI_low", "CI_high"]].to_numpy()).all()


def test_cell_layout():
    start, size = cell_layout(np.array(["a", "a", "b", "c", "c", "c"]))
    assert start.tolist() == [0, 0, 2, 3, 3, 3]
    assert size.tolist() == [2, 2, 1, 3, 3, 3]


def test_bootstrap_resamples_only_within_cells():
    """Cells hold disjoint value ranges: every resampled value must stay in its own cell."""
    values = np.array([1.0, 1.1, 1.2, 5.0, 5.5, 9.0])
    cells = np.array([0, 0, 0, 1, 1, 2])
    boot = stratified_bootstrap_iqm(values, cells, cells, 500, np.random.default_rng(0))
    assert boot.shape == (500, 3)
    assert ((boot[:, 0] >= 1.0) & (boot[:, 0] <= 1.2)).all()
    assert ((boot[:, 1] >= 5.0) & (boot[:, 1] <= 5.5)).all()
    assert (boot[:, 2] == 9.0).all()


def test_constant_cells_give_zero_width_interval():
    values = np.repeat([0.2, 0.4, 0.6, 0.9], 3)
    cells = np.repeat(np.arange(4), 3)
    groups = np.zeros(12, dtype=int)
    boot = stratified_bootstrap_iqm(values, cells, groups, 50, np.random.default_rng(0))
    assert np.allclose(boot, stats.trim_mean(values, 0.25))


@pytest.mark.parametrize("uneven", [False, True])
def test_chunking_does_not_change_the_draws(seeded, monkeypatch, uneven):
    """Equal cells take the pattern path (blocks of models), uneven ones the per-run path
    (chunks of replicates); neither depends on the block or chunk size."""
    if uneven:
        seeded = seeded[~((seeded["dataset"] == "D1") & (seeded["seed"] >= 2))]
    bench = load_df(seeded, seed="seed", **FIXED)
    whole = bench.iqm_ranking(n_bootstrap=64, random_state=5).table
    monkeypatch.setattr(iqm_module, "_CHUNK_ELEMENTS", 100)
    pd.testing.assert_frame_equal(whole, bench.iqm_ranking(n_bootstrap=64, random_state=5).table)


@settings(max_examples=15, deadline=None)
@given(st.randoms(use_true_random=False))
def test_row_order_permutation_invariance(rnd):
    seeded = seeded_frame()
    shuffled = seeded.sample(frac=1.0, random_state=rnd.randint(0, 2**31))
    a = load_df(seeded, seed="seed", **FIXED).iqm_ranking(n_bootstrap=50, random_state=0)
    b = load_df(shuffled, seed="seed", **FIXED).iqm_ranking(n_bootstrap=50, random_state=0)
    pd.testing.assert_frame_equal(a.table, b.table)


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 59), st.floats(0.0, 0.3))
def test_raising_a_run_never_lowers_the_iqm(row, bump):
    seeded = seeded_frame()
    raised = seeded.copy()
    raised.loc[row, "score"] = min(1.0, raised.loc[row, "score"] + bump)
    model = seeded.loc[row, "model"]
    before = load_df(seeded, seed="seed", **FIXED).iqm_ranking(n_bootstrap=1, random_state=0)
    after = load_df(raised, seed="seed", **FIXED).iqm_ranking(n_bootstrap=1, random_state=0)
    assert (after.table.set_index("model").loc[model, "IQM"]
            >= before.table.set_index("model").loc[model, "IQM"] - 1e-12)


def test_plot(bench):
    result = bench.iqm_ranking(n_bootstrap=50, random_state=0)
    fig = result.plot(figsize=(6, 3.5), title="IQM", model_colors={"A": "red", "B": "blue",
                                                                   "C": "green"})
    assert isinstance(fig, Figure) and fig.axes[0].get_title() == "IQM"
    with pytest.raises(ValueError, match=r"no colour for model\(s\) \['C'\]"):
        result.plot(model_colors={"A": "red", "B": "blue"})
