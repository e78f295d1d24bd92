"""Python runner: results-table contract, load_df round trip, summaries, executors."""

from __future__ import annotations

from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import arenalite
import arenalite.datasets as D
from arenalite import progress
from arenalite.runner import (
    BASE_COLUMNS,
    COLUMNS,
    GPU_COLUMNS,
    LAYER_COLUMNS,
    TIE_TOLERANCE,
    merge_near_ties,
    run,
    summarize,
    task_metric,
)
from arenalite.splits import make_splits

MODELS = [{"name": "knn", "k": 5}, {"name": "attention"}, {"name": "icl_transformer"}]
TIMING = ["embed_ms", "layers_ms", "head_ms", "total_ms", "rows_per_s"]


def subset(name: str, n: int) -> D.Dataset:
    ds = D.load(name)
    rows = np.linspace(0, ds.n_rows - 1, n).astype(int)
    return D.Dataset(name, ds.X[rows], ds.y[rows], ds.task, ds.n_classes, ds.feature_names)


@pytest.fixture(scope="module")
def small():
    data = {"breast_cancer": subset("breast_cancer", 90), "iris": subset("iris", 60),
            "diabetes": subset("diabetes", 60)}
    splits = {name: make_splits(ds.n_rows, ds.task,
                                y=None if ds.task == "regression" else ds.y,
                                dataset=name, n_repeats=1) for name, ds in data.items()}
    return data, splits


@pytest.fixture(scope="module")
def serial(small):
    return run(*small, MODELS, progress=False)


def test_results_table(serial, small):
    data, splits = small
    assert list(serial.columns) == COLUMNS
    assert len(serial) == 3 * 3 * 3
    assert list(pd.unique(serial["dataset"])) == list(data)
    assert set(serial["model"]) == {"knn", "attention", "icl_transformer"}
    by_task = serial.groupby("task")["metric"].unique().map(list).to_dict()
    assert by_task == {"binary": ["roc_auc"], "multiclass": ["log_loss"],
                       "regression": ["rmse"]}
    binary = serial[serial["task"] == "binary"]
    assert np.allclose(binary["error"], 1 - binary["score"])
    other = serial[serial["task"] != "binary"]
    assert np.array_equal(other["error"], other["score"])
    assert (serial["seed"] == serial["repeat"] * 3 + serial["fold"]).all()
    assert (serial["n_train"] + serial["n_test"]).groupby(serial["dataset"]).unique().map(
        list).to_dict() == {n: [ds.n_rows] for n, ds in data.items()}
    assert (serial["runner"] == "python").all()
    assert (serial[TIMING] > 0).to_numpy().all()
    assert COLUMNS == BASE_COLUMNS + GPU_COLUMNS + LAYER_COLUMNS  # new columns at the end only
    assert serial[GPU_COLUMNS + ["gpu_layer_times_ms"]].isna().all().all()  # no GPU timestamps
    per_layer = serial["layer_times_ms"].astype(str).map(lambda f: sum(map(float, f.split(";"))))
    np.testing.assert_allclose(per_layer, serial["layers_ms"], rtol=1e-5, atol=1e-5)
    assert np.allclose(serial["rows_per_s"], serial["n_test"] / (serial["total_ms"] / 1e3))


def test_load_df_ranks_the_models(serial):
    bench = arenalite.load_df(serial, metric="metric", score="score", seed="seed",
                              norm_ref_low=0.0, norm_ref_high={"breast_cancer": 1.0,
                                                               "iris": 2.0, "diabetes": 100.0})
    assert sorted(bench.models_) == ["attention", "icl_transformer", "knn"]
    assert bench.directions_.to_dict() == {"breast_cancer": "max", "diabetes": "min",
                                           "iris": "min"}
    ranking = bench.aggregate_ranking(agg="mean").table
    assert list(ranking.columns) == ["model", "score"] and len(ranking) == 3
    # The error column is lower-is-better everywhere; say so with metric_direction.
    errors = arenalite.load_df(serial, metric="metric", score="error", seed="seed",
                               metric_direction=dict.fromkeys(pd.unique(serial["dataset"]),
                                                              "min"),
                               norm_ref_low=0.0, norm_ref_high={"breast_cancer": 1.0,
                                                                "iris": 2.0,
                                                                "diabetes": 100.0})
    flipped = errors.aggregate_ranking(agg="mean").table
    assert list(flipped["model"]) == list(ranking["model"])


def test_summarize(serial):
    table = summarize(serial)
    assert list(table.columns) == ["dataset", "model", "task", "metric", "n_folds", "score",
                                   "score_se", "error", "error_se", "rows_per_s"]
    row = table[(table["dataset"] == "iris") & (table["model"] == "knn")].iloc[0]
    folds = serial[(serial["dataset"] == "iris") & (serial["model"] == "knn")]["score"]
    assert row["n_folds"] == 3
    assert np.isclose(row["score"], folds.mean())
    assert np.isclose(row["score_se"], np.sqrt(folds.var(ddof=1) / 3))


@pytest.mark.needs_processes
@pytest.mark.needs_dask
def test_process_pool_and_dask_give_identical_scores(serial, small):
    import distributed
    with ProcessPoolExecutor(max_workers=2) as pool:
        pooled = run(*small, MODELS, executor=pool, progress=False)
    with distributed.Client(processes=False, n_workers=1, threads_per_worker=2,
                            dashboard_address=None) as client:
        dasked = run(*small, MODELS, executor=client.get_executor(), progress=False)
    for other in (pooled, dasked):
        timing = TIMING + ["layer_times_ms"]
        pd.testing.assert_frame_equal(other.drop(columns=timing), serial.drop(columns=timing))


