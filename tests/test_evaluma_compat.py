"""A notebook written for the evaluma tutorials runs after ``import arenalite as evaluma``.

The calls below reproduce the evaluma tutorials (docs/tutorials/iqm_ranking.md,
elo_ranking.md, rank_sensitivity.md of the evaluma repository): same function,
argument, attribute and column names, and the numbers the tutorial text states.
The GeoBench sections need the tutorial's CSV, which is not shipped, so they are
not reproduced here.
"""

from __future__ import annotations

import importlib.util
import inspect

import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure

import arenalite as evaluma

warnings_off = pytest.mark.filterwarnings("ignore::UserWarning")


def _has(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def test_load_signature_matches_evaluma():
    names = list(inspect.signature(evaluma.load_df).parameters)
    assert names == ["df", "model", "dataset", "metric", "score", "seed", "metric_type_bounds",
                     "norm_ref_low", "norm_ref_high", "metric_direction", "drop_incomplete",
                     "condition_col"]
    assert callable(evaluma.load_csv)


@pytest.mark.parametrize("method, params", [
    ("aggregate_ranking", ["agg"]),
    ("iqm_ranking", ["n_bootstrap", "random_state"]),
    ("elo_ranking", ["n_bootstrap", "random_state", "tie_threshold", "calibration_model"]),
    ("bayesian_comparison", ["rope", "reference", "pairs", "random_state"]),
    ("frequentist_comparison", ["reference", "alpha"]),
    ("performance_profiles", []),
    ("improvability_ranking", None),
    ("select_models", None), ("select_datasets", None), ("drop_models", None),
    ("drop_datasets", None), ("drop_incomplete", None),
])
def test_benchmark_method_names(method, params):
    fn = getattr(evaluma.Benchmark, method)
    if params is not None:
        assert list(inspect.signature(fn).parameters)[1:len(params) + 1] == params


def test_iqm_tutorial_toy_normalization():
    df_toy = pd.DataFrame({
        "model": ["Model-1"] * 3 + ["Model-2"] * 3 + ["Model-3"] * 3,
        "dataset": ["Dataset-A", "Dataset-B", "Dataset-C"] * 3,
        "metric": ["accuracy", "f1", "rmse"] * 3,
        "score": [0.72, 0.65, 12.0, 0.84, 0.58, 45.0, 0.61, 0.79, 28.0],
    })
    bench_toy = evaluma.load_df(
        df_toy,
        model="model", dataset="dataset", metric="metric", score="score",
        norm_ref_low={"Dataset-A": 0.0, "Dataset-B": 0.0, "Dataset-C": 0.0},
        norm_ref_high={"Dataset-A": 1.0, "Dataset-B": 1.0, "Dataset-C": 100.0},
        metric_direction={"Dataset-C": "min"},
    )
    assert bench_toy.scores_.round(3).loc["Model-1", "Dataset-C"] == 0.88
    norm_means = bench_toy.aggregate_ranking(agg="mean").table.rename(
        columns={"score": "normalized mean"})
    assert norm_means.loc[0, "model"] == "Model-1"
    assert norm_means.loc[0, "normalized mean"].round(3) == 0.75


def five_model_scores() -> tuple[list[str], dict[str, np.ndarray]]:
    rng = np.random.RandomState(42)
    datasets = [f"D{i:02d}" for i in range(1, 9)]
    scores_dict = {
        "Model-A": np.concatenate([rng.uniform(0.93, 0.97, 3), rng.uniform(0.40, 0.44, 5)]),
        "Model-B": np.concatenate([rng.uniform(0.13, 0.17, 3), rng.uniform(0.80, 0.84, 5)]),
        "Model-C": rng.uniform(0.70, 0.74, 8),
        "Model-D": rng.uniform(0.58, 0.62, 8),
    }
    scores_dict["Model-E"] = np.clip(scores_dict["Model-D"] + rng.normal(0, 0.01, 8), 0.0, 1.0)
    return datasets, scores_dict


def test_iqm_tutorial_mean_trimmed_median():
    datasets, scores_dict = five_model_scores()
    rows = [{"model": m, "dataset": d, "metric": "acc", "score": float(s)}
            for m, sc in scores_dict.items() for d, s in zip(datasets, sc, strict=True)]
    bench = evaluma.load_df(pd.DataFrame(rows), model="model", dataset="dataset",
                            metric="metric", score="score", norm_ref_low=0.0, norm_ref_high=1.0)
    assert bench.scores_.shape == (5, 8)
    mean = bench.aggregate_ranking(agg="mean").table["model"].tolist()
    trimmed = bench.aggregate_ranking(agg="trimmed_mean").table["model"].tolist()
    median = bench.aggregate_ranking(agg="median").table["model"].tolist()
    # the tutorial: A 2nd by mean but last by trimmed mean; B last by mean, 2nd by trimmed
    # mean, 1st by median; C first by mean and trimmed mean
    assert mean[:2] == ["Model-C", "Model-A"] and mean[-1] == "Model-B"
    assert trimmed[:2] == ["Model-C", "Model-B"] and trimmed[-1] == "Model-A"
    assert median[0] == "Model-B"
    table = bench.aggregate_ranking(agg="trimmed_mean").table
    assert list(table[["model", "score"]].columns) == ["model", "score"]


def test_iqm_tutorial_seeded_bootstrap():
    datasets, scores_dict = five_model_scores()
    outlier = {"D01", "D02", "D03"}
    sigma = {"Model-A": (0.04, 0.02), "Model-B": (0.11, 0.02), "Model-C": (0.01, 0.01),
             "Model-D": (0.02, 0.02), "Model-E": (0.02, 0.02)}
    rng2 = np.random.RandomState(99)
    rows = []
    for m, sc in scores_dict.items():
        for d, base in zip(datasets, sc, strict=True):
            s = sigma[m][0] if d in outlier else sigma[m][1]
            for seed_id in [1, 2, 3]:
                rows.append({"model": m, "dataset": d, "metric": "acc",
                             "score": float(np.clip(base + rng2.normal(0, s), 0.0, 1.0)),
                             "seed": seed_id})
    bench_runs = evaluma.load_df(pd.DataFrame(rows), model="model", dataset="dataset",
                                 metric="metric", score="score", seed="seed",
                                 norm_ref_low=0.0, norm_ref_high=1.0)
    assert bench_runs.scores_.shape == (5, 8)
    iqm_runs = bench_runs.iqm_ranking(random_state=42)
    assert list(iqm_runs.table.round(3).columns) == ["model", "IQM", "CI_low", "CI_high"]
    agg_pts = bench_runs.aggregate_ranking(agg="trimmed_mean").table.rename(
        columns={"score": "trimmed_mean"})
    merged = pd.merge(agg_pts, iqm_runs.table[["model", "IQM"]].copy(), on="model")
    assert np.allclose(merged["trimmed_mean"], merged["IQM"], atol=0.05)
    width = (iqm_runs.table["CI_high"] - iqm_runs.table["CI_low"]).set_axis(
        iqm_runs.table["model"])
    assert width.idxmax() == "Model-B" and width.idxmin() == "Model-C"
    palette = {"Model-A": "#2563EB", "Model-B": "#16A34A", "Model-C": "#D97706",
               "Model-D": "#DC2626", "Model-E": "#7C3AED"}
    fig = iqm_runs.plot(figsize=(6, 3.5),
                        model_colors=[palette[m] for m in iqm_runs.table["model"].tolist()],
                        title="IQM scores with 95% stratified-bootstrap CIs")
    assert isinstance(fig, Figure)


def solver_frame() -> pd.DataFrame:
    rng = np.random.RandomState(42)
    datasets = [f"D{i:02d}" for i in range(1, 7)]
    adam = {"Model-A": 0.88, "Model-B": 0.74, "Model-C": 0.61, "Model-D": 0.47}
    sgd = {"Model-A": 0.87, "Model-B": 0.45, "Model-C": 0.60, "Model-D": 0.73}
    rows = []
    for solver, means in [("Adam", adam), ("SGD", sgd)]:
        for model, mu in means.items():
            for d, s in zip(datasets, np.clip(rng.normal(mu, 0.08, 6), 0.0, 1.0), strict=True):
                rows.append({"model": model, "dataset": d, "metric": "acc",
                             "score": round(float(s), 4), "solver": solver})
    return pd.DataFrame(rows)


def test_rank_sensitivity_tutorial_loading():
    bench = evaluma.load_df(solver_frame(), model="model", dataset="dataset", metric="metric",
                            score="score", norm_ref_low=0.0, norm_ref_high=1.0,
                            condition_col="solver")
    assert type(bench).__name__ == "BenchmarkGroup"
    assert bench["Adam"].scores_.round(3).shape == (4, 6)
    assert isinstance(bench.drop_models(["Model-C"]), evaluma.BenchmarkGroup)
    assert isinstance(bench.drop_datasets(["D01"]), evaluma.BenchmarkGroup)
    if not _has("arenalite.stats.sensitivity"):
        pytest.skip("rank_sensitivity not implemented yet")
    result = bench.rank_sensitivity("Adam", "SGD", random_state=42)
    assert result.tau == pytest.approx(0.0)
    assert len(result.tau_ci) == 2 and np.isfinite(result.rho)


@warnings_off
def test_elo_tutorial_calls():
    if not _has("arenalite.rankings.elo"):
        pytest.skip("elo_ranking not implemented yet")
    rng = np.random.RandomState(42)
    datasets = [f"D{i:02d}" for i in range(1, 8)]
    scores_dict = {
        "Model-A": np.concatenate([rng.uniform(0.96, 0.98, 2), rng.uniform(0.49, 0.51, 5)]),
        "Model-B": np.concatenate([rng.uniform(0.07, 0.09, 2), rng.uniform(0.71, 0.73, 5)]),
        "Model-C": np.concatenate([rng.uniform(0.05, 0.07, 2), rng.uniform(0.61, 0.63, 5)]),
        "Model-D": np.concatenate([rng.uniform(0.03, 0.05, 2), rng.uniform(0.51, 0.53, 5)]),
    }
    rows = [{"model": m, "dataset": d, "metric": "acc", "score": float(s)}
            for m, sc in scores_dict.items() for d, s in zip(datasets, sc, strict=True)]
    bench = evaluma.load_df(pd.DataFrame(rows), model="model", dataset="dataset",
                            metric="metric", score="score", norm_ref_low=0.0, norm_ref_high=1.0)
    mean = bench.aggregate_ranking(agg="mean").table.round(3)
    assert mean["score"].tolist()[:2] == [0.633, 0.539]
    result = bench.elo_ranking(n_bootstrap=1000, random_state=42)
    assert isinstance(result.plot_winrate(figsize=(5, 4), title="Win-rate matrix"), Figure)
    assert isinstance(result.plot(figsize=(6, 3.5), title="ELO"), Figure)
    table = result.table.round(1)
    assert list(table.columns) == ["model", "ELO", "CI_low", "CI_high"]
    assert table["model"].tolist() == ["Model-B", "Model-C", "Model-A", "Model-D"]
    assert bench.elo_ranking(tie_threshold=0.05, random_state=42).table["model"].tolist() == \
        table["model"].tolist()
    calibrated = bench.elo_ranking(calibration_model="Model-B", random_state=42).table
    assert calibrated.set_index("model").loc["Model-B", "ELO"] == pytest.approx(1000.0)
