"""TabArena's format and the runners' table read natively; directions per metric and the
suspicious-direction warnings; time columns against hand computation; the TabArena-style
CSV; the Pareto figure."""

from __future__ import annotations

import warnings
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from matplotlib.figure import Figure

import arenalite
from arenalite.load import LoadNote
from arenalite.rankings.leaderboard import COLUMNS, TABARENA_ORDER, pareto_front

matplotlib.use("Agg")

FIXTURE = Path(__file__).parent / "data" / "tabarena_results.csv"
ORDER = ["GBM-tuned", "TabICL", "GBM-default", "Linear"]  # the fixture's known order
AS_LONG = dict(format="long", model="method", score="metric_error", seed="fold")
"""The issue's attempt: TabArena's file read as a plain long table with column options."""


def load(frame: pd.DataFrame | Path, **kwargs):
    """Load, returning the Benchmark and the warnings as (category, message) pairs."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if isinstance(frame, Path):
            bench = arenalite.load_csv(frame, **kwargs)
        else:
            bench = arenalite.load_df(frame, **kwargs)
    return bench, [(w.category, str(w.message)) for w in caught]


def direction_warnings(caught) -> list[str]:
    return [m for c, m in caught if c is not LoadNote and ("chance" in m or "named like" in m)]


def elo_order(bench) -> list[str]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return bench.leaderboard(n_bootstrap=0).table["model"].tolist()


@pytest.fixture(scope="module")
def tabarena() -> pd.DataFrame:
    return pd.read_csv(FIXTURE)


# ---- TabArena's format -------------------------------------------------------------------
def test_fixture_is_ranked_right_with_no_options(tabarena):
    bench, caught = load(FIXTURE)
    notes = [m for c, m in caught if c is LoadNote]
    assert len(notes) == 1 and notes[0].startswith("recognised TabArena's per-split results")
    assert "'method'" in notes[0] and "'fold'" in notes[0] and "'metric_error'" in notes[0]
    assert direction_warnings(caught) == []
    assert bench.has_seeds and (bench.directions_ == "min").all()
    assert sorted(bench.models_) == sorted(ORDER)
    assert elo_order(bench) == ORDER
    assert {"time_train_s", "time_infer_s", "time_train_s_per_1K",
            "time_infer_s_per_1K"} <= set(bench.long_.columns)
    # the same as saying everything by hand
    by_hand, _ = load(tabarena, **AS_LONG, metric_direction={m: "min" for m in
                                                            tabarena["metric"].unique()})
    pd.testing.assert_frame_equal(bench.scores_, by_hand.scores_)
    same, _ = load(tabarena, format="tabarena")
    pd.testing.assert_frame_equal(bench.scores_, same.scores_)


def test_improvability_of_tabarena_errors_is_measured_from_zero(tabarena):
    bench, _ = load(FIXTURE)
    per = bench.improvability_ranking().per_dataset
    raw = tabarena.groupby(["method", "dataset"])["metric_error"].mean()
    expected = raw.to_numpy()
    got = per.set_index(["model", "dataset"]).loc[raw.index, "error"].to_numpy()
    np.testing.assert_allclose(got, expected)  # errors as given: 1 − AUC, log loss, RMSE


def test_the_issues_attempt_warns_twice_and_the_fix_is_silent(tabarena):
    bench, caught = load(tabarena, **AS_LONG)
    messages = direction_warnings(caught)
    assert len(messages) == 2
    named, chance = sorted(messages, key=lambda m: "chance" in m)
    assert "score column 'metric_error' is named like an error" in named
    assert "['roc_auc']" in named and "metric_direction={'roc_auc': 'min'}" in named
    assert "--direction roc_auc=min" in named
    assert "3 of 3 dataset(s) of metric 'roc_auc' score below its chance level 0.5" in chance
    assert elo_order(bench) != ORDER
    fixed, caught = load(tabarena, **AS_LONG, metric_direction={"ROC_AUC": "min"})
    assert direction_warnings(caught) == []
    notes = [m for c, m in caught if c is LoadNote]
    assert notes == ["metric_direction: read 'roc_auc' as lower-is-better, against the metric "
                     "registry; improvability measures such scores from 0 (TabArena's "
                     "metric_error convention)"]
    assert elo_order(fixed) == ORDER


def test_no_direction_warning_on_correct_data(tabarena):
    aucs = (tabarena[tabarena.metric == "roc_auc"].assign(score=lambda d: 1 - d.metric_error)
            .drop(columns=["metric_error"]))
    _, caught = load(aucs, model="method", seed="fold")
    assert direction_warnings(caught) == []
    # AUCs said to be errors: above the error form's chance level 0.5 on every dataset
    _, caught = load(aucs, model="method", seed="fold", metric_direction={"roc_auc": "min"})
    [message] = direction_warnings(caught)
    assert "score above its chance level 0.5" in message and "--direction roc_auc=max" in message


def test_dataset_key_wins_over_metric_key(tabarena):
    bench, caught = load(tabarena, **AS_LONG,
                         metric_direction={"roc_auc": "min", "credit-g": "max"})
    assert bench.directions_["credit-g"] == "max"
    assert bench.directions_["blood-transfusion"] == "min"
    assert bench.directions_["houses"] == "min"  # rmse: the registry's


@pytest.mark.parametrize("kwargs, error, match", [
    ({"format": "parquet"}, ValueError, r"format must be one of \('long', 'tabarena', "
                                        r"'runners'\) or None"),
    ({"format": "long"}, ValueError, r"column 'model' \(given as model=\) not found"),
    ({"metric_direction": {"auc": "min"}}, ValueError, r"metric_direction names \['auc'\], "
                                                      r"neither a dataset nor a metric"),
])
def test_format_mistakes(tabarena, kwargs, error, match):
    with pytest.raises(error, match=match):
        load(tabarena, **kwargs)


# ---- time columns ----------------------------------------------------------------------------
def timed_frame() -> pd.DataFrame:
    """Two methods, three datasets, two folds, with times and TabArena's row counts."""
    rows = []
    train = {"A": [[10, 14], [2, 2], [30, 50]], "B": [[1, 3], [1, 1], [4, 4]]}
    infer = {"A": [[1, 3], [0.5, 0.5], [2, 2]], "B": [[0.1, 0.3], [0.2, 0.2], [0.4, 0.8]]}
    n_train, n_test = [500, 2000, 4000], [100, 250, 1000]
    for method in ("A", "B"):
        for d in range(3):
            for fold in range(2):
                rows.append({"dataset": f"d{d}", "fold": fold, "method": method,
                             "metric_error": 0.2 if method == "A" else 0.3 + 0.01 * fold,
                             "metric": "log_loss", "problem_type": "multiclass",
                             "time_train_s": train[method][d][fold],
                             "time_infer_s": infer[method][d][fold],
                             "n_samples_train_per_fold": n_train[d],
                             "n_samples_test_per_fold": n_test[d]})
    return pd.DataFrame(rows)


