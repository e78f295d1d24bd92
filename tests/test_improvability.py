"""Improvability (TabArena) and normalized improvability: golden values, core functions,
task split, bad input, and a monotonicity property."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arenalite.rankings import improvability as I
from frames import long_frame as long
from frames import quiet_load as load

TABARENA = {"A": [0.1, 0.1, 0.2], "B": [0.2, 0.3, 0.3], "C": [0.4, 0.5, 0.6]}


def test_four_model_golden(four_models):
    res = load(four_models, norm_ref_low=0.0, norm_ref_high=1.0).improvability_ranking()
    assert list(res.table.columns) == ["model", "improvability"]
    got = dict(zip(res.table["model"], res.table["improvability"], strict=True))
    assert got["Specialist-X"] == pytest.approx(45.56, abs=0.005)
    assert got["Specialist-Y"] == pytest.approx(45.56, abs=0.005)
    assert got["Steady"] == pytest.approx(61.43, abs=0.005)
    assert got["Sprinter"] == pytest.approx(73.33, abs=0.005)
    assert list(res.table["model"]) == ["Specialist-X", "Specialist-Y", "Steady", "Sprinter"]
    per = res.per_dataset.set_index(["model", "dataset"])
    assert list(res.per_dataset.columns) == ["model", "dataset", "error", "best_error",
                                             "improvability"]
    assert per.loc[("Steady", "D4"), "improvability"] == pytest.approx(80.0)
    assert per.loc[("Steady", "D4"), "error"] == pytest.approx(0.20)
    assert per.loc[("Steady", "D4"), "best_error"] == pytest.approx(0.04)


def test_tabarena_example_with_error_metric():
    res = load(long(TABARENA, ["rmse"] * 3)).improvability_ranking()
    got = dict(zip(res.table["model"], res.table["improvability"], strict=True))
    assert got["A"] == 0.0
    assert got["B"] == pytest.approx(50.0)


def test_unknown_min_metric_has_optimum_zero():
    df = long(TABARENA, ["my_loss"] * 3)
    res = load(df, metric_direction={f"d{k}": "min" for k in range(3)}).improvability_ranking()
    assert res.table.set_index("model").loc["B", "improvability"] == pytest.approx(50.0)


def test_core_functions_on_arrays():
    raw = np.array([[0.9, 2.0], [0.8, 0.0]])
    err = I.errors(raw, np.array([1.0, 0.0]), np.array([True, False]))
    assert np.allclose(err, [[0.1, 2.0], [0.2, 0.0]])
    value, best = I.relative_improvability(err)
    assert np.allclose(best, [0.1, 0.0])
    assert np.allclose(value, [[0.0, 100.0], [50.0, 0.0]])  # error 0 → 0, never NaN
    regret, best = I.headroom_regret(np.array([[0.1], [0.3]]), np.array([0.5]))
    assert np.allclose(regret[:, 0], [0.0, 50.0])


def test_unknown_higher_is_better_metric_raises_only_when_called():
    bench = load(long(TABARENA, ["mystery"] * 3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bench.elo_ranking(n_bootstrap=0)  # other methods still work
    with pytest.raises(ValueError, match="Unknown metric 'mystery'.*'d0'"):
        bench.improvability_ranking()


def test_score_beyond_optimum_is_an_error():
    df = long({"A": [1.2, 0.5], "B": [0.8, 0.4]}, ["accuracy", "accuracy"])
    with pytest.raises(ValueError, match="model 'A' on dataset 'd0' has score 1.2"):
        load(df).improvability_ranking()


def test_direction_against_the_registry_reads_distances_from_the_optimum():
    """ROC AUC read as lower-is-better: the scores are TabArena's metric_error, 1 − AUC,
    optimum 0 (TabArena's example: A 0, B 50 %); the anchor becomes 1 − 0.5 = 0.5."""
    df = long(TABARENA, ["roc_auc"] * 3)
    bench = load(df, metric_direction={"roc_auc": "min"})
    got = dict(zip(*bench.improvability_ranking().table.T.to_numpy(), strict=True))
    assert got["A"] == pytest.approx(0.0) and got["B"] == pytest.approx(50.0)
    normalized = bench.improvability_ranking(normalized=True).per_dataset
    assert (normalized["dummy_error"] == 0.5).all()
    # accuracy marked "min" per dataset: error rates, optimum 0
    per = load(long({"A": [0.1], "B": [0.2]}, ["accuracy"]),
               metric_direction={"d0": "min"}).improvability_ranking().per_dataset
    assert per.set_index("model").loc["B", "improvability"] == pytest.approx(50.0)


def test_infinite_optimum():
    df = long({"A": [0.9], "B": [0.8]}, ["gaussian_nll"])
    with pytest.raises(ValueError, match="no finite optimum"):
        load(df).improvability_ranking()


# ---- normalized ------------------------------------------------------------------------------
def test_normalized_with_dummy_model_and_task_split():
    scores = {"A": [0.9, 0.30, 1.0], "B": [0.8, 0.60, 2.0], "Dummy": [0.5, 1.0986, 4.0]}
    df = long(scores, ["roc_auc", "log_loss", "rmse"])
    res = load(df).improvability_ranking(normalized=True, dummy="Dummy")
    assert list(res.table.columns) == ["model", "improvability", "improvability_classification",
                                       "improvability_regression"]
    assert "Dummy" not in set(res.table["model"])
    t = res.table.set_index("model")
    b_auc = (0.9 - 0.8) / (0.9 - 0.5) * 100
    b_ll = (0.6 - 0.3) / (1.0986 - 0.3) * 100
    b_rmse = (2.0 - 1.0) / (4.0 - 1.0) * 100
    assert t.loc["A", "improvability"] == 0.0
    assert t.loc["B", "improvability"] == pytest.approx((b_auc + b_ll + b_rmse) / 3)
    assert t.loc["B", "improvability_classification"] == pytest.approx((b_auc + b_ll) / 2)
    assert t.loc["B", "improvability_regression"] == pytest.approx(b_rmse)
    per = res.per_dataset.set_index(["model", "dataset"])
    assert per.loc[("B", "d0"), "dummy_error"] == pytest.approx(0.5)
    assert per.loc[("B", "d2"), "task"] == "regression"


def test_normalized_dict_anchor_and_registry_anchor():
    df = long({"A": [0.9, 0.7], "B": [0.7, 0.6]}, ["auc", "auc"])
    bench = load(df)
    by_registry = bench.improvability_ranking(normalized=True)  # AUC anchor 0.5
    by_dict = bench.improvability_ranking(normalized=True, dummy={"d0": 0.5, "d1": 0.5})
    pd.testing.assert_frame_equal(by_registry.table, by_dict.table)
    b = by_dict.table.set_index("model").loc["B", "improvability"]
    assert b == pytest.approx(((0.2 / 0.4) + (0.1 / 0.2)) / 2 * 100)
    assert list(by_dict.table.columns) == ["model", "improvability",
                                           "improvability_classification"]


def test_task_of():
    assert I.task_of("accuracy") == "classification"
    assert I.task_of("LOG_LOSS") == "classification"
    assert I.task_of("brier") == "classification"
    assert I.task_of("1-auc") == "classification"
    assert I.task_of("rmse") == "regression"
    assert I.task_of("r2") == "regression"
    assert I.task_of("nonsense") is None


@pytest.mark.parametrize(
    ("kwargs", "error", "pattern"),
    [
        ({"normalized": True, "dummy": "Nobody"}, ValueError, "'Nobody' not found in score matrix"),
        ({"normalized": True, "dummy": {"d0": 0.5}}, ValueError, r"no anchor value.*'d1'"),
        ({"normalized": True, "dummy": {"d0": 0.5, "d1": 0.5, "dx": 0.5}}, ValueError, "'dx'"),
        ({"normalized": True, "dummy": {"d0": "low", "d1": 0.5}}, TypeError, r"dummy\['d0'\]"),
        ({"normalized": True, "dummy": {"d0": np.inf, "d1": 0.5}}, ValueError, "finite"),
        ({"normalized": True, "dummy": 0.5}, TypeError, "dummy must be"),
        ({"normalized": False, "dummy": "A"}, ValueError, "only used with normalized=True"),
        ({"normalized": "yes"}, TypeError, "normalized"),
        ({"normalized": True, "dummy": {"d0": 0.95, "d1": 0.5}}, ValueError,
         "dataset 'd0'.*not above the best"),
    ],
)
def test_bad_normalized_input(kwargs, error, pattern):
    bench = load(long({"A": [0.9, 0.7], "B": [0.7, 0.6]}, ["auc", "auc"]))
    with pytest.raises(error, match=pattern):
        bench.improvability_ranking(**kwargs)


def test_dataset_specific_anchor_needs_dummy():
    bench = load(long({"A": [0.9, 1.0], "B": [0.7, 2.0]}, ["accuracy", "rmse"]))
    pattern = r"'d0' \(accuracy: majority_rate\).*'d1' \(rmse: sigma_y\)"
    with pytest.raises(ValueError, match=pattern):
        bench.improvability_ranking(normalized=True)


def test_plot(four_models):
    from matplotlib.figure import Figure

    res = load(four_models, norm_ref_low=0.0, norm_ref_high=1.0).improvability_ranking()
    assert isinstance(res.plot(), Figure)


@settings(max_examples=25, deadline=None)
@given(grid=st.lists(st.lists(st.floats(0.05, 0.95), min_size=3, max_size=3), min_size=2,
                     max_size=4),
       who=st.integers(0, 3), where=st.integers(0, 2), bump=st.floats(0.0, 0.5))
def test_core_raising_a_score_never_raises_improvability(grid, who, where, bump):
    raw = np.array(grid)
    who %= len(grid)
    optimum, higher = np.ones(3), np.ones(3, dtype=bool)
    before, _ = I.relative_improvability(I.errors(raw, optimum, higher))
    raw[who, where] = min(raw[who, where] + bump, 1.0)
    after, _ = I.relative_improvability(I.errors(raw, optimum, higher))
    assert after[who].mean() <= before[who].mean() + 1e-9
    assert np.isfinite(after).all() and (after >= 0).all() and (after <= 100).all()