def test_progress_bar_on_a_terminal_only(small, capsys, monkeypatch):
    data, splits = small
    iris = ({"iris": data["iris"]}, {"iris": splits["iris"]}, MODELS[:1])
    run(*iris, progress=True)
    assert capsys.readouterr().err == ""  # captured stderr is no terminal: no bar
    monkeypatch.setattr(progress, "_is_terminal", lambda stream: True)
    run(*iris, progress=True)
    assert "run [" in capsys.readouterr().err


def test_bundled_names_are_accepted():
    ds = D.load("iris")
    out = run(["iris"], {"iris": make_splits(ds.n_rows, ds.task, y=ds.y, n_repeats=1)},
              [{"name": "knn", "k": 1}, {"name": "knn", "k": 9}], progress=False)
    assert list(pd.unique(out["model"])) == ["knn(k=1)", "knn(k=9)"]


def test_bad_input(small):
    data, splits = small
    iris = {"iris": data["iris"]}
    with pytest.raises(ValueError, match=r"missing \['iris'\]"):
        run(iris, {}, MODELS)
    with pytest.raises(ValueError, match="has n_rows=90 but dataset 'iris' has 60 rows"):
        run(iris, {"iris": {**splits["breast_cancer"], "dataset": "iris",
                            "task": "multiclass"}}, MODELS)
    with pytest.raises(ValueError, match="is for dataset 'wine'"):
        run(iris, {"iris": {**splits["iris"], "dataset": "wine"}}, MODELS)
    with pytest.raises(ValueError, match=r"duplicate labels \['knn'\]"):
        run(iris, {"iris": splits["iris"]}, [{"name": "knn"}, {"name": "knn"}])
    with pytest.raises(TypeError, match="models must be a non-empty list"):
        run(iris, {"iris": splits["iris"]}, {"name": "knn"})
    with pytest.raises(TypeError, match=r"datasets\['iris'\] must be an arenalite"):
        run({"iris": "iris"}, {"iris": splits["iris"]}, MODELS)
    with pytest.raises(ValueError, match="excludes columns"):
        run(iris, {"iris": {**splits["iris"], "excluded_columns": ["colour"]}}, MODELS)
    with pytest.raises(ValueError, match="single fold"):
        summarize(run(iris, {"iris": splits["iris"]}, MODELS[:1], progress=False).iloc[:1])


def test_excluded_leakage_columns_are_dropped_from_the_features(small):
    """A leaked label column scores like the data without it once the split excludes it."""
    data, splits = small
    ds = data["iris"]
    leaky = D.Dataset("iris", np.column_stack([ds.X, ds.y.astype(float)]), ds.y, ds.task,
                      ds.n_classes, (*ds.feature_names, "leak"))
    model = [{"name": "knn", "k": 5}]
    clean = run({"iris": ds}, {"iris": splits["iris"]}, model, progress=False)
    excluded = run({"iris": leaky}, {"iris": {**splits["iris"], "excluded_columns": ["leak"]}},
                   model, progress=False)
    leaked = run({"iris": leaky}, {"iris": splits["iris"]}, model, progress=False)
    np.testing.assert_array_equal(excluded["score"], clean["score"])
    assert (excluded[["n_train", "n_test"]] == clean[["n_train", "n_test"]]).all().all()
    assert not np.array_equal(leaked["score"], clean["score"])


def test_old_results_csv_without_gpu_columns_still_loads(tmp_path):
    """A table written before the gpu_* columns (the shipped page example) loads and
    summarizes; a new table round-trips its empty GPU fields as NaN."""
    old = Path(__file__).resolve().parents[1] / "content" / "webgpu_results_example.csv"
    table = pd.read_csv(old)
    assert list(table.columns) == BASE_COLUMNS
    assert len(summarize(table)) == table.groupby(["dataset", "model"]).ngroups
    bench = arenalite.load_csv(old, seed="seed")
    assert set(bench.models_) == set(table["model"])
    new = tmp_path / "new.csv"
    run(["iris"], {"iris": make_splits(150, "multiclass", y=D.load("iris").y, dataset="iris",
                                       n_repeats=1)}, [{"name": "knn"}, {"name": "attention"}],
        progress=False).to_csv(new, index=False)
    back = pd.read_csv(new)
    assert list(back.columns) == COLUMNS and back[GPU_COLUMNS].isna().all().all()
    assert back["layer_times_ms"].notna().all()
    assert len(arenalite.load_csv(new, seed="seed").models_) == 2


def test_merge_near_ties_makes_float32_near_ties_exact_ties():
    rng = np.random.default_rng(3)
    exact = np.repeat(rng.uniform(0.05, 0.95, 12), 8)       # tie-heavy: 12 values × 8
    y = rng.integers(0, 2, exact.size)
    y[:2] = [0, 1]
    noisy = exact.astype(np.float32).astype(np.float64) + rng.uniform(-5e-7, 5e-7, exact.size)
    assert arenalite.metrics.roc_auc(y, exact) != arenalite.metrics.roc_auc(y, noisy)
    both = [task_metric("binary", y, np.c_[1 - p, p])[0] for p in (exact, noisy)]
    assert both[0] == both[1] == arenalite.metrics.roc_auc(y, exact)
    merged = merge_near_ties(np.array([0.5, 0.2, 0.5 + 4e-6, 0.5 + 8e-6, 0.51]))
    assert merged.tolist() == [0.5, 0.2, 0.5, 0.5, 0.51]
    assert merge_near_ties(np.array([0.3, 0.3 + 2 * TIE_TOLERANCE])).tolist() == [
        0.3, 0.3 + 2 * TIE_TOLERANCE]