def test_time_columns_against_hand_computation():
    bench, _ = load(timed_frame())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = bench.leaderboard(n_bootstrap=0).table.set_index("model")
    # A: fold means per dataset 12, 2, 40 s train; 2, 0.5, 2 s inference
    assert table.loc["A", "time_train_s"] == pytest.approx((12 + 2 + 40) / 3)
    assert table.loc["A", "median_time_train_s"] == pytest.approx(12)
    assert table.loc["A", "time_infer_s"] == pytest.approx(4.5 / 3)
    assert table.loc["A", "median_time_infer_s"] == pytest.approx(2)
    # per 1K rows, per row time × 1000 / rows: train 24, 1, 10; inference 20, 2, 2
    assert table.loc["A", "time_train_s_per_1K"] == pytest.approx(35 / 3)
    assert table.loc["A", "median_time_train_s_per_1K"] == pytest.approx(10)
    assert table.loc["A", "time_infer_s_per_1K"] == pytest.approx(8)
    assert table.loc["A", "median_time_infer_s_per_1K"] == pytest.approx(2)
    # B: inference per 1K 2, 0.8, 0.6 → mean 3.4 / 3, median 0.8
    assert table.loc["B", "time_infer_s_per_1K"] == pytest.approx(3.4 / 3)
    assert table.loc["B", "median_time_infer_s_per_1K"] == pytest.approx(0.8)
    assert tuple(table.reset_index().columns) == TABARENA_ORDER


