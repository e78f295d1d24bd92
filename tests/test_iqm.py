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


def test_seed_scheme_without_seeds_points_to_the_dataset_bootstrap(four_models):
    with pytest.raises(ValueError, match="multiple seeds.*resampling='dataset'.*aggregate_ranking"):
        load_df(four_models, **FIXED).iqm_ranking(resampling="seed")


def test_seed_scheme_with_one_seed_per_cell_is_rejected(four_models):
    with pytest.raises(ValueError, match="multiple seeds.*single seed.*aggregate_ranking"):
        load_df(four_models.assign(seed=0), seed="seed", **FIXED).iqm_ranking(resampling="seed")


@pytest.mark.parametrize("seeded_load", [False, True])
def test_single_seed_data_get_the_dataset_bootstrap(four_models, seeded_load):
    frame = four_models.assign(seed=0) if seeded_load else four_models
    bench = load_df(frame, seed="seed" if seeded_load else None, **FIXED)
    result = bench.iqm_ranking(n_bootstrap=300, random_state=0)
    assert result.params["resampling"] == "dataset"
    table = result.table.set_index("model")
    for model, scores in four_models.groupby("model")["score"]:
        assert table.loc[model, "IQM"] == pytest.approx(stats.trim_mean(scores, 0.25))
    # the specialists are great on three datasets and poor on three: a wide interval
    assert table.loc["Specialist-X", "CI_high"] - table.loc["Specialist-X", "CI_low"] > 0.2
    assert table.loc["Steady", "CI_low"] <= table.loc["Steady", "IQM"] <= (
        table.loc["Steady", "CI_high"])


def test_bad_resampling_names_it(bench):
    with pytest.raises(ValueError, match=r"resampling must be one of \('dataset', 'seed'\), "
                                         r"got 'battle'"):
        bench.iqm_ranking(resampling="battle")


def test_dataset_bootstrap_draws_whole_datasets():
    """A replicate that draws only dataset 1 (three times) is the IQM of its runs alone;
    all replicates share their draws across models."""
    values = np.array([[0.1, 0.2, 0.8, 0.9], [0.3, 0.4, 0.5, 0.6]])
    codes = np.array([[0, 0, 1, 1], [0, 1, 0, 1]])
    counts = np.array([[0, 3], [3, 0], [1, 1]])
    boot = iqm_module.dataset_bootstrap_iqm(values, codes, counts)
    assert boot[0] == pytest.approx([stats.trim_mean([0.8, 0.9] * 3, 0.25),
                                     stats.trim_mean([0.4, 0.6] * 3, 0.25)])
    assert boot[1] == pytest.approx([0.15, 0.4])
    assert boot[2] == pytest.approx([stats.trim_mean(values[0], 0.25),
                                     stats.trim_mean(values[1], 0.25)])


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 4), st.integers(1, 5), st.integers(0, 2**32 - 1))
def test_dataset_bootstrap_equals_trim_mean_of_the_drawn_runs(n_models, n_datasets, seed):
    """Uneven seed counts per cell (padding), ties and any counts: exactly scipy's trim_mean
    of every model's runs repeated as their datasets were drawn."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 4, size=(n_models, n_datasets)).astype(np.intp)  # wasm32: 32-bit
    model = np.repeat(np.arange(n_models), sizes.sum(axis=1))
    dataset = np.concatenate([np.repeat(np.arange(n_datasets), row) for row in sizes])
    values = rng.integers(0, 5, size=model.size) / 4.0  # ties on purpose
    grid, codes = iqm_module.sorted_runs(values, model, dataset, n_models, n_datasets)
    counts = rng.multinomial(n_datasets, np.full(n_datasets, 1 / n_datasets), size=7)
    counts[0] = 1  # the data themselves: the point estimate
    boot = iqm_module.dataset_bootstrap_iqm(grid, codes, counts)
    for b in range(len(counts)):
        for m in range(n_models):
            mine = model == m
            runs = np.repeat(values[mine], counts[b][dataset[mine]].astype(np.intp))
            assert boot[b, m] == pytest.approx(stats.trim_mean(runs, 0.25), abs=1e-12)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 3), st.integers(1, 12), st.integers(0, 2**32 - 1))
def test_dataset_bootstrap_cut_search_across_blocks(n_models, n_datasets, seed):
    """Both ways (a running count over every run: block 0; the cut points found block by
    block, blocks of 1, 2, 5, 7 and 64 runs; the size chosen by shape) give scipy's
    trim_mean of the drawn runs, with cuts in any block, at a block's first or last run,
    past the padding or inside ties."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 9, size=(n_models, n_datasets)).astype(np.intp)
    model = np.repeat(np.arange(n_models), sizes.sum(axis=1))
    dataset = np.concatenate([np.repeat(np.arange(n_datasets), row) for row in sizes])
    values = rng.integers(0, 7, size=model.size) / 6.0
    grid, codes = iqm_module.sorted_runs(values, model, dataset, n_models, n_datasets)
    counts = rng.multinomial(n_datasets, np.full(n_datasets, 1 / n_datasets), size=9)
    counts[0] = 1
    counts[1] = 0
    counts[1, -1] = 1  # one dataset alone: its runs only, maybe fewer than four
    expected = np.array([[stats.trim_mean(np.repeat(
        values[model == m], counts[b][dataset[model == m]].astype(np.intp)), 0.25)
                          for m in range(n_models)] for b in range(len(counts))])
    for block in (0, 1, 2, 5, 7, 64, None):
        boot = iqm_module.dataset_bootstrap_iqm(grid, codes, counts, block=block)
        np.testing.assert_allclose(boot, expected, rtol=0, atol=1e-12)


