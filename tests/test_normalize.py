"""Normalization semantics: raw [low, high] bounds, lower-is-better datasets flipped, 1 = best."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arenalite import load_df
from arenalite.normalize import normalize_values


def one_dataset(scores, metric="accuracy", seeds=None) -> pd.DataFrame:
    models = [f"M{i}" for i in range(len(scores))]
    df = pd.DataFrame({"model": models, "dataset": "d", "metric": metric, "score": scores})
    if seeds is not None:
        df = pd.concat([df.assign(seed=s, score=df["score"] + off) for s, off in seeds],
                       ignore_index=True)
    return df


def test_normalize_values_is_the_linear_map():
    out = normalize_values(np.array([2.0, 5.0, 8.0]), np.full(3, 2.0), np.full(3, 8.0))
    np.testing.assert_allclose(out, [0.0, 0.5, 1.0])
    flipped = normalize_values(np.array([2.0, 8.0]), np.full(2, 8.0), np.full(2, 2.0))
    np.testing.assert_array_equal(flipped, [1.0, 0.0])
    assert not np.signbit(flipped).any()


def test_evaluma_toy_lower_is_better_dict_bounds():
    """evaluma IQM tutorial §1: RMSE 12 with bounds [0, 100] becomes (100 − 12) / 100."""
    df = pd.DataFrame({
        "model": ["Model-1"] * 3 + ["Model-2"] * 3 + ["Model-3"] * 3,
        "dataset": ["Dataset-A", "Dataset-B", "Dataset-C"] * 3,
        "metric": ["accuracy", "f1", "rmse"] * 3,
        "score": [0.72, 0.65, 12.0, 0.84, 0.58, 45.0, 0.61, 0.79, 28.0],
    })
    bench = load_df(df, norm_ref_low={"Dataset-A": 0.0, "Dataset-B": 0.0, "Dataset-C": 0.0},
                    norm_ref_high={"Dataset-A": 1.0, "Dataset-B": 1.0, "Dataset-C": 100.0},
                    metric_direction={"Dataset-C": "min"})
    assert bench.scores_["Dataset-C"].tolist() == pytest.approx([0.88, 0.55, 0.72])
    assert bench.scores_.loc["Model-1"].mean() == pytest.approx(0.75)


def test_observed_bounds_for_lower_is_better_put_best_at_one():
    with pytest.warns(UserWarning, match="observed"):
        bench = load_df(one_dataset([3.0, 5.0, 9.0], metric="rmse"))
    assert bench.scores_["d"].tolist() == pytest.approx([1.0, 2 / 3, 0.0])
    assert bench._norm_low["d"] == 9.0 and bench._norm_high["d"] == 3.0


def test_observed_bounds_use_seed_means():
    df = one_dataset([0.2, 0.6], seeds=[(0, -0.1), (1, 0.1)])
    with pytest.warns(UserWarning):
        bench = load_df(df, seed="seed")
    assert bench.scores_["d"].tolist() == pytest.approx([0.0, 1.0])
    assert sorted(bench._long["norm"].round(6)) == pytest.approx([-0.25, 0.25, 0.75, 1.25])


def test_model_name_bounds_for_lower_is_better():
    """rmse in [0, Baseline]: the baseline maps to 0, a perfect model to 1."""
    df = one_dataset([0.0, 4.0, 8.0], metric="rmse")
    bench = load_df(df, norm_ref_low=0.0, norm_ref_high="M2")
    assert bench.scores_["d"].tolist() == pytest.approx([1.0, 0.5, 0.0])


def test_lower_is_better_model_low_above_high_is_explained():
    df = one_dataset([2.0, 8.0], metric="rmse")
    with pytest.raises(ValueError, match="lower-is-better dataset the low bound is the best"):
        load_df(df, norm_ref_low="M1", norm_ref_high="M0")


def test_metric_type_bounds_accuracy_identity(four_models):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        bench = load_df(four_models, metric_type_bounds={"accuracy": (0, 1)})
    pd.testing.assert_frame_equal(bench.scores_, bench._raw)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(0.0, 100.0, allow_nan=False), min_size=2, max_size=8, unique=True),
       st.sampled_from(["accuracy", "rmse"]))
def test_observed_bounds_map_into_unit_interval_with_best_at_one(scores, metric):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bench = load_df(one_dataset(scores, metric=metric))
    norm = bench.scores_["d"].to_numpy()
    raw = bench._raw["d"].to_numpy()
    assert norm.min() == pytest.approx(0.0) and norm.max() == pytest.approx(1.0)
    best = raw.argmax() if metric == "accuracy" else raw.argmin()
    assert norm[best] == pytest.approx(1.0)
    order = np.argsort(raw)
    steps = np.diff(norm[order])
    assert (steps >= 0).all() if metric == "accuracy" else (steps <= 0).all()


def test_references_that_do_not_bracket_the_scores_warn():
    """RMSE 50-90 with references 0 and 1 would normalize to about -89 .. -49: say so."""
    df = pd.concat([one_dataset([0.9, 0.8, 0.7]),
                    one_dataset([51.1, 70.0, 90.9], metric="rmse").assign(dataset="diabetes")],
                   ignore_index=True)
    with pytest.warns(UserWarning, match=r"do not bracket the scores of 1 dataset") as caught:
        load_df(df, norm_ref_low=0.0, norm_ref_high=1.0)
    message = str(caught[0].message)
    assert "dataset 'diabetes' (rmse): scores 51.1 to 90.9, references 0 to 1" in message
    assert "normalized -89.9 to -50.1" in message


def test_bracketing_and_model_references_do_not_warn():
    df = one_dataset([51.1, 70.0, 90.9], metric="rmse")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load_df(df, norm_ref_low=0.0, norm_ref_high=100.0)
        load_df(df, norm_ref_low=0.0, norm_ref_high="M1")  # a model: beyond it is expected
        load_df(df, metric_type_bounds={"rmse": (0, "M2")})


def test_metric_type_bounds_that_do_not_bracket_warn():
    df = one_dataset([51.1, 70.0, 90.9], metric="rmse")
    with pytest.warns(UserWarning, match=r"metric_type_bounds do not bracket .* to 60"):
        load_df(df, metric_type_bounds={"rmse": (0, 60)})