def test_without_row_counts_only_seconds_and_without_times_no_columns():
    bare = timed_frame().drop(columns=["n_samples_train_per_fold", "n_samples_test_per_fold"])
    bench, _ = load(bare)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        columns = bench.leaderboard(n_bootstrap=0).table.columns
        assert "time_train_s" in columns and "time_train_s_per_1K" not in columns
        plain = load(bare.drop(columns=["time_train_s", "time_infer_s"]))[0]
        assert tuple(plain.leaderboard(n_bootstrap=0).table.columns) == COLUMNS


@pytest.mark.parametrize("column, value, match", [
    ("time_train_s", -1.0, r"column 'time_train_s' has the time -1.0 in row 3; times must be "
                           r"finite numbers >= 0"),
    ("time_infer_s", np.nan, r"column 'time_infer_s' has the time nan in row 3"),
    ("time_infer_s", "slow", r"column 'time_infer_s' holds times, but has the non-numeric value "
                             r"'slow' in row 3"),
    ("n_samples_test_per_fold", 0, r"column 'n_samples_test_per_fold' has the row count 0 in "
                                   r"row 3; per-1K times need row counts > 0"),
])
def test_bad_times_name_column_value_and_row(column, value, match):
    frame = timed_frame()
    frame[column] = frame[column].astype(object)
    frame.loc[3, column] = value
    with pytest.raises(ValueError, match=match):
        load(frame)


# ---- TabArena's task metadata: the rows of the per-1K columns ----------------------------
COUNTS = ["n_samples_train_per_fold", "n_samples_test_per_fold"]
META_ROWS = {"d0": (617, 71), "d1": (2903, 323), "d2": (48_842, 5_427)}
"""dataset → (train rows, test rows) per fold: odd counts, so the divisions are not exact."""


def tabarena_split_file() -> pd.DataFrame:
    """TabArena's per-split file as TabArena writes it: no row counts; odd times."""
    rng = np.random.default_rng(5)
    rows = []
    for method in ("A", "B", "C"):
        for dataset in META_ROWS:
            for fold in range(3):
                rows.append({"dataset": dataset, "fold": fold, "method": method,
                             "metric_error": float(rng.uniform(0.1, 0.4)),
                             "metric": "roc_auc", "problem_type": "binary",
                             "time_train_s": float(rng.uniform(0.01, 90)),
                             "time_infer_s": float(rng.uniform(0.001, 3))})
    return pd.DataFrame(rows)


def task_metadata() -> pd.DataFrame:
    """TabArena's task metadata layout: one row per dataset, ``name`` (and ``dataset`` = name,
    ``tid``) with the row counts among other columns, in another order than the results."""
    names = list(META_ROWS)[::-1]
    return pd.DataFrame({"tid": [363_600 + i for i in range(len(names))], "name": names,
                         "dataset": names, "problem_type": "binary", "n_features": 14,
                         "n_samples_train_per_fold": [META_ROWS[n][0] for n in names],
                         "n_samples_test_per_fold": [META_ROWS[n][1] for n in names],
                         "n_folds": 3})


def expected_per_1k(results: pd.DataFrame) -> dict[str, np.ndarray]:
    rows = {kind: results["dataset"].map({d: r[i] for d, r in META_ROWS.items()})
            for i, kind in enumerate(("train", "infer"))}
    return {f"time_{k}_s_per_1K": (results[f"time_{k}_s"] * 1000 / rows[k]).to_numpy()
            for k in ("train", "infer")}


def test_task_metadata_supplies_the_rows_exactly_through_load_csv(tmp_path):
    tabarena_split_file().to_csv(tmp_path / "results.csv", index=False)
    results = pd.read_csv(tmp_path / "results.csv")  # the times as load_csv reads them
    task_metadata().to_csv(tmp_path / "task_metadata.csv", index=False)
    bare, _ = load(tmp_path / "results.csv")
    assert "time_train_s_per_1K" not in bare.long_.columns  # the issue: no rows, no per-1K
    for meta in (tmp_path / "task_metadata.csv", str(tmp_path / "task_metadata.csv"),
                  task_metadata()):
        bench, _ = load(tmp_path / "results.csv", task_metadata=meta)
        long = bench.long_.loc[results.index]
        for column, expected in expected_per_1k(results).items():
            np.testing.assert_array_equal(long[column].to_numpy(), expected)  # bit-equal
        assert (long["time_train_s"].to_numpy() == results["time_train_s"].to_numpy()).all()
    # keyed by ``dataset`` where there is no ``name``; a dataset listed twice alike is fine
    meta = task_metadata().drop(columns="name")
    bench, _ = load(results, task_metadata=pd.concat([meta, meta.iloc[:1]]))
    np.testing.assert_array_equal(bench.long_.loc[results.index, "time_infer_s_per_1K"],
                                  expected_per_1k(results)["time_infer_s_per_1K"])


