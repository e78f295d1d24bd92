"""Benchmark attributes and selection; BenchmarkGroup (one normalized Benchmark per condition)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from arenalite import Benchmark, BenchmarkGroup, load_df

FIXED = {"norm_ref_low": 0.0, "norm_ref_high": 1.0}


@pytest.fixture
def bench(four_models) -> Benchmark:
    return load_df(four_models, **FIXED)


def test_attributes(bench):
    assert list(bench.scores_.index) == bench.models_
    assert list(bench.scores_.columns) == bench.datasets_
    assert bench._raw.shape == (4, 6)
    assert bench.metrics_.unique().tolist() == ["accuracy"]
    assert set(bench.directions_) == {"max"}
    assert not bench.has_seeds
    assert "4 models × 6 datasets" in repr(bench)


def test_selection_returns_new_objects(bench):
    sub = bench.select_models(["Steady", "Sprinter"])
    assert sub is not bench and sub.models_ == ["Sprinter", "Steady"]
    assert bench.models_ == ["Specialist-X", "Specialist-Y", "Sprinter", "Steady"]
    assert bench.drop_models("Steady").models_ == ["Specialist-X", "Specialist-Y", "Sprinter"]
    assert bench.select_datasets(["D1", "D4"]).datasets_ == ["D1", "D4"]
    assert bench.drop_datasets(["D1"]).datasets_ == ["D2", "D3", "D4", "D5", "D6"]
    assert bench.drop_incomplete().models_ == bench.models_


def test_selection_keeps_normalization_frozen(four_models):
    with pytest.warns(UserWarning):
        full = load_df(four_models)
    sub = full.drop_models(["Specialist-X", "Specialist-Y"])
    pd.testing.assert_frame_equal(sub.scores_, full.scores_.loc[["Sprinter", "Steady"]])


def test_selection_unknown_name(bench):
    with pytest.raises(ValueError, match=r"model \['Nobody'\] not found in score matrix"):
        bench.select_models(["Nobody"])
    with pytest.raises(ValueError, match=r"dataset \['D9'\] not found in score matrix"):
        bench.drop_datasets("D9")


def test_selection_leaving_nothing(bench):
    with pytest.raises(ValueError, match="leaves no models"):
        bench.drop_models(bench.models_)
    with pytest.raises(ValueError, match="leaves no datasets"):
        bench.select_datasets([])


@pytest.fixture
def group(four_models) -> BenchmarkGroup:
    other = four_models.assign(score=four_models["score"] * 0.5)
    df = pd.concat([four_models.assign(cond="full"), other.assign(cond="half")],
                   ignore_index=True)
    with pytest.warns(UserWarning):
        return load_df(df, condition_col="cond")


def test_group_normalizes_each_condition_independently(group):
    assert len(group) == 2 and group.conditions_ == ["full", "half"]
    pd.testing.assert_frame_equal(group["full"].scores_, group["half"].scores_)
    assert group["half"]._raw.loc["Steady", "D1"] == pytest.approx(0.465)


def test_group_access(group):
    assert [label for label, _ in group] == ["full", "half"]
    assert group.keys() == ["full", "half"]
    assert all(isinstance(b, Benchmark) for b in group.values())
    assert dict(group.items())["half"] is group["half"]
    assert "full" in group and "other" not in group
    assert "cond" in repr(group)
    with pytest.raises(KeyError, match="condition 'other' not found"):
        group["other"]


def test_group_selection_applies_to_every_condition(group):
    sub = group.drop_models(["Steady"])
    assert isinstance(sub, BenchmarkGroup)
    assert all(b.models_ == ["Specialist-X", "Specialist-Y", "Sprinter"] for _, b in sub)
    assert all(b.datasets_ == ["D1"] for _, b in group.select_datasets(["D1"]))
    with pytest.raises(ValueError, match=r"model \['Nobody'\] not found in score matrix"):
        group.select_models(["Nobody"])


def test_group_needs_two_conditions(bench):
    with pytest.raises(ValueError, match="at least two conditions"):
        BenchmarkGroup({"only": bench}, "cond")
    with pytest.raises(TypeError, match="must map to a Benchmark"):
        BenchmarkGroup({"a": bench, "b": "not a benchmark"}, "cond")


# ---- SPEC §2 table contract: every method's .table columns, in SPEC's order -------------
@pytest.mark.parametrize("method, kwargs, columns, sort", [
    ("aggregate_ranking", {}, ["model", "score"], ("score", False)),
    ("iqm_ranking", {"n_bootstrap": 30, "random_state": 0},
     ["model", "IQM", "CI_low", "CI_high"], ("IQM", False)),
    ("elo_ranking", {"n_bootstrap": 30, "random_state": 0},
     ["model", "ELO", "CI_low", "CI_high"], ("ELO", False)),
    ("improvability_ranking", {}, ["model", "improvability"], ("improvability", True)),
    ("performance_profiles", {}, ["tau", "model", "fraction_within_tau"], None),
    ("bayesian_comparison", {"random_state": 0},
     ["model_a", "model_b", "p_a_better", "p_equiv", "p_b_better"], None),
    ("frequentist_comparison", {}, ["model_a", "model_b", "rank_diff", "p_value", "significant"],
     None),
    ("frequentist_comparison", {"reference": "A"},
     ["model_a", "model_b", "w_statistic", "p_value", "p_adjusted", "significant"], None),
    ("compare_rankings", {}, ["model", "aggregate", "elo", "improvability", "rank_spread"], None),
])
@pytest.mark.filterwarnings("ignore:the Bradley-Terry MLE is infinite")
def test_every_table_has_specs_columns_in_order(seeded, method, kwargs, columns, sort):
    from matplotlib.figure import Figure

    result = getattr(load_df(seeded, seed="seed", **FIXED), method)(**kwargs)
    assert list(result.table.columns) == columns
    assert result.table.notna().all().all()  # nothing returned as NaN
    assert list(result.table.index) == list(range(len(result.table)))
    if sort is not None:
        values = result.table[sort[0]].to_numpy()
        assert (np.diff(values) >= 0).all() if sort[1] else (np.diff(values) <= 0).all()
    assert isinstance(result.plot(figsize=(4, 3), title="t"), Figure)


def test_result_parameters_read_as_attributes(bench):
    result = bench.bayesian_comparison(rope=0.02, reference="Steady", random_state=0)
    assert (result.reference, result.rope, result.random_state) == ("Steady", 0.02, 0)
    freq = bench.frequentist_comparison(alpha=0.1)
    assert freq.alpha == 0.1 and freq.reference is None
    assert freq.friedman_p_value == freq.friedman_p
    with pytest.raises(AttributeError, match="no attribute 'not_a_parameter'"):
        _ = result.not_a_parameter