def test_dataset_bootstrap_many_runs_per_model():
    """150 runs of 50 seeds on 3 datasets per model, five blocks of 64 with padding: each
    replicate equals trim_mean of the runs repeated as drawn."""
    rng = np.random.default_rng(3)
    model = np.repeat(np.arange(2), [150, 140])
    dataset = np.concatenate([np.repeat(np.arange(3), 50), np.repeat(np.arange(3), [50, 50, 40])])
    values = rng.random(model.size).round(2)
    grid, codes = iqm_module.sorted_runs(values, model, dataset, 2, 3)
    counts = rng.multinomial(3, [1 / 3] * 3, size=50)
    boot = iqm_module.dataset_bootstrap_iqm(grid, codes, counts, block=64)
    for b in range(len(counts)):
        for m in range(2):
            runs = np.repeat(values[model == m],
                             counts[b][dataset[model == m]].astype(np.intp))  # wasm32
            assert boot[b, m] == pytest.approx(stats.trim_mean(runs, 0.25), abs=1e-12)


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


def test_seed_bootstrap_resamples_only_within_cells():
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


@pytest.mark.parametrize("resampling", ["seed", "dataset"])
@pytest.mark.parametrize("uneven", [False, True])
def test_chunking_does_not_change_the_draws(seeded, monkeypatch, uneven, resampling):
    """Equal cells take the pattern path (blocks of models), uneven ones the per-run path
    (chunks of replicates), the dataset bootstrap chunks of replicates; none depends on
    the block or chunk size."""
    if uneven:
        seeded = seeded[~((seeded["dataset"] == "D1") & (seeded["seed"] >= 2))]
    bench = load_df(seeded, seed="seed", **FIXED)
    whole = bench.iqm_ranking(n_bootstrap=64, random_state=5, resampling=resampling).table
    for module in (iqm_module.seed_bootstrap, iqm_module.dataset_bootstrap):
        monkeypatch.setattr(module, "_CHUNK_ELEMENTS", 100)
    pd.testing.assert_frame_equal(whole, bench.iqm_ranking(n_bootstrap=64, random_state=5,
                                                           resampling=resampling).table)


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


def test_dataset_bootstrap_iqm_wants_integer_counts_and_widens_them_when_needed():
    from arenalite.rankings import iqm as I

    values = np.array([[0.1, 0.2, 0.3, 0.4]])
    codes = np.array([[0, 1, 0, 1]])
    with pytest.raises(TypeError, match="integers, got dtype float64"):
        I.dataset_bootstrap_iqm(values, codes, np.ones((1, 2)))
    for block in (0, 1, 2):  # every run (int64 running sums), and the block search
        small = I.dataset_bootstrap_iqm(values, codes, np.array([[1, 1], [2, 0]]),
                                        block=block)
        huge = I.dataset_bootstrap_iqm(values, codes, np.array([[2**30, 2**30], [2**31, 0]],
                                                               dtype=np.int64), block=block)
        np.testing.assert_array_equal(small, huge)  # the same IQMs


def test_cut_block_size_follows_the_shape():
    """Few runs per model: the running count over every run; many runs on few datasets:
    small blocks; on many datasets: larger ones (fewer block boundaries to weigh)."""
    from arenalite.rankings import iqm as I

    assert I.cut_block_size(50, 50) == 0
    assert I.cut_block_size(15, 5) == 0
    assert I.cut_block_size(2000, 40) == 32
    assert I.cut_block_size(2000, 400) == 64