def test_task_metadata_through_the_leaderboard_command(tmp_path, capsys):
    from arenalite.cli import main

    tabarena_split_file().to_csv(tmp_path / "results.csv", index=False)
    results = pd.read_csv(tmp_path / "results.csv")  # the times as the command reads them
    task_metadata().to_csv(tmp_path / "meta.csv", index=False)
    out = tmp_path / "out"
    assert main(["leaderboard", str(tmp_path / "results.csv"), "--task-metadata",
                 str(tmp_path / "meta.csv"), "--n-bootstrap", "0", "-o", str(out)]) == 0
    capsys.readouterr()
    table = pd.read_csv(out / "leaderboard.csv", float_precision="round_trip").set_index("model")
    per_row = results.assign(**expected_per_1k(results))
    # per model and dataset the mean over folds, then the mean (and median) over datasets
    folds = per_row.groupby(["method", "dataset"])[["time_train_s_per_1K",
                                                    "time_infer_s_per_1K"]].mean()
    for column in ("time_train_s_per_1K", "time_infer_s_per_1K"):
        by_model = folds[column].groupby(level="method")
        np.testing.assert_array_equal(table[column].loc[["A", "B", "C"]], by_model.mean())
        np.testing.assert_array_equal(table[f"median_{column}"].loc[["A", "B", "C"]],
                                      by_model.median())
    # and the per-1K columns equal time × 1000 / rows on every row of that run's long table
    bench, _ = load(tmp_path / "results.csv", task_metadata=tmp_path / "meta.csv")
    long = bench.long_.loc[results.index]
    for column, expected in expected_per_1k(results).items():
        np.testing.assert_array_equal(long[column].to_numpy(), expected)


def test_task_metadata_flag_and_its_help(tmp_path, capsys):
    from arenalite.cli import build_parser, main

    text = " ".join(build_parser()._subparsers._group_actions[0].choices["leaderboard"]
                    .format_help().split())
    assert "--task-metadata FILE" in text
    assert ("one row per split as the tabarena package ships it (joined by tabarena_task_name; "
            "a task's rows are the mean over its splits of num_instances_train / "
            "num_instances_test)") in text
    assert "they are the rows of time_train_s_per_1K and time_infer_s_per_1K" in text
    results = tabarena_split_file()
    results.to_csv(tmp_path / "results.csv", index=False)
    task_metadata().iloc[1:].to_csv(tmp_path / "meta.csv", index=False)
    for meta, message in ((tmp_path / "meta.csv",
                           "--task-metadata has no row for dataset(s) 'd2' of the results"),
                          (tmp_path / "none.csv",
                           f"task metadata file {str(tmp_path / 'none.csv')!r} (--task-metadata) "
                           "not found")):
        code = main(["leaderboard", str(tmp_path / "results.csv"), "--task-metadata", str(meta),
                     "--n-bootstrap", "0", "-o", str(tmp_path / "out")])
        err = capsys.readouterr().err
        assert code == 2 and "Traceback" not in err
        assert message in err, err


def _meta_edit(edit):
    meta = task_metadata()
    return edit(meta) if callable(edit) else edit


