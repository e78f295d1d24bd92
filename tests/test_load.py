"""load_df / load_csv: every SPEC §2 bad-input rule, one test each, plus the happy paths."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import pytest

import arenalite
from arenalite import Benchmark, BenchmarkGroup, load_csv, load_df

FIXED = {"norm_ref_low": 0.0, "norm_ref_high": 1.0}


def small(**overrides) -> pd.DataFrame:
    """2 models × 2 accuracy datasets."""
    df = pd.DataFrame({
        "model": ["A", "A", "B", "B"],
        "dataset": ["d1", "d2", "d1", "d2"],
        "metric": ["accuracy"] * 4,
        "score": [0.9, 0.8, 0.7, 0.6],
    })
    for column, values in overrides.items():
        df[column] = values
    return df


def test_returns_benchmark_with_golden_matrix(four_models):
    bench = load_df(four_models, **FIXED)
    assert isinstance(bench, Benchmark)
    assert bench.models_ == ["Specialist-X", "Specialist-Y", "Sprinter", "Steady"]
    assert bench.datasets_ == ["D1", "D2", "D3", "D4", "D5", "D6"]
    assert bench.scores_.loc["Steady", "D4"] == pytest.approx(0.80)
    pd.testing.assert_frame_equal(bench.scores_, bench._raw)


def test_column_names_are_mapped(four_models):
    renamed = four_models.rename(columns={"model": "m", "dataset": "d", "metric": "k",
                                          "score": "s"})
    bench = load_df(renamed, model="m", dataset="d", metric="k", score="s", **FIXED)
    pd.testing.assert_frame_equal(bench.scores_, load_df(four_models, **FIXED).scores_)


def test_load_csv_round_trip(tmp_path, four_models):
    path = tmp_path / "scores.csv"
    four_models.to_csv(path, index=False)
    bench = load_csv(path, **FIXED)
    pd.testing.assert_frame_equal(bench.scores_, load_df(four_models, **FIXED).scores_)


def test_df_not_a_dataframe_is_type_error(four_models):
    with pytest.raises(TypeError, match="df must be a pandas DataFrame, got dict"):
        load_df(four_models.to_dict(), **FIXED)


def test_empty_frame():
    with pytest.raises(ValueError, match="empty"):
        load_df(small().iloc[:0], **FIXED)


def test_missing_column_names_it_and_option():
    with pytest.raises(ValueError, match=r"column 'name' \(given as model=\) not found"):
        load_df(small(), model="name", **FIXED)


def test_missing_seed_column():
    with pytest.raises(ValueError, match=r"column 'run' \(given as seed=\) not found"):
        load_df(small(), seed="run", **FIXED)


def test_non_numeric_score_names_column_value_and_row():
    df = small(score=[0.9, "abc", 0.7, 0.6])
    with pytest.raises(ValueError, match=r"column 'score' has a non-numeric value 'abc' in row 1"):
        load_df(df, **FIXED)


def test_numeric_strings_are_not_coerced():
    df = small(score=["0.9", "0.8", "0.7", "0.6"])
    with pytest.raises(ValueError, match=r"holds numbers stored as text, e.g. '0.9' in row 0"):
        load_df(df, **FIXED)


def test_csv_with_text_in_row_5_names_that_value_and_row(tmp_path):
    """One bad cell makes pandas read the whole column as text: name the bad cell, not row 0."""
    rows = [("A", f"d{i}", 0.959226 - i / 100) for i in range(5)] + [("A", "d5", "abc")]
    path = tmp_path / "scores.csv"
    pd.DataFrame(rows, columns=["model", "dataset", "score"]).assign(metric="accuracy").to_csv(
        path, index=False)
    with pytest.raises(ValueError, match=r"column 'score' has a non-numeric value 'abc' in row 5"):
        load_csv(path, **FIXED)


def test_empty_csv_file(tmp_path):
    path = tmp_path / "empty.csv"
    path.write_text("")
    with pytest.raises(ValueError, match="is empty: no header row and no data"):
        load_csv(path, **FIXED)


def test_boolean_scores_are_rejected():
    with pytest.raises(ValueError, match="column 'score' holds booleans"):
        load_df(small(score=[True, False, True, False]), **FIXED)


@pytest.mark.parametrize("bad", [np.inf, -np.inf, np.nan])
def test_non_finite_score_names_column_value_and_row(bad):
    df = small(score=[0.9, 0.8, bad, 0.6])
    with pytest.raises(ValueError, match=r"column 'score' has a non-finite value .* in row 2"):
        load_df(df, **FIXED)


def test_missing_model_label_names_column_and_row():
    df = small(model=["A", None, "B", "B"])
    with pytest.raises(ValueError, match=r"column 'model' has a missing value in row 1"):
        load_df(df, **FIXED)


def test_duplicate_rows_name_the_key_and_rows():
    df = pd.concat([small(), small().iloc[[2]]], ignore_index=True)
    with pytest.raises(ValueError, match=r"duplicate rows for \(model='B', dataset='d1'\) "
                                         r"in rows \[2, 4\].*seed="):
        load_df(df, **FIXED)


def test_duplicate_seed_rows():
    df = small(run=[1, 1, 1, 1])
    df = pd.concat([df, df.iloc[[0]]], ignore_index=True)
    with pytest.raises(ValueError, match=r"duplicate rows for \(model='A', dataset='d1', run=1\)"):
        load_df(df, seed="run", **FIXED)


def test_dataset_with_two_metrics():
    df = small(metric=["accuracy", "accuracy", "f1", "accuracy"])
    with pytest.raises(ValueError, match=r"dataset 'd1' has more than one metric in column "
                                         r"'metric': 'accuracy' \(row 0\), 'f1' \(row 2\)"):
        load_df(df, **FIXED)


def test_two_metrics_for_one_model_dataset_cell():
    df = pd.concat([small(), small().iloc[[0]].assign(metric="f1", score=0.5)], ignore_index=True)
    with pytest.raises(ValueError, match="dataset 'd1' has more than one metric"):
        load_df(df, **FIXED)


def test_missing_cells_name_the_pairs():
    df = small().drop(index=3)
    with pytest.raises(ValueError, match=r"missing \(model, dataset\) cells: \('B', 'd2'\)"):
        load_df(df, **FIXED)


def test_drop_incomplete_drops_models_with_a_warning():
    df = small().drop(index=3)
    with pytest.warns(UserWarning, match=r"dropped models \['B'\]"):
        bench = load_df(df, drop_incomplete=True, **FIXED)
    assert bench.models_ == ["A"]


def test_drop_incomplete_dropping_everything_is_an_error():
    df = small().drop(index=[0, 3])
    with pytest.raises(ValueError, match="would drop every model"):
        load_df(df, drop_incomplete=True, **FIXED)


def test_drop_incomplete_must_be_bool():
    with pytest.raises(TypeError, match="drop_incomplete must be True or False, got 'yes'"):
        load_df(small(), drop_incomplete="yes", **FIXED)


def test_seeds_keep_rows_and_average_the_matrix(seeded):
    bench = load_df(seeded, seed="seed", **FIXED)
    assert bench.has_seeds and len(bench._long) == len(seeded)
    expected = seeded.groupby(["model", "dataset"])["score"].mean().unstack()
    np.testing.assert_allclose(bench._raw.to_numpy(), expected.to_numpy())


def test_missing_seed_label_names_row(seeded):
    seeded.loc[7, "seed"] = np.nan
    with pytest.raises(ValueError, match=r"column 'seed' has a missing value in row 7"):
        load_df(seeded, seed="seed", **FIXED)


# ---- direction -----------------------------------------------------------------
def test_bad_metric_direction_value_names_dataset_and_value():
    with pytest.raises(ValueError, match=r"metric_direction\['d1'\] must be 'max' or 'min', "
                                         r"got 'lower'"):
        load_df(small(), metric_direction={"d1": "lower"}, **FIXED)


def test_metric_direction_unknown_dataset():
    with pytest.raises(ValueError, match=r"metric_direction names \['d9'\], neither a dataset "
                                         r"nor a metric.*datasets are \['d1', 'd2'\], metrics "
                                         r"\['accuracy'\]"):
        load_df(small(), metric_direction={"d9": "min"}, **FIXED)


def test_metric_direction_not_a_dict():
    with pytest.raises(TypeError, match="metric_direction must be a dict or None, got list"):
        load_df(small(), metric_direction=["d1"], **FIXED)


def test_registry_decides_direction_case_insensitively():
    df = small(metric=["accuracy", "RMSE", "accuracy", "RMSE"], score=[0.9, 3.0, 0.7, 5.0])
    bench = load_df(df, norm_ref_low=0.0, norm_ref_high={"d1": 1.0, "d2": 10.0})
    assert bench.directions_.to_dict() == {"d1": "max", "d2": "min"}
    assert bench.scores_.loc["A", "d2"] == pytest.approx(0.7)


def test_unknown_metric_warns_and_is_higher_is_better():
    df = small(metric=["accuracy", "foo_score", "accuracy", "foo_score"])
    with pytest.warns(UserWarning, match="Unknown metric 'foo_score'"):
        bench = load_df(df, **FIXED)
    assert bench.directions_["d2"] == "max"


def test_unknown_metric_with_explicit_direction_does_not_warn():
    df = small(metric=["accuracy", "foo_score", "accuracy", "foo_score"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        bench = load_df(df, metric_direction={"d2": "min"}, **FIXED)
    assert bench.directions_["d2"] == "min"


def test_metric_direction_wins_over_registry():
    bench = load_df(small(), metric_direction={"d1": "min"}, **FIXED)
    assert bench.directions_["d1"] == "min"
    assert bench.scores_.loc["A", "d1"] == pytest.approx(0.1)


# ---- normalization references -------------------------------------------------------
def test_missing_bounds_warn():
    with pytest.warns(UserWarning, match="norm_ref_low and norm_ref_high not given"):
        bench = load_df(small())
    assert bench.scores_.loc["A", "d1"] == 1.0 and bench.scores_.loc["B", "d1"] == 0.0


def test_norm_ref_scalar():
    bench = load_df(small(), norm_ref_low=0.5, norm_ref_high=1.0)
    assert bench.scores_.loc["A", "d1"] == pytest.approx(0.8)


def test_norm_ref_model_name():
    bench = load_df(small(), norm_ref_low="B", norm_ref_high=1.0)
    assert bench.scores_.loc["B"].tolist() == [0.0, 0.0]
    assert bench.scores_.loc["A", "d1"] == pytest.approx(0.2 / 0.3)


def test_norm_ref_dict():
    bench = load_df(small(), norm_ref_low={"d1": 0.5, "d2": 0.0}, norm_ref_high=1.0)
    assert bench.scores_.loc["A"].tolist() == pytest.approx([0.8, 0.8])


def test_norm_ref_dict_missing_dataset():
    with pytest.raises(ValueError, match=r"norm_ref_low has no value for dataset\(s\) \['d2'\]"):
        load_df(small(), norm_ref_low={"d1": 0.0}, norm_ref_high=1.0)


def test_norm_ref_dict_unknown_dataset():
    with pytest.raises(ValueError, match=r"norm_ref_high names dataset\(s\) \['dX'\]"):
        load_df(small(), norm_ref_low=0.0, norm_ref_high={"d1": 1, "d2": 1, "dX": 1})


def test_unknown_reference_model():
    with pytest.raises(ValueError, match="reference model 'Nobody' not found in score matrix"):
        load_df(small(), norm_ref_low="Nobody", norm_ref_high=1.0)


@pytest.mark.parametrize("bad", [[0.0], True, {0.0}])
def test_norm_ref_of_wrong_type(bad):
    with pytest.raises(TypeError, match="norm_ref_low"):
        load_df(small(), norm_ref_low=bad, norm_ref_high=1.0)


def test_norm_ref_non_finite():
    with pytest.raises(ValueError, match="norm_ref_high must be finite, got inf"):
        load_df(small(), norm_ref_low=0.0, norm_ref_high=np.inf)


def test_norm_ref_low_above_high():
    with pytest.raises(ValueError, match=r"dataset 'd1': norm_ref_low/norm_ref_high give "
                                         r"low = 1.0 and high = 0.0"):
        load_df(small(), norm_ref_low=1.0, norm_ref_high=0.0)


def test_equal_bounds_cannot_normalize():
    df = small(score=[0.5, 0.8, 0.5, 0.6])
    with pytest.warns(UserWarning), pytest.raises(ValueError, match="dataset 'd1'.*equal bounds"):
        load_df(df)


# ---- metric_type_bounds ----------------------------------------------------------
def test_metric_type_bounds_cannot_be_combined():
    with pytest.raises(ValueError, match="metric_type_bounds cannot be combined"):
        load_df(small(), metric_type_bounds={"accuracy": (0, 1)}, norm_ref_low=0.0)


def test_metric_type_bounds_natural_bounds_of_registered_metric():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        bench = load_df(small(), metric_type_bounds={})
    assert bench.scores_.loc["A", "d1"] == pytest.approx(0.9)


def test_unbounded_metric_must_be_listed():
    df = small(metric=["rmse"] * 4, score=[1.0, 2.0, 3.0, 4.0])
    with pytest.raises(ValueError, match="metric 'rmse' .*no natural upper bound"):
        load_df(df, metric_type_bounds={"accuracy": (0, 1)})


def test_r2_needs_a_listed_lower_bound():
    df = small(metric=["r2"] * 4)
    with pytest.raises(ValueError, match="metric 'r2' .*no natural lower bound"):
        load_df(df, metric_type_bounds={})


def test_unknown_metric_with_metric_type_bounds():
    df = small(metric=["foo"] * 4)
    with pytest.raises(ValueError, match="Unknown metric 'foo'"):
        load_df(df, metric_type_bounds={"accuracy": (0, 1)})


def test_listed_unknown_metric_is_allowed():
    df = small(metric=["foo"] * 4)
    with pytest.warns(UserWarning, match="Unknown metric 'foo'"):
        bench = load_df(df, metric_type_bounds={"FOO": (0.0, 2.0)})
    assert bench.scores_.loc["A", "d1"] == pytest.approx(0.45)


def test_metric_type_bounds_model_name_high_for_lower_is_better():
    df = pd.DataFrame({"model": ["Good", "Baseline"], "dataset": ["d", "d"],
                       "metric": ["rmse", "rmse"], "score": [2.0, 8.0]})
    bench = load_df(df, metric_type_bounds={"rmse": (0, "Baseline")})
    assert bench.scores_.loc["Baseline", "d"] == 0.0
    assert bench.scores_.loc["Good", "d"] == pytest.approx(0.75)
    assert bench._norm_low["d"] == 8.0 and bench._norm_high["d"] == 0.0


def test_metric_type_bounds_listing_overrides_and_absent_metrics_are_ignored():
    # configuration guide: {"rmse": ..., "mae": ...} where only some of them occur
    df = small(metric=["rmse"] * 4, score=[1.0, 2.0, 3.0, 4.0])
    bench = load_df(df, metric_type_bounds={"RMSE": (0.0, 5.0), "mae": (0.0, 12.5)})
    assert bench.scores_.loc["A", "d1"] == pytest.approx(0.8)
    narrowed = load_df(small(), metric_type_bounds={"accuracy": (0.5, 1.0)})
    assert narrowed.scores_.loc["B", "d2"] == pytest.approx(0.2)
    with pytest.raises(ValueError, match=r"metric_type_bounds\['rmse'\] high for dataset "
                                         r"'d1' must be finite, got inf"):
        load_df(df, metric_type_bounds={"rmse": (0.0, float("inf"))})


def test_metric_type_bounds_unknown_model_name():
    df = small(metric=["rmse"] * 4, score=[1.0, 2.0, 3.0, 4.0])
    with pytest.raises(ValueError, match="reference model 'Dummy' not found in score matrix"):
        load_df(df, metric_type_bounds={"rmse": (0, "Dummy")})


def test_metric_type_bounds_bad_pair():
    with pytest.raises(TypeError, match=r"metric_type_bounds\['accuracy'\] must be a "
                                        r"\(low, high\) pair"):
        load_df(small(), metric_type_bounds={"accuracy": 1.0})


def test_metric_type_bounds_not_a_dict():
    with pytest.raises(TypeError, match="metric_type_bounds must be a dict or None, got tuple"):
        load_df(small(), metric_type_bounds=(0, 1))


# ---- condition_col --------------------------------------------------------------------
def test_condition_col_gives_group():
    df = pd.concat([small(cond="x"), small(cond="y", score=[0.5, 0.5, 0.4, 0.3])],
                   ignore_index=True)
    group = load_df(df, condition_col="cond", **FIXED)
    assert isinstance(group, BenchmarkGroup)
    assert group.conditions_ == ["x", "y"]
    assert group["y"].scores_.loc["A", "d1"] == pytest.approx(0.5)


def test_condition_col_with_one_label():
    with pytest.raises(ValueError, match=r"column 'cond' \(condition_col\) needs at least two "
                                         r"condition labels, found only \['x'\]"):
        load_df(small(cond="x"), condition_col="cond", **FIXED)


def test_condition_col_missing():
    with pytest.raises(ValueError, match=r"column 'cond' \(given as condition_col=\) not found"):
        load_df(small(), condition_col="cond", **FIXED)


def test_condition_label_missing_names_row():
    df = pd.concat([small(cond="x"), small(cond="y")], ignore_index=True)
    df.loc[5, "cond"] = None
    with pytest.raises(ValueError, match=r"column 'cond' has a missing value in row 5"):
        load_df(df, condition_col="cond", **FIXED)


def test_exported_names():
    for name in ("load_df", "load_csv", "Benchmark", "BenchmarkGroup", "register_metric"):
        assert hasattr(arenalite, name)


# ---- messages that name the culprit and the fix (issue 20) ---------------------------
def test_load_csv_shows_its_real_parameters():
    import inspect
    import pydoc

    names = list(inspect.signature(load_csv).parameters)
    assert names == ["path", "encoding", "sep", "model", "dataset", "metric", "score", "seed",
                     "metric_type_bounds", "norm_ref_low", "norm_ref_high", "metric_direction",
                     "drop_incomplete", "condition_col", "format", "task_metadata"]
    text = pydoc.render_doc(load_csv, renderer=pydoc.plaintext)
    assert "**kwargs" not in text
    assert all(f"{name}:" in text for name in names[1:])


def test_load_csv_wrong_encoding_names_the_file_and_encoding_option(tmp_path, four_models):
    path = tmp_path / "latin.csv"
    four_models.assign(model=four_models["model"] + "ü").to_csv(path, index=False,
                                                                encoding="latin-1")
    with pytest.raises(ValueError, match=rf"{re.escape(repr(str(path)))} is not utf-8 text "
                                         r"\(byte 0xfc at position \d+\); pass the file's "
                                         r"encoding with encoding=<name>"):
        load_csv(path, **FIXED)
    bench = load_csv(path, encoding="latin-1", **FIXED)
    assert all(m.endswith("ü") for m in bench.models_)
    with pytest.raises(ValueError, match="encoding='nope' is not a text encoding"):
        load_csv(path, encoding="nope", **FIXED)


@pytest.mark.parametrize("sep", [";", "\t", "|"])
def test_load_csv_reads_a_file_by_the_one_separator_its_header_holds(tmp_path, four_models, sep):
    path = tmp_path / "t.csv"
    four_models.to_csv(path, index=False, sep=sep)
    assert load_csv(path, **FIXED).scores_.equals(load_df(four_models, **FIXED).scores_)


def test_load_csv_one_column_file_says_sep(tmp_path, four_models):
    path = tmp_path / "t.csv"
    four_models.to_csv(path, index=False, sep=" ")
    with pytest.raises(ValueError, match=r"reads as one column, .*: its separator is not ','; "
                                         r"pass it with sep=<character>"):
        load_csv(path, **FIXED)
    assert load_csv(path, sep=" ", **FIXED).scores_.equals(load_df(four_models, **FIXED).scores_)


def test_load_csv_directory_is_named_as_one(tmp_path, four_models):
    four_models.to_csv(tmp_path / "scores.csv", index=False)
    with pytest.raises(ValueError, match=rf"{re.escape(repr(str(tmp_path)))} is a directory, "
                                         r"not a CSV file \(it holds scores.csv\)"):
        load_csv(tmp_path, **FIXED)


def test_unknown_metric_type_bounds_key_is_rejected_with_the_known_names():
    with pytest.raises(ValueError, match=r"metric_type_bounds names metric\(s\) \['acuracy'\] that "
                                         r"are neither in the data nor registered; metrics in "
                                         r"the data: \['accuracy'\]; registered: \[.*'rmse'"):
        load_df(small(), metric_type_bounds={"acuracy": (0, 1), "rmse": (0, 5)})


def test_wide_table_gets_a_hint_to_melt_it():
    wide = pd.DataFrame({"model": ["A", "B"], "iris": [0.9, 0.8], "wine": [0.7, 0.75],
                         "adult": [0.6, 0.65]})
    with pytest.raises(ValueError, match=r"column 'dataset' \(given as dataset=\) not found .*"
                                         r"This looks like a wide table \(a column of scores per "
                                         r"dataset: 'iris', 'wine', 'adult'\); .*Melt it first: "
                                         r"df.melt\(id_vars=\['model'\], var_name='dataset', "
                                         r"value_name='score'\), then add a 'metric' column"):
        load_df(wide)
    long = wide.melt(id_vars=["model"], var_name="dataset", value_name="score")
    assert load_df(long.assign(metric="accuracy"), **FIXED).scores_.shape == (2, 3)
