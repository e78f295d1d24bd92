"""aggregate_ranking: SPEC §3 golden values, scipy equality, invariants, bad input, plot."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from matplotlib.figure import Figure
from scipy import stats

from arenalite import load_df
from arenalite.rankings.aggregate import aggregate_scores, trim_mean

FIXED = {"norm_ref_low": 0.0, "norm_ref_high": 1.0}
GOLDEN_MEANS = {"Steady": 0.865, "Sprinter": 0.800, "Specialist-X": 0.755, "Specialist-Y": 0.755}


@pytest.mark.parametrize("agg", ["mean", "trimmed_mean", "median"])
def test_golden_four_models(four_models, agg):
    table = load_df(four_models, **FIXED).aggregate_ranking(agg=agg).table
    assert list(table.columns) == ["model", "score"]
    assert table["model"].tolist() == ["Steady", "Sprinter", "Specialist-X", "Specialist-Y"]
    assert dict(zip(table["model"], table["score"], strict=True)) == pytest.approx(GOLDEN_MEANS)


def test_default_is_trimmed_mean(four_models):
    bench = load_df(four_models, **FIXED)
    pd.testing.assert_frame_equal(bench.aggregate_ranking().table,
                                  bench.aggregate_ranking("trimmed_mean").table)


def test_trimmed_mean_cuts_a_quarter_from_each_end():
    x = np.array([0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 100.0])
    assert trim_mean(x) == pytest.approx(np.mean([0.2, 0.3, 0.4, 0.5]))
    assert trim_mean(np.array([1.0, 2.0, 9.0])) == pytest.approx(4.0)


@settings(max_examples=50, deadline=None)
@given(arrays(float, st.tuples(st.integers(1, 6), st.integers(1, 13)),
              elements=st.floats(-1e3, 1e3, allow_nan=False)))
def test_trimmed_mean_equals_scipy(matrix):
    ours = aggregate_scores(matrix, "trimmed_mean")
    np.testing.assert_allclose(ours, stats.trim_mean(matrix, 0.25, axis=1), rtol=1e-12,
                               atol=1e-9)


def test_bad_agg_names_it(four_models):
    with pytest.raises(ValueError, match=r"agg must be one of .*got 'average'"):
        load_df(four_models, **FIXED).aggregate_ranking(agg="average")


def test_non_finite_matrix_is_rejected():
    with pytest.raises(ValueError, match="missing or non-finite"):
        aggregate_scores(np.array([[0.5, np.nan]]))


def frame_from(matrix: np.ndarray) -> pd.DataFrame:
    m, d = matrix.shape
    return pd.DataFrame({"model": np.repeat([f"M{i}" for i in range(m)], d),
                         "dataset": np.tile([f"D{j}" for j in range(d)], m),
                         "metric": "accuracy", "score": matrix.ravel()})


scores = arrays(float, st.tuples(st.integers(2, 4), st.integers(1, 8)),
                elements=st.floats(0.0, 1.0, allow_nan=False))


@settings(max_examples=20, deadline=None)
@given(scores, st.randoms(use_true_random=False), st.sampled_from(["mean", "trimmed_mean",
                                                                    "median"]))
def test_model_order_permutation_invariance(matrix, rnd, agg):
    df = frame_from(matrix)
    shuffled = df.sample(frac=1.0, random_state=rnd.randint(0, 2**31)).reset_index(drop=True)
    a = load_df(df, **FIXED).aggregate_ranking(agg).table
    b = load_df(shuffled, **FIXED).aggregate_ranking(agg).table
    pd.testing.assert_frame_equal(a, b)


@settings(max_examples=20, deadline=None)
@given(scores, st.data(), st.sampled_from(["mean", "trimmed_mean", "median"]))
def test_raising_a_score_never_lowers_the_aggregate(matrix, data, agg):
    i = data.draw(st.integers(0, matrix.shape[0] - 1))
    j = data.draw(st.integers(0, matrix.shape[1] - 1))
    raised = matrix.copy()
    raised[i, j] = data.draw(st.floats(matrix[i, j], 1.0))
    assert aggregate_scores(raised, agg)[i] >= aggregate_scores(matrix, agg)[i] - 1e-12
    before = load_df(frame_from(matrix), **FIXED).aggregate_ranking(agg).table
    after = load_df(frame_from(raised), **FIXED).aggregate_ranking(agg).table
    model = f"M{i}"
    assert (after.set_index("model").loc[model, "score"]
            >= before.set_index("model").loc[model, "score"] - 1e-12)


def test_plot_returns_figure_with_model_labels(four_models):
    result = load_df(four_models, **FIXED).aggregate_ranking("mean")
    fig = result.plot(title="Means", figsize=(5, 3), model_colors=["#000000"] * 4)
    assert isinstance(fig, Figure)
    ax = fig.axes[0]
    assert ax.get_title() == "Means"
    assert [t.get_text() for t in ax.get_yticklabels()] == result.table["model"].tolist()
    with pytest.raises(ValueError, match="one colour per model"):
        result.plot(model_colors=["red"])