@pytest.mark.parametrize("edit, error, match", [
    (lambda m: m.iloc[1:], ValueError,
     r"task_metadata has no row for dataset\(s\) 'd2' of the results \(column 'dataset'\); "
     r"its column 'name' lists \['d0', 'd1'\]"),
    (lambda m: m.drop(columns="n_samples_test_per_fold"), ValueError,
     r"task_metadata has neither layout of TabArena's task metadata: as one row per dataset "
     r"it lacks the column\(s\) 'n_samples_test_per_fold'; as one row per split .* its "
     r"columns are \['tid', "),
    (lambda m: m.drop(columns=["name", "dataset"]), ValueError,
     r"as one row per dataset it lacks the column\(s\) 'name' \(or 'dataset'\); "),
    (lambda m: pd.concat([m, m.iloc[[2]].assign(n_samples_train_per_fold=600)],
                         ignore_index=True), ValueError,
     r"task_metadata lists dataset 'd0' \(column 'name'\) more than once with different "
     r"'n_samples_train_per_fold': 617 \(row 2\), 600 \(row 3\); one count per dataset"),
    (lambda m: m.assign(n_samples_test_per_fold=[71, 0, 5427]), ValueError,
     r"task_metadata column 'n_samples_test_per_fold' has the row count 0 in row 1 \(dataset "
     r"'d1'\); per-1K times need row counts > 0"),
    (lambda m: m.assign(n_samples_train_per_fold=[-2.0, 2903, 617]), ValueError,
     r"task_metadata column 'n_samples_train_per_fold' has the row count -2.0 in row 0 "
     r"\(dataset 'd2'\)"),
    (lambda m: m.assign(n_samples_train_per_fold=["many", 2903, 617]), ValueError,
     r"task_metadata column 'n_samples_train_per_fold' holds row counts, but has the "
     r"non-numeric value 'many' in row 0"),
    ([("d0", 617, 71)], TypeError,
     r"task_metadata must be a path to a CSV file or a pandas DataFrame, got list"),
])
def test_task_metadata_mistakes_name_the_culprit(edit, error, match):
    with pytest.raises(error, match=match):
        load(tabarena_split_file(), task_metadata=_meta_edit(edit))


def test_task_metadata_against_the_results_own_counts():
    results = tabarena_split_file()
    results["n_samples_train_per_fold"] = results["dataset"].map(
        {d: r[0] for d, r in META_ROWS.items()})
    bench, _ = load(results, task_metadata=task_metadata())  # agreeing counts are fine
    assert "time_train_s_per_1K" in bench.long_.columns
    results.loc[4, "n_samples_train_per_fold"] = 618
    with pytest.raises(ValueError, match=r"column 'n_samples_train_per_fold' of the results has "
                                         r"618 in row 4 \(dataset 'd1'\), but task_metadata "
                                         r"says 2903 in its row 1; drop one of them"):
        load(results, task_metadata=task_metadata())


# ---- the runners' table ------------------------------------------------------------------
def runners_frame() -> pd.DataFrame:
    """The runners' columns: two models on two runners, two datasets, two seeds."""
    rows = []
    for runner, speed in (("python", 1.0), ("webgpu", 0.25)):
        for model, auc, ms in (("knn", 0.90, 8.0), ("icl", 0.95, 40.0)):
            for d, n_test in (("d0", 100), ("d1", 400)):
                for seed in (0, 1):
                    rows.append({"model": model, "dataset": d, "task": "binary",
                                 "metric": "roc_auc", "score": auc + 0.01 * seed,
                                 "error": 1 - auc, "seed": seed, "n_train": 3 * n_test,
                                 "n_test": n_test, "runner": runner, "device": "x",
                                 "total_ms": ms * speed * n_test / 100})
    return pd.DataFrame(rows)


def test_runners_table_two_runners_side_by_side():
    bench, caught = load(runners_frame(), norm_ref_low=0.5, norm_ref_high=1.0)
    [note] = [m for c, m in caught if c is LoadNote]
    assert note.startswith("recognised the runners' results table: seeds from 'seed'")
    assert "'<model> @ <runner>'" in note
    assert bench.models_ == ["icl @ python", "icl @ webgpu", "knn @ python", "knn @ webgpu"]
    assert bench.variants_.loc["knn @ webgpu"].tolist() == ["knn", "webgpu"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lb = bench.leaderboard(n_bootstrap=0)
    table = lb.table.set_index("model")
    # total_ms / 1000 is the inference time; per 1K rows total_ms / n_test: 0.08 s for knn
    assert table.loc["knn @ python", "time_infer_s_per_1K"] == pytest.approx(0.08)
    assert table.loc["knn @ webgpu", "median_time_infer_s_per_1K"] == pytest.approx(0.02)
    assert table.loc["icl @ python", "time_infer_s"] == pytest.approx((0.04 + 0.16) / 2)
    assert "time_train_s" not in table.columns  # in-context models: no training time
    fig = lb.plot_pareto()
    ax = fig.axes[0]
    dots = [line for line in ax.lines if line.get_linestyle() == ":"]
    assert len(dots) == 2  # each model's two runners joined
    assert {t.get_text() for t in ax.get_legend().get_texts()} >= {"runner: python",
                                                                   "runner: webgpu"}


def test_one_runner_keeps_the_names(tmp_path):
    one = runners_frame().query("runner == 'python'")
    bench, _ = load(one, norm_ref_low=0.5, norm_ref_high=1.0)
    assert bench.models_ == ["icl", "knn"] and bench.variants_ is None


# ---- TabArena's CSV and the Pareto figure -------------------------------------------------
def test_to_csv_tabarena_style(tmp_path):
    bench, _ = load(FIXTURE)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lb = bench.leaderboard(n_bootstrap=20, random_state=0)
    lb.to_csv(tmp_path / "t.csv", style="tabarena")
    lb.to_csv(tmp_path / "a.csv")
    written = pd.read_csv(tmp_path / "t.csv")
    assert list(written.columns) == ["method", *TABARENA_ORDER[1:]]
    ours = pd.read_csv(tmp_path / "a.csv")
    assert list(ours.columns) == list(lb.table.columns)
    np.testing.assert_allclose(written.iloc[:, 1:].to_numpy(), ours.iloc[:, 1:].to_numpy())
    assert written["improvability"].between(0, 1).all()  # TabArena's unit: a fraction
    with pytest.raises(ValueError, match=r"style must be one of \('arenalite', 'tabarena'\)"):
        lb.to_csv(tmp_path / "x.csv", style="evaluma")


def test_plot_pareto_draws_elo_against_inference_time(tmp_path):
    bench, _ = load(FIXTURE)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lb = bench.leaderboard(n_bootstrap=50, random_state=0)
    fig = lb.plot_pareto()
    assert isinstance(fig, Figure)
    ax = fig.axes[0]
    assert ax.get_xscale() == "log"
    assert "inference time per 1K rows" in ax.get_xlabel() and "Elo" in ax.get_ylabel()
    table = lb.table
    front = pareto_front(table["elo"].to_numpy(), table["median_time_infer_s_per_1K"].to_numpy())
    assert table["model"][front].tolist() == ["GBM-tuned", "GBM-default", "Linear"]
    bold = {t.get_text() for t in ax.texts if t.get_fontweight() == "bold"}
    assert bold == {"GBM-tuned", "GBM-default", "Linear"}
    [line] = [ln for ln in ax.lines if ln.get_label().startswith("Pareto front")]
    assert list(line.get_xdata()) == sorted(line.get_xdata()) and len(line.get_xdata()) == 3
    fig.savefig(tmp_path / "pareto.png")
    assert "95 % interval" in ax.get_ylabel()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        narrow = bench.leaderboard(n_bootstrap=50, random_state=0, confidence=0.8)
    assert "80 % interval" in narrow.plot_pareto().axes[0].get_ylabel()
    plain = load(pd.read_csv(FIXTURE).drop(columns=["time_infer_s", "time_train_s"]))[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        no_times = plain.leaderboard(n_bootstrap=0)
    with pytest.raises(ValueError, match="plot_pareto needs an inference-time column"):
        no_times.plot_pareto()


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 6), st.integers(1, 6)), min_size=1, max_size=12))
def test_pareto_front_is_exactly_the_undominated(points):
    elo = np.array([p[0] for p in points], dtype=float)
    seconds = np.array([p[1] for p in points], dtype=float)
    front = pareto_front(elo, seconds)
    for i in range(len(points)):
        dominated = any(seconds[j] <= seconds[i] and elo[j] >= elo[i]
                        and (seconds[j] < seconds[i] or elo[j] > elo[i])
                        for j in range(len(points)))
        assert front[i] == (not dominated)
    assert front.any()


def test_models_already_named_by_runner_keep_their_names():
    frame = runners_frame()
    named = frame.assign(model=frame["model"] + " @ " + frame["runner"])
    bench, _ = load(named, norm_ref_low=0.5, norm_ref_high=1.0)
    assert bench.models_ == ["icl @ python", "icl @ webgpu", "knn @ python", "knn @ webgpu"]
    assert bench.variants_["base"].tolist() == ["icl", "icl", "knn", "knn"]


def test_close_labels_take_different_spots():
    from arenalite.plots.pareto import LABEL_SPOTS, label_offsets

    spots = label_offsets(np.array([0.0, 0.01, 1.0]), np.array([100.0, 101.0, 500.0]))
    assert spots[0] == LABEL_SPOTS[0] and spots[1] != spots[0] and spots[2] == LABEL_SPOTS[0]
