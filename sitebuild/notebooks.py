"""The site's notebooks (``content/*.ipynb``), from their one source: this module.

The notebooks are generated, and committed as generated: edit a notebook's cells here and
run ``python scripts/make_notebooks.py``; ``tests/test_notebooks.py`` fails while a
committed notebook differs from what :data:`NOTEBOOKS` makes (or one is missing or stray;
``python scripts/make_notebooks.py --check`` says the same). Why this side is the source:
every notebook shares one install cell (and most the same loading cell), written once
here, and the notebooks carry no outputs, so nothing is lost by regenerating them.

Every notebook starts with the same install cell: in the JupyterLite kernel
(``sys.platform == "emscripten"``) it installs arenalite from the site's piplite index; in
CPython it does nothing (arenalite is installed there). Then ``browser.require_numeric()``
turns numeric packages that Pyodide could not fetch (a site built without them, opened
offline: ``piplite.install`` does not fail then) into one clear error that says from where
and how to fix it. Its top-level ``await`` is valid in IPython; tests/test_notebooks.py
compiles cells with ``ast.PyCF_ALLOW_TOP_LEVEL_AWAIT`` so that the same cell runs unchanged
in CPython.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from .settings import CONTENT

INSTALL = '''import sys

if sys.platform == "emscripten":  # in the browser (JupyterLite): the site's own wheel
    import piplite

    await piplite.install("arenalite")

from arenalite import browser

browser.require_numeric()  # a clear error if numpy, pandas, matplotlib or scipy did not load
import arenalite'''


def md(text: str) -> dict:
    return {"cell_type": "markdown", "metadata": {}, "source": text.strip("\n")}


def code(text: str) -> dict:
    return {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
            "source": text.strip("\n")}


def notebook(title: str, intro: str, cells: list[dict]) -> dict:
    body = [md(f"# {title}\n\n{intro.strip()}"), code(INSTALL), *cells]
    for i, cell in enumerate(body):
        cell["id"] = f"cell-{i}"
    return {"cells": body, "nbformat": 4, "nbformat_minor": 5,
            "metadata": {"kernelspec": {"name": "python", "display_name": "Python (Pyodide)",
                                        "language": "python"},
                         "language_info": {"name": "python"}}}


LOAD = '''bench = arenalite.load_csv("demo_results.csv", model="model", dataset="dataset",
                           metric="metric", score="score", seed="seed")
bench'''

NOTEBOOKS = {
    "01_quick_start": notebook(
        "Quick start: rankings of the bundled results",
        """
`demo_results.csv` holds real runs of six in-context model variants (kNN with k = 1, 5,
15, attention with two temperatures, a small transformer) on four bundled datasets, one
row per model × dataset × split. Each split is a *seed* (a match day for Elo). Scores are
ROC AUC (binary), log loss (multiclass) and RMSE (regression); arenalite knows each
metric's direction from its registry and normalizes every dataset to [0, 1], 1 = best.
Without explicit bounds it uses the observed per-dataset min and max and warns.
""",
        [
            code('''import pandas as pd

results = pd.read_csv("demo_results.csv")
results[["model", "dataset", "metric", "score", "seed", "total_ms"]].head()'''),
            code(LOAD),
            md("Normalized scores (seed means), model × dataset:"),
            code("bench.scores_.round(3)"),
            md("The aggregate ranking: trimmed mean (25 % cut at each end) over datasets."),
            code('''agg = bench.aggregate_ranking()
agg.table'''),
            code('''fig = agg.plot(title="Trimmed mean of normalized scores")
fig'''),
            md("""
IQM pools every per-seed score; the interval comes from a dataset bootstrap (whole datasets
redrawn with all their seeds; `resampling="seed"` gives the stratified seed bootstrap).
"""),
            code('''iqm = bench.iqm_ranking(n_bootstrap=200, random_state=0)
iqm.table'''),
        ]),
    "02_performance_profiles": notebook(
        "Performance profiles",
        """
A performance profile (Dolan & Moré 2002) shows, for each model, the share of datasets on
which it is within a factor τ of the best model. It works on the raw scores (all must be
positive), so no normalization choice enters. The area under the profile (AUP, log10 τ
axis) summarizes it, and `.stability()` checks whether dropping the best model reorders
the rest.
""",
        [
            code(LOAD),
            code('''profiles = bench.performance_profiles()
profiles.aup.sort_values(ascending=False)'''),
            code('''fig = profiles.plot(title="Performance profiles of the demo models")
fig'''),
            code("profiles.stability()"),
        ]),
    "03_three_rankings": notebook(
        "Three rankings compared: aggregate, Elo, improvability",
        """
Different ranking methods answer different questions: the trimmed mean of normalized
scores, Bradley-Terry Elo (who beats whom, dataset by dataset and seed by seed), and
TabArena's improvability (how far, in %, each model's error is from the best error on
each dataset). `compare_rankings()` puts the ranks side by side with their spread.
""",
        [
            code(LOAD),
            code('''elo = bench.elo_ranking(n_bootstrap=200, random_state=0)
elo.table'''),
            code('''fig = elo.plot(title="Bradley-Terry Elo with 95 % bootstrap intervals")
fig'''),
            md("The win-rate matrix: share of match days where the row model beats the column."),
            code("elo.winrate_matrix.round(2)"),
            code('''improv = bench.improvability_ranking()
improv.table'''),
            code('''comparison = bench.compare_rankings()
comparison.table'''),
            md("A rule of thumb for reading Elo gaps as win probabilities:"),
            code("arenalite.elo_rule_of_thumb()"),
        ]),
    "04_statistics_and_gate": notebook(
        "Statistics and the non-inferiority gate",
        """
Datasets, not folds, are the unit of replication (Demšar 2006): per-split scores are
averaged per dataset before testing. With only four datasets the tests have little
power — read "not significant" as "not shown", never as "equal".

The gate asks whether a candidate is *not worse* than a reference by more than a
margin: a one-sided Wilcoxon signed-rank test of H0: median(candidate − reference) ≤
−margin. Failing it is "inconclusive", not evidence of equivalence.
""",
        [
            code(LOAD),
            code('''freq = bench.frequentist_comparison()
print(f"Friedman statistic {freq.friedman_statistic:.3f}, p = {freq.friedman_p:.4f}; "
      f"critical difference {freq.cd:.3f}")
freq.table'''),
            code('''fig = freq.plot(title="Critical-difference diagram (Nemenyi)")
fig'''),
            code('''vs_knn5 = bench.frequentist_comparison(reference="knn-5")
vs_knn5.table'''),
            md("""
Is the transformer non-inferior to kNN (k = 5)? The gate pairs the two models' scores
dataset by dataset within each metric, with margins in the metric's raw units (ROC AUC
and log loss have defaults, 0.01 and 0.01 nats, which the dict below overrides; RMSE, in
the units of y, has none). With one or two datasets per metric no test can pass, and the
verdict is an honest "inconclusive" — more datasets are needed.
"""),
            code('''margins = {"roc_auc": 0.01, "log_loss": 0.02, "rmse": 1.0}
gate = bench.gate("icl-transformer", reference="knn-5", margin=margins)
gate.table'''),
        ]),
    "05_auroc_vs_auprc": notebook(
        "AUROC vs AUPRC under class imbalance",
        """
AUROC weighs every ranking mistake (a positive scored just below a negative) equally;
AUPRC rewards fixing high-score mistakes most and its chance level is the prevalence, so
it can favour the subgroup with the higher prevalence. `subgroup_report` shows both per
subgroup with the gaps; `mistake_gains` lists each adjacent mistake and how much each
metric would gain by fixing it. The data below are synthetic: one score model applied
to two subgroups with 30 % and 5 % prevalence.
""",
        [
            code('''import numpy as np

from arenalite.metrics import mistake_gains, subgroup_report

rng = np.random.default_rng(0)
n = 2000
group = np.where(rng.random(n) < 0.5, "A", "B")
prevalence = np.where(group == "A", 0.30, 0.05)
y = (rng.random(n) < prevalence).astype(int)
score = 1 / (1 + np.exp(-(1.5 * y + rng.normal(0, 1, n))))'''),
            code('''report = subgroup_report(y, score, group)
report.table'''),
            code("report.gaps"),
            code("print(report.guidance)"),
            code('''fig = report.plot(title="AUROC and AUPRC per subgroup")
fig'''),
            md("Each mistake's gain: constant for AUROC, growing with the score for AUPRC."),
            code('''gains = mistake_gains(y[:300], score[:300])
gains.table.head()'''),
            code('''fig = gains.plot(title="Gain from fixing each mistake")
fig'''),
        ]),
    "06_splits_and_webgpu": notebook(
        "Splits and WebGPU timing",
        """
`arenalite.splits` makes persisted splits once (positional row indices in versioned
JSON); the Python runner and the browser's WebGPU runner consume the same file, so their
scores and timings are comparable split by split. The first part runs everywhere (CPython
or the JupyterLite kernel). The WebGPU part needs the browser: it is guarded by
`sys.platform == "emscripten"` and does nothing in CPython. In the browser it also needs
WebGPU (`navigator.gpu`); without it `create_bridge` raises an error that says why.
The last part reads a results CSV downloaded from the site's **WebGPU timing page**
(`webgpu/index.html`, no Python needed) and compares it with the Python runner.
""",
        [
            code('''from arenalite import datasets, runner, splits

iris = datasets.load("iris")
persisted = splits.make_splits(iris.n_rows, iris.task, y=iris.y, dataset="iris")
print(persisted["kind"], persisted["n_repeats"], "repeats ×", persisted["n_folds"], "folds")
first = persisted["splits"][0]
print(first["id"], len(first["train"]), "train rows,", len(first["test"]), "test rows")'''),
            md("The JSON round trip is exact (this file is what the browser runner reads):"),
            code('''import tempfile
from pathlib import Path

path = splits.save(persisted, Path(tempfile.mkdtemp()) / "iris_splits.json")
assert splits.load(path) == persisted
path.stat().st_size'''),
            md("The Python (numpy) runner on the first three repeats:"),
            code('''subset = {**persisted, "n_repeats": 3, "splits": persisted["splits"][:9]}
models = [{"name": "knn", "k": 5}, {"name": "attention"}]
py_results = runner.run({"iris": iris}, {"iris": subset}, models, progress=False)
py_results[["model", "split_id", "score", "total_ms", "rows_per_s"]].head()'''),
            code('''splits.fold_summary_table(py_results)'''),
            md("""
The same splits on WebGPU, in the browser only. `create_bridge` imports the bridge's ES
modules from this site (`webgpu_bridge/src/index.js` at the site root, found from the
kernel worker's location).
"""),
            code('''if sys.platform == "emscripten":
    import pandas as pd

    from arenalite import browser

    try:
        bridge = await browser.create_bridge()
    except Exception as exc:  # no WebGPU in this browser: say why
        print("WebGPU unavailable:", exc)
    else:
        print(bridge.adapter_info)
        gpu_results = await bridge.run_splits(iris, subset, models)
        both = pd.concat([py_results, gpu_results])
        print(both.groupby(["runner", "model"])[["score", "total_ms", "rows_per_s"]].mean())
        bridge.destroy()
else:
    print("CPython: the WebGPU part runs only in the JupyterLite kernel")'''),
            md("""
## Results from the WebGPU timing page

The site's WebGPU timing page (`webgpu/index.html` at the site root; with
`python build.py serve` it is <http://127.0.0.1:8000/webgpu/index.html>) runs the three
models on your GPU with no Python at all, on the same persisted splits of the bundled
datasets, and its **Download results CSV** button writes the Python runner's table with
`runner=webgpu` and `device` = the adapter. In the browser the next cell prints a link to it.
"""),
            code('''if sys.platform == "emscripten":
    import js
    from IPython.display import HTML, display

    page = f"{browser.site_root(str(js.location.href))}/webgpu/index.html"
    display(HTML(f'<a href="{page}" target="_blank">Open the WebGPU timing page</a>'))
else:
    print("the page is webgpu/index.html in the built site (python build.py serve)")'''),
            md("""
Put the page's download (`arenalite_webgpu_results.csv`) next to this notebook to use your
own numbers. Otherwise the notebook reads `webgpu_results_example.csv`, shipped with the
site: a real download from the page (all four datasets, default models, 3 splits), made in
headless Chromium on **SwiftShader**, a software WebGPU adapter (the `device` column says
so), so its times are CPU times, not a GPU's.
"""),
            code('''from pathlib import Path

import pandas as pd

own = Path("arenalite_webgpu_results.csv")
path = own if own.exists() else Path("webgpu_results_example.csv")
web = pd.read_csv(path)
print("read", path, "-", "your download" if path == own else "the shipped SwiftShader example")
print(len(web), "rows; runner:", ", ".join(web["runner"].unique()), "; device:",
      ", ".join(web["device"].unique()))
web[["model", "dataset", "split_id", "score", "total_ms", "rows_per_s"]].head()'''),
            md("It ranks on its own, each split a seed:"),
            code('''ranked_alone = arenalite.load_csv(path, seed="seed")
ranked_alone.elo_ranking(n_bootstrap=200, random_state=0).table'''),
            md("""
The Python runner on the same splits: the page's split files are `make_splits` of each
bundled dataset (deterministic), and it runs whole repeats. The bridge takes
`Float32Array` inputs, so the features are rounded to float32 here too for a like-for-like
comparison. The models are the page's defaults; add `k` / `temperature` if you changed them.
"""),
            code('''import numpy as np


def as_float32(ds):
    y = ds.y.astype(np.float32).astype(np.float64) if ds.task == "regression" else ds.y
    return datasets.Dataset(ds.name, ds.X.astype(np.float32).astype(np.float64), y, ds.task,
                            ds.n_classes, ds.feature_names)


def first_repeats(ds, n_repeats):
    persisted = splits.make_splits(ds.n_rows, ds.task, y=ds.y, dataset=ds.name)
    return {**persisted, "n_repeats": n_repeats,
            "splits": [s for s in persisted["splits"] if s["repeat"] < n_repeats]}


bundled = {name: datasets.load(name) for name in web["dataset"].unique()}
repeats = web.groupby("dataset")["repeat"].max() + 1
page_models = {"knn": {"name": "knn", "k": 5}, "attention": {"name": "attention"},
               "icl_transformer": {"name": "icl_transformer"}}
python = runner.run({n: as_float32(ds) for n, ds in bundled.items()},
                    {n: first_repeats(ds, int(repeats[n])) for n, ds in bundled.items()},
                    [page_models[m] for m in web["model"].unique()], progress=False)
len(python), len(web)'''),
            md("""
Scores agree within the parity tolerance of `docs/models.md` (1e-4; for regression on the
target's own scale, so the RMSE difference is divided by the target's standard deviation):
"""),
            code('''both = web.merge(python, on=["model", "dataset", "split_id"],
                 suffixes=("_webgpu", "_python"), validate="one_to_one")
target_sd = {n: float(np.std(ds.y)) if ds.task == "regression" else 1.0
             for n, ds in bundled.items()}
both["score_diff"] = ((both["score_webgpu"] - both["score_python"]).abs()
                      / both["dataset"].map(target_sd))
assert (both["score_diff"] < 1e-4).all(), both.loc[both["score_diff"].idxmax()]
both.groupby(["model", "dataset"])["score_diff"].max().unstack()'''),
            md("Time per test row (total time / test rows, median over splits), side by side:"),
            code('''both_runners = pd.concat([web, python])
both_runners["us_per_row"] = both_runners["total_ms"] * 1e3 / both_runners["n_test"]
per_row = (both_runners.groupby(["model", "dataset", "runner"])["us_per_row"].median()
           .unstack("runner"))
per_row["webgpu / python"] = per_row["webgpu"] / per_row["python"]
per_row.round(2)'''),
            code('''from arenalite.plots.style import color, figure_and_axes

devices = both_runners.groupby("runner")["device"].first()
fig, ax = figure_and_axes(figsize=(8, 4.5))
x = np.arange(len(per_row))
for k, runner_name in enumerate(["python", "webgpu"]):
    ax.bar(x + (k - 0.5) * 0.4, per_row[runner_name], width=0.4, color=color(k),
           label=f"{runner_name}: {devices[runner_name]}")
ax.set_xticks(x, [f"{m} / {d}" for m, d in per_row.index], rotation=60, ha="right", fontsize=8)
ax.set_yscale("log")
ax.set_ylabel("µs per test row (median over splits)")
ax.set_title("Inference time per row: Python (numpy) vs WebGPU runner")
ax.legend(fontsize=8)
fig'''),
            md("""
Ranked together: give each runner's models their own names (the same model on two runners
would otherwise be the same row twice) and load the concatenated table. A model's two
runners differ only by float32 rounding, so battles closer than the parity tolerance are
ties (`tie_threshold`); each model then sits next to itself:
"""),
            code('''together = both_runners.assign(model=lambda d: d["model"] + " @ " + d["runner"])
arenalite.load_df(together, seed="seed").elo_ranking(n_bootstrap=200, random_state=0,
                                                     tie_threshold=1e-4).table'''),
        ]),
    "07_gate_protocol": notebook(
        "The benchmark-gate protocol, end to end",
        """
A candidate joins only if it holds up against the reference it claims to improve on; it
does not have to win everywhere, but the data have to show it is competitive. The
protocol, step by step:

1. **Splits**: 2 × repeated 5-fold cross-validation, stratified for classification
   (`kind="kfold"`), persisted once and the same for every model. (Anomaly detectors
   would use `kind="random"`: 10 stratified 70 % / 30 % splits.)
2. **One score per dataset**: datasets, not folds, are the unit of replication
   (Demšar 2006).
3. **The gate**: a one-sided Wilcoxon signed-rank test of non-inferiority with a margin
   (0.01 for accuracy, R² and ROC AUC, 0.005 for the Brier score) at α = 0.05; a
   two-sided Wilcoxon test decides superior or inferior.
4. **Verdicts**: *superior* and *non-inferior* pass; *inconclusive* fails, because "not
   shown to be worse" is not evidence of being competitive.
5. **Ranking**: a Friedman test with Nemenyi critical differences over all models,
   references included.
6. **Probabilistic track**: models that predict a distribution are scored with proper
   scores (CRPS or Gaussian NLL; log loss for classifiers) against a point model with an
   honest constant spread.

The candidate is the small in-context transformer (`icl_transformer`), its reference kNN
(k = 5), on the four bundled datasets — far fewer than the protocol's suites, and the
verdicts show what that means.
""",
        [
            code('''from arenalite import datasets, runner, splits

data = {name: datasets.load(name) for name in datasets.names()}
persisted = {name: splits.make_splits(ds.n_rows, ds.task, y=ds.y, dataset=name, kind="kfold",
                                      n_folds=5, n_repeats=2)
             for name, ds in data.items()}
{name: (s["kind"], s["n_repeats"], s["n_folds"], len(s["splits"]))
 for name, s in persisted.items()}'''),
            md("""
Every model runs on exactly these splits: the candidate, its reference and, for the
ranking, kNN with k = 15 and distance attention. The metric follows the task: ROC AUC
(binary), log loss (multiclass), RMSE (regression).
"""),
            code('''models = [{"name": "icl_transformer"}, {"name": "knn", "k": 5},
          {"name": "knn", "k": 15}, {"name": "attention"}]
results = runner.run(data, persisted, models, progress=False)
results[["model", "dataset", "metric", "split_id", "score"]].head()'''),
            md("One score per model and dataset: the mean over its 10 folds (raw units)."),
            code('''bench = arenalite.load_df(results, seed="seed")
bench.raw_.round(4)'''),
            md("""
Margins are in each metric's raw units. ROC AUC takes the protocol's 0.01 and log loss
arenalite's default of 0.01 nats (twice the Brier margin: near p = ½ the log loss grows
twice as fast as the Brier score). RMSE is in the units of y, so no default fits every
dataset; the margin is fixed by a rule stated in advance: 1 % of the reference's RMSE.
"""),
            code('''margins = {"rmse": round(0.01 * float(bench.raw_.loc["knn", "diabetes"]), 2)}
gate = bench.gate("icl_transformer", reference="knn", margin=margins)
gate.table[["metric", "n_datasets", "median_difference", "p_noninferiority", "p_two_sided",
            "margin", "verdict", "passed"]]'''),
            md("Each verdict with its reason:"),
            code('''for row in gate.table.itertuples():
    print(f"{row.metric:>8}: {row.verdict} — {row.reason}")'''),
            md("The protocol's rule: superior and non-inferior pass, inconclusive fails."),
            code('''PASSING = ("superior", "non-inferior")
passes = bool(gate.table["verdict"].isin(PASSING).all())
print("icl_transformer", "passes" if passes else "fails", "the gate against knn")'''),
            md("""
The median differences are positive (candidate − reference, so the transformer scored
better on these datasets), yet every verdict is inconclusive and the candidate fails.
The gate tests each metric on its own datasets, and with n datasets the smallest
one-sided p-value is 0.5^n: one or two datasets can never reach 0.05 (five are needed to
pass, six for *superior*). Its 10 folds per dataset do not help — they are not
replications — which is exactly why the protocol averages them first.
"""),
            md("Friedman + Nemenyi over all four models, the reference included:"),
            code('''ranking = gate.ranking
print(f"Friedman chi2 = {ranking.friedman_statistic:.2f}, p = {ranking.friedman_p:.3f}; "
      f"Nemenyi critical difference {ranking.cd:.2f} ranks over {len(bench.datasets_)} datasets")
ranking.avg_ranks'''),
            code('''fig = ranking.plot(title="Critical differences, the reference included")
fig'''),
            md("""
## The probabilistic track

A regressor that predicts a mean and a spread is scored with proper scores: CRPS (units
of y) and Gaussian NLL (nats). Its reference is a point model with an honest constant
spread: σ = the RMSE of that model's own out-of-fold residuals, pooled over all folds and
repeats (`arenalite.probabilistic`). σ is the NLL-optimal constant, so the baseline gets
the best constant spread in hindsight.

The candidate is kNN (k = 15) with a *local* spread: the standard deviation of the 15
nearest training targets, inflated by √((k+1)/(k−1)) (the unbiased neighbour variance
plus the variance of the neighbour mean). It is a plug-in estimate, not a trained or
calibrated distribution model. kNN is a linear smoother, so the neighbour variance comes
from two `predict` calls, on y and on y². The reference is the same kNN's mean with the
honest constant spread, so the comparison measures the spread alone. Out-of-fold
predictions on diabetes, under the same 2 × 5 splits:
"""),
            code('''import numpy as np
import pandas as pd

from arenalite.models import predict
from arenalite.probabilistic import track_scores

diabetes, K = data["diabetes"], 15
knn = {"name": "knn", "k": K}
parts = []
for split in persisted["diabetes"]["splits"]:
    train, test = split["train"], split["test"]
    x_train, y_train, x_test = diabetes.X[train], diabetes.y[train], diabetes.X[test]
    mean = predict(knn, x_train, y_train, x_test, "regression")
    second_moment = predict(knn, x_train, y_train**2, x_test, "regression")
    spread = np.sqrt(np.maximum(second_moment - mean**2, 0.0) * (K + 1) / (K - 1))
    parts.append(pd.DataFrame({"dataset": "diabetes", "y_true": diabetes.y[test],
                               "mean": mean, "std": spread, "point": mean}))
oof = pd.concat(parts, ignore_index=True)
track = track_scores(oof, candidate="knn-15 + local spread",
                     reference="knn-15 + honest constant spread")
track.pivot(index=["dataset", "model"], columns="metric", values="score").round(4)'''),
            md("The baseline's NLL is the closed form ½ ln(2πσ²) + ½ of its constant σ:"),
            code('''baseline = track[track["model"] == "knn-15 + honest constant spread"]
sigma = float(baseline["spread"].iloc[0])
print(f"sigma = {sigma:.3f}; 0.5 ln(2 pi sigma^2) + 0.5 = "
      f"{0.5 * np.log(2 * np.pi * sigma**2) + 0.5:.4f}")'''),
            md("""
arenalite bundles one regression dataset, so this is one score per model and metric: a
description, not a gate. On a suite, `arenalite.load_df(track[track.metric ==
"gaussian_nll"])` feeds `gate` unchanged (Gaussian NLL has a default margin of 0.01
nats; CRPS, in the units of y, needs `margin=`). For classifiers the track's proper
score is log loss, which the gate above already used on iris and wine.
"""),
        ]),
    "08_tabular_fm": notebook(
        "tabular_fm: arenalite's tabular foundation model",
        """
`tabular_fm` is a transformer of the TabPFN family (one token per cell; each layer attends
across the features of a row, then across the rows of each feature, test rows attending to
training rows only), trained by us on a synthetic prior (`scripts/train_tfm.py`,
docs/models.md). It predicts in context: no fitting, the training rows are its input.

Here it runs beside the other in-context models on the persisted splits of the bundled
datasets (the first repeat of each, to stay quick in the browser), and its regression
head's spread — it predicts a Gaussian, not just a number — goes through the gate's
probabilistic track.
""",
        [
            code('''from arenalite import datasets, runner, splits

data = {name: datasets.load(name) for name in datasets.names()}
persisted = {}
for name, ds in data.items():
    s = splits.make_splits(ds.n_rows, ds.task, y=ds.y, dataset=name)
    persisted[name] = {**s, "n_repeats": 1, "splits": [e for e in s["splits"] if e["repeat"] == 0]}
models = [{"name": "tabular_fm"}, {"name": "icl_transformer"}, {"name": "attention"},
          {"name": "knn", "k": 5}]
results = runner.run(data, persisted, models, progress=False)
results.groupby(["dataset", "metric", "model"])["score"].mean().unstack("model").round(4)'''),
            md("""
ROC AUC is higher-is-better, log loss and RMSE lower-is-better. The same table ranked:
"""),
            code('''bench = arenalite.load_df(results, seed="seed",
                          metric_type_bounds={"roc_auc": (0.5, 1.0), "log_loss": (0.0, "knn"),
                                              "rmse": (0.0, "knn")})
bench.leaderboard(n_bootstrap=100, random_state=0).table[["model", "elo", "elo+", "elo-",
                                                            "winrate", "improvability"]]'''),
            md("""
## Its spread in the probabilistic track

`arenalite.models.predict_distribution` returns the Gaussian mean and spread (standard
deviation) in the target's units. Out-of-fold on diabetes, scored with CRPS and Gaussian
NLL against the reference point model (kNN, k = 15) with the honest constant spread (the
RMSE of its own out-of-fold residuals):
"""),
            code('''import pandas as pd

from arenalite.models import predict, predict_distribution
from arenalite.probabilistic import track_scores

diabetes, parts = data["diabetes"], []
for split in persisted["diabetes"]["splits"]:
    tr, te = split["train"], split["test"]
    mean, spread = predict_distribution({"name": "tabular_fm"}, diabetes.X[tr], diabetes.y[tr],
                                        diabetes.X[te])
    point = predict({"name": "knn", "k": 15}, diabetes.X[tr], diabetes.y[tr], diabetes.X[te],
                    "regression")
    parts.append(pd.DataFrame({"dataset": "diabetes", "y_true": diabetes.y[te], "mean": mean,
                               "std": spread, "point": point}))
oof = pd.concat(parts, ignore_index=True)
track = track_scores(oof, candidate="tabular_fm (its own spread)",
                     reference="knn-15 + honest constant spread")
track.pivot(index="model", columns="metric", values="score").round(3)'''),
            md("""
Lower is better for both. The spread is calibrated if about 68 % of the test targets fall
within one predicted standard deviation of the mean:
"""),
            code('''inside = ((oof["y_true"] - oof["mean"]).abs() <= oof["std"]).mean()
print(f"{inside:.0%} of targets within one predicted sd (68 % for a calibrated Gaussian)")'''),
        ]),
    "09_tabicl_own_checkpoint": notebook(
        "TabICLv2 from your own checkpoint",
        """
`tabicl` is TabICLv2 (the [`tabicl` package](https://pypi.org/project/tabicl/), BSD-3),
run in numpy by arenalite's Python runner (WebGPU to come) from **your own checkpoint**:
no TabICL weights ship with arenalite. The browser has no torch, so this notebook first
makes a small checkpoint of **random weights** with numpy
(`arenalite.models.tabicl.random_checkpoint`) and runs it on the persisted splits of two
bundled datasets, next to kNN. The last section shows how to run the real TabICLv2
checkpoint instead.

> **⚠ RANDOM WEIGHTS.** Every score in this notebook until the last section comes from a
> checkpoint of random weights made here, **not from TabICLv2**: it shows how the model
> runs and ranks, not how good TabICLv2 is. Its label in every table says so.
""",
        [
            md("""
A checkpoint of TabICLv2's architecture (feature groups of 3, QASSMax, split-half rotary
positions), shrunk to a toy: 16-wide embeddings, one column and one row block, two ICL
layers. Matrices are drawn normal(0, 1/√fan_in), LayerNorm weights are 1, the rotary
frequencies are exactly TabICL's. It is written as safetensors, the file arenalite reads
(as it reads the package's `.ckpt`):
"""),
            code('''import tempfile
from pathlib import Path

from arenalite.models import tabicl

config = {"max_classes": 10, "embed_dim": 16, "col_num_blocks": 1, "col_nhead": 2,
          "col_num_inds": 8, "row_num_blocks": 1, "row_nhead": 2, "row_num_cls": 2,
          "row_rope_interleaved": False, "icl_num_blocks": 2, "icl_nhead": 2}
random_checkpoint = tabicl.random_checkpoint(config, seed=0)
weights = tabicl.write_safetensors(random_checkpoint,
                                   Path(tempfile.gettempdir()) / "tabicl_random.safetensors")
n_weights = sum(t.size for t in random_checkpoint.tensors.values())
print(f"wrote {weights.name}: {n_weights:,} RANDOM weights (TabICLv2: 27.5 M trained ones)")'''),
            md("""
The persisted splits of iris and wine (the first repeat of each, three folds, to stay quick
in the browser), and the runner with the random checkpoint beside kNN. The model's label
names its weights:
"""),
            code('''from arenalite import datasets, runner, splits

data = {name: datasets.load(name) for name in ["iris", "wine"]}
persisted = {}
for name, ds in data.items():
    s = splits.make_splits(ds.n_rows, ds.task, y=ds.y, dataset=name)
    persisted[name] = {**s, "n_repeats": 1, "splits": [e for e in s["splits"] if e["repeat"] == 0]}
RANDOM = "tabicl (RANDOM weights, not TabICLv2)"
models = [{"name": "tabicl", "weights": str(weights), "n_estimators": 4, "label": RANDOM},
          {"name": "knn", "k": 5}]
results = runner.run(data, persisted, models, progress=False)
results.groupby(["dataset", "metric", "model"])["score"].mean().unstack("model").round(4)'''),
            md("""
Log loss, lower is better. A uniform guess over 3 classes scores ln 3 ≈ 1.099; random
weights do no better than that, kNN does far better. Ranked like any other results table
(each split a match day), normalized so that a log loss of 0 is 1 and the random-weight
model's own is 0:
"""),
            code('''bench = arenalite.load_df(results, seed="seed",
                          metric_type_bounds={"log_loss": (0.0, RANDOM)})
agg = bench.aggregate_ranking()
agg.table'''),
            code('''fig = agg.plot(title="Random-weight tabicl (not TabICLv2) next to kNN")
fig'''),
            md("""
IQM with a dataset bootstrap. (Elo would say the same: kNN wins every battle, so its
Bradley-Terry fit needs the tie prior.)
"""),
            code('''iqm = bench.iqm_ranking(n_bootstrap=200, random_state=0)
iqm.table'''),
            md("""
## The real TabICLv2

1. Download `tabicl-classifier-v2-20260212.ckpt` from the Hugging Face hub, repo
   [`jingang/TabICL`](https://huggingface.co/jingang/TabICL) (for regression, the TabICL
   regressor checkpoint from the same repo).
2. Optionally convert it to safetensors on your machine:
   `arenalite convert tabicl tabicl-classifier-v2-20260212.ckpt -o tabicl-classifier-v2.safetensors`
   (no torch needed; `weights` takes either file).
3. In JupyterLite, upload the file into the file browser first (drag it onto the file
   list on the left, or its upload button): it lands beside this notebook. It holds
   27.5 M weights, so the upload takes a while. In CPython, give its path.
4. Run the cell below; it does nothing until the file is there.

From a shell the same run is `arenalite run iris wine --model
tabicl:weights=tabicl-classifier-v2-20260212.ckpt --model knn -o runs/`. The full model
(27.5 M parameters, 12 ICL layers of width 512) is far slower in numpy than this toy, and
slower again in the browser: start with one dataset and a few splits.
"""),
            code('''CHECKPOINT = Path("tabicl-classifier-v2-20260212.ckpt")  # or your .safetensors
if CHECKPOINT.is_file():
    real = {"name": "tabicl", "weights": str(CHECKPOINT), "label": "tabicl (TabICLv2)"}
    real_results = runner.run(data, persisted, [real, {"name": "knn", "k": 5}], progress=False)
    real_bench = arenalite.load_df(real_results, seed="seed",
                                   metric_type_bounds={"log_loss": (0.0, "knn")})
    print(real_bench.elo_ranking(n_bootstrap=200, random_state=0).table.to_string(index=False))
else:
    print(f"{CHECKPOINT} is not here: download and upload it (steps above) to rank TabICLv2")'''),
        ]),
    "10_your_own_table": notebook(
        "Your own table",
        """
Time the models on **your own table**: a CSV (or `.csv.gz`, `.tsv`) with text columns,
missing cells, an entity id or a timestamp. In JupyterLite, drag the file onto the file
browser on the left: it lands beside this notebook, and nothing leaves your machine. Then
set `TABLE` and `TARGET` below. Until then the notebook uses `penguins.csv`, the Palmer
penguins (344 rows, text columns and missing cells; CC0 data, taken from the
`palmerpenguins` wheel on PyPI: `penguins.md` beside it gives the source).
""",
        [
            md("""
`read_table` types every column (numbers, or categories for text and bools), counts the
missing cells, maps the class labels to 0 … C−1 and refuses a bad table with one message
naming the column, the value and the row (docs/tables.md). `describe` prints what it saw
and the split rule SPEC §6 applies. Give `group_column=` (rows of one entity never on both
sides), `time_column=` (train only on the past) or `leakage_columns=` when the table has
them:
"""),
            code('''from pathlib import Path

from arenalite import splits
from arenalite.datasets import table

TABLE = Path("penguins.csv")  # the file you dropped into the file browser
TARGET = "species"
own = table.read_table(TABLE, target=TARGET)
print(table.describe(own))'''),
            md("""
The persisted splits, with the table's fingerprint: `arenalite run` and the timing page
refuse this file for any other table. Saved beside the notebook's temporary folder here;
download it from the file browser when you save it next to your table:
"""),
            code('''import tempfile

persisted = table.make_table_splits(own)
path = splits.save(persisted, Path(tempfile.gettempdir()) / f"{own.name}.splits.json")
print(f"{path.name}: {persisted['kind']}, {len(persisted['splits'])} splits, fingerprint "
      f"{persisted['fingerprint']['target_sha256'][:12]}…")'''),
            md("""
The models on every split of the first two repeats (`n_repeats=2`: quick in a browser),
in one call: `arenalite.tournament` takes the table with its roles (the same keywords as
`read_table`, plus the split options), makes its splits and plays every model on every
split in this process. Each model encodes text and missing cells as docs/models.md
("Tables") defines: one-hot or ordinal codes and context means for knn, attention and
icl_transformer; tabicl exactly as the `tabicl` package does. tabicl runs when its
checkpoint is beside the notebook (upload it as in "TabICLv2 from your own checkpoint"):
"""),
            code('''models = ["knn", "knn:k=15", "attention", "icl_transformer"]
CHECKPOINT = Path("tabicl-classifier-v2-20260212.ckpt")
if CHECKPOINT.is_file():
    models.append({"name": "tabicl", "weights": str(CHECKPOINT), "label": "tabicl (TabICLv2)"})
played = arenalite.tournament(TABLE, models, target=TARGET, n_repeats=2, n_bootstrap=200,
                              report=False, progress=False)
results = played.results
results.groupby(["metric", "model"])["score"].mean().unstack("model").round(4)'''),
            md("""
The tournament's scorecard: each split a match between two models, the lower error wins;
the Elo is the Bradley-Terry fit of those matches with its 95 % split-bootstrap interval:
"""),
            code('''played.scorecard'''),
            md("""
Ranked like any results table, each split a match day:
"""),
            code('''bench = arenalite.load_df(results, seed="seed")
agg = bench.aggregate_ranking()
agg.table'''),
            code('''fig = agg.plot(title=f"Models on {own.name}")
fig'''),
        ]),
    "11_tabpfn_own_checkpoint": notebook(
        "TabPFN v3 from your own checkpoint",
        """
`tabpfn` is TabPFN v3 (the [`tabpfn` package](https://pypi.org/project/tabpfn/) 9.2.0,
Apache-2.0 code; the weights carry their own licence), run in numpy by arenalite's Python
runner from **your own checkpoint**: its preprocessing, ensemble and forward, equal to the
package's `TabPFNClassifier.predict_proba` and `TabPFNRegressor.predict` on the test
fixtures. No TabPFN weights ship with arenalite. The browser has no torch, so this notebook
first makes small checkpoints of **random weights** with numpy
(`arenalite.models.tabpfn.random_checkpoint`) and runs them on persisted splits next to
kNN. The last section shows how to run the real checkpoints instead.

> **⚠ RANDOM WEIGHTS.** Every score in this notebook until the last section comes from a
> checkpoint of random weights made here, **not from TabPFN v3**: it shows how the model
> runs and ranks, not how good TabPFN v3 is. Its label in every table says so.
""",
        [
            md("""
A classifier and a regressor of TabPFN v3's architecture (cells with NaN indicators,
feature groups of 3, per-column induced attention, row aggregation with rotary positions,
in-context layers, the many-class decoder or the bar-distribution head), shrunk to a toy:
16-wide embeddings, two of each block. Matrices are drawn normal(0, 1/√fan_in), LayerNorm
weights are 1, the rotary frequencies are exactly the package's, the inference config is
the package's v2.5 default (what it uses for a file without one). Written as safetensors,
the file arenalite reads (as it reads the package's `.ckpt`):
"""),
            code('''import tempfile
from pathlib import Path

from arenalite.models import tabpfn

toy = {"embed_dim": 16, "dist_embed_num_blocks": 2, "dist_embed_num_heads": 2,
       "dist_embed_num_inducing_points": 8, "feature_group_size": 3, "feat_agg_num_blocks": 2,
       "feat_agg_num_heads": 2, "feat_agg_num_cls_tokens": 2, "nlayers": 2,
       "icl_num_heads": 4, "decoder_head_dim": 8, "decoder_num_heads": 2, "ff_factor": 2,
       "softmax_scaling_mlp_hidden_dim": 16}
folder = Path(tempfile.gettempdir())
classifier = tabpfn.write_safetensors(
    tabpfn.random_checkpoint({**toy, "max_num_classes": 10, "num_buckets": -1}, seed=0),
    folder / "tabpfn_random_classifier.safetensors")
regressor = tabpfn.write_safetensors(
    tabpfn.random_checkpoint({**toy, "max_num_classes": 0, "num_buckets": 64}, seed=1),
    folder / "tabpfn_random_regressor.safetensors")
for path in (classifier, regressor):
    print(tabpfn.read_checkpoint(path).description)'''),
            md("""
The persisted splits of iris, wine and diabetes (the first repeat of each, three folds, to
stay quick in the browser), and the runner with the random checkpoints beside kNN. The
model's label names its weights; `n_estimators=2` keeps it quick (the package's default
is 8):
"""),
            code('''import pandas as pd

from arenalite import datasets, runner, splits

data = {name: datasets.load(name) for name in ["iris", "wine", "diabetes"]}
persisted = {}
for name, ds in data.items():
    s = splits.make_splits(ds.n_rows, ds.task, y=ds.y, dataset=name)
    persisted[name] = {**s, "n_repeats": 1, "splits": [e for e in s["splits"] if e["repeat"] == 0]}
RANDOM = "tabpfn (RANDOM weights, not TabPFN v3)"
classifiers = {k: data[k] for k in ["iris", "wine"]}
classifier_splits = {k: persisted[k] for k in classifiers}
results = runner.run(classifiers, classifier_splits, [
    {"name": "tabpfn", "weights": str(classifier), "n_estimators": 2, "label": RANDOM},
    {"name": "knn", "k": 5}], progress=False)
regression = runner.run({"diabetes": data["diabetes"]}, {"diabetes": persisted["diabetes"]}, [
    {"name": "tabpfn", "weights": str(regressor), "n_estimators": 2, "label": RANDOM},
    {"name": "knn", "k": 5}], progress=False)
both = pd.concat([results, regression], ignore_index=True)
both.groupby(["dataset", "metric", "model"])["score"].mean().unstack("model").round(4)'''),
            md("""
Log loss and RMSE, lower is better. Random weights do no better than a uniform guess
(ln 3 ≈ 1.099 on iris and wine), kNN does far better. Ranked like any other results table
(each split a match day), normalized so that a score of 0 is 1 and the random-weight
model's own is 0:
"""),
            code('''bench = arenalite.load_df(both, seed="seed",
                          metric_type_bounds={"log_loss": (0.0, RANDOM), "rmse": (0.0, RANDOM)})
agg = bench.aggregate_ranking()
agg.table'''),
            code('''fig = agg.plot(title="Random-weight tabpfn next to kNN")
fig'''),
            md("""
## The real TabPFN v3

1. Download `tabpfn-v3-classifier-v3_default.ckpt` (and for regression
   `tabpfn-v3-regressor-v3_default.ckpt`) from the Hugging Face hub, repo
   [`Prior-Labs/tabpfn_3`](https://huggingface.co/Prior-Labs/tabpfn_3), under its licence.
2. Optionally convert it to safetensors on your machine:
   `arenalite convert tabpfn tabpfn-v3-classifier-v3_default.ckpt -o tabpfn-v3.safetensors`
   (no torch needed; `weights` takes either file).
3. In JupyterLite, upload the file into the file browser first (drag it onto the file
   list on the left, or its upload button): it lands beside this notebook. In CPython,
   give its path.
4. Run the cell below; it does nothing until the file is there.

From a shell the same run is `arenalite run iris wine --model
tabpfn:weights=tabpfn-v3-classifier-v3_default.ckpt --model knn -o runs/`. The full model
is far slower in numpy than this toy, and slower again in the browser: start with one
dataset and a few splits.
"""),
            code('''CHECKPOINT = Path("tabpfn-v3-classifier-v3_default.ckpt")  # or a .safetensors
if CHECKPOINT.is_file():
    real = {"name": "tabpfn", "weights": str(CHECKPOINT), "label": "tabpfn (TabPFN v3)"}
    real_results = runner.run(classifiers, classifier_splits, [real, {"name": "knn", "k": 5}],
                              progress=False)
    real_bench = arenalite.load_df(real_results, seed="seed",
                                   metric_type_bounds={"log_loss": (0.0, "knn")})
    print(real_bench.elo_ranking(n_bootstrap=200, random_state=0).table.to_string(index=False))
else:
    print(f"{CHECKPOINT} is not here: download and upload it (steps above) to rank TabPFN v3")'''),
        ]),
    "12_google_tabfm_own_checkpoint": notebook(
        "Google TabFM from your own checkpoint",
        """
`tabfm` is Google TabFM (the [`tabfm` package](https://pypi.org/project/tabfm/) 1.0.1,
Apache-2.0 code; its weights are on the Hugging Face hub under Google's own terms), run in
numpy by arenalite's Python runner from **your own checkpoint**: the wrappers' preprocessing,
ensemble and the forward, equal to the package's `TabFMClassifier.predict_proba` and
`TabFMRegressor.predict` (float32) on the test fixtures. It is not "tabular_fm (ours)",
arenalite's own small model. No Google TabFM weights ship with arenalite. The browser has
no torch, so this notebook first makes a small checkpoint of **random weights** with numpy
(`arenalite.models.tabfm.random_checkpoint`) and runs it on persisted splits next to kNN.
The last section shows how to run the real `google/tabfm-1.0.0-pytorch` folder instead.

> **⚠ RANDOM WEIGHTS.** Every score in this notebook until the last section comes from a
> checkpoint of random weights made here, **not from Google TabFM**: it shows how the model
> runs and ranks, not how good Google TabFM is. Its label in every table says so.
""",
        [
            md("""
A classifier and a regressor of Google TabFM's architecture (Fourier cell embeddings over
feature groups, two column stages of induced set attention, two row stages with rotary
positions and CLS tokens, the in-context stage and its decoder), shrunk to a toy: 16-wide
embeddings, one or two of each block. Every tensor is drawn at random (the Fourier and
rotary frequencies and the norm scales too). They are written as the package's
`save_pretrained` writes them, a folder holding `classification/` and `regression/`, each
with `config.json` and `model.safetensors`: the layout of the hub's folder.
"""),
            code('''import tempfile
from pathlib import Path

from arenalite.models import tabfm

toy = {"embed_dim": 16, "max_classes": 10, "col_num_blocks": 1, "col_nhead": 2,
       "col_num_inds": 4, "row_num_blocks": 2, "row_nhead": 2, "row_num_cls": 2,
       "icl_num_blocks": 2, "icl_nhead": 2, "ff_factor": 2, "feature_group_size": 3}
folder = Path(tempfile.gettempdir()) / "tabfm_random"
for seed, task in enumerate(["classification", "regression"]):
    checkpoint = tabfm.random_checkpoint({**toy, "is_classifier": task == "classification"},
                                         seed=seed)
    tabfm.save_pretrained(checkpoint, folder / task)
print(sorted(str(p.relative_to(folder)) for p in folder.rglob("*.*")))'''),
            md("""
The persisted splits of iris, wine and diabetes (the first repeat of each, three folds, to
stay quick in the browser), and the runner with the random checkpoint beside kNN. The
`weights` folder holds both tasks; each dataset's task picks its subfolder. The model's
label names its weights; `n_estimators=4` keeps it quick (the package's default is 32):
"""),
            code('''import pandas as pd

from arenalite import datasets, runner, splits

data = {name: datasets.load(name) for name in ["iris", "wine", "diabetes"]}
persisted = {}
for name, ds in data.items():
    s = splits.make_splits(ds.n_rows, ds.task, y=ds.y, dataset=name)
    persisted[name] = {**s, "n_repeats": 1, "splits": [e for e in s["splits"] if e["repeat"] == 0]}
RANDOM = "tabfm (RANDOM weights, not Google TabFM)"
results = runner.run(data, persisted, [
    {"name": "tabfm", "weights": str(folder), "n_estimators": 4, "label": RANDOM},
    {"name": "knn", "k": 5}], progress=False)
results.groupby(["dataset", "metric", "model"])["score"].mean().unstack("model").round(4)'''),
            md("""
Log loss and RMSE, lower is better. Random weights do no better than a guess; kNN does far
better. Ranked like any other results table (each split a match day), normalized so that
a score of 0 is 1 and the random-weight model's own is 0:
"""),
            code('''bench = arenalite.load_df(results, seed="seed",
                          metric_type_bounds={"log_loss": (0.0, RANDOM), "rmse": (0.0, RANDOM)})
agg = bench.aggregate_ranking()
agg.table'''),
            code('''fig = agg.plot(title="Random-weight Google TabFM next to kNN")
fig'''),
            md("""
## The real Google TabFM

1. Download the folder `google/tabfm-1.0.0-pytorch` from the Hugging Face hub
   ([google/tabfm-1.0.0-pytorch](https://huggingface.co/google/tabfm-1.0.0-pytorch), under
   Google's terms), e.g. `huggingface-cli download google/tabfm-1.0.0-pytorch --local-dir
   tabfm-1.0.0-pytorch`. It holds `classification/` and `regression/`.
2. A browser takes one file more easily than a folder: convert the task you need on your
   machine, `arenalite convert tabfm tabfm-1.0.0-pytorch/classification -o
   tabfm-classification.safetensors` (no torch needed; `weights` takes the folder, its
   parent or that file).
3. In JupyterLite, upload the file into the file browser first (drag it onto the file list
   on the left, or its upload button): it lands beside this notebook. In CPython, give the
   folder's or the file's path.
4. Run the cell below; it does nothing until the file is there.

From a shell the same run is `arenalite run iris wine --model
tabfm:weights=tabfm-1.0.0-pytorch --model knn -o runs/`. The full model (256-wide, 24
in-context blocks, 32 members) is far slower in numpy than this toy, and slower again in
the browser: start with one dataset, a few splits and fewer members (`n_estimators`).
"""),
            code('''CHECKPOINT = Path("tabfm-classification.safetensors")  # or the folder
if CHECKPOINT.exists():
    real = {"name": "tabfm", "weights": str(CHECKPOINT), "label": "tabfm (Google TabFM)"}
    classifiers = {k: data[k] for k in ["iris", "wine"]}
    real_results = runner.run(classifiers, {k: persisted[k] for k in classifiers},
                              [real, {"name": "knn", "k": 5}], progress=False)
    real_bench = arenalite.load_df(real_results, seed="seed",
                                   metric_type_bounds={"log_loss": (0.0, "knn")})
    print(real_bench.elo_ranking(n_bootstrap=200, random_state=0).table.to_string(index=False))
else:
    print(f"{CHECKPOINT} is not here: download and upload it (steps above) to rank "
          "Google TabFM")'''),
        ]),
    "13_tournament_of_your_own": notebook(
        "A tournament of your own",
        """
The tournament methodology in one call: a **suite** of tables, every model on every split
of every table, and the **scorecard**: each model's wins and losses against every other,
its record and its Elo with a 95 % interval. Here the suite is four real tables that ship
inside the arenalite wheel, so it runs offline and in JupyterLite, in this process:

| table | task | rows | source | licence |
|---|---|---|---|---|
| penguins | multiclass | 344, text, missing cells | Gorman et al. 2014, palmerpenguins | CC0 1.0 |
| breast_cancer | binary | 569 | Breast Cancer Wisconsin (Diagnostic), UCI | CC BY 4.0 |
| wine | multiclass | 178 | Wine, UCI | CC BY 4.0 |
| diabetes | regression | 442 | Efron et al. (2004), via scikit-learn | BSD-3-Clause |

`arenalite/datasets/README.md` gives each file's source and licence. Put your own tables
in the suite file the same way (`path = "my_table.csv"`, relative to the suite file).
""",
        [
            md("""
A suite file is TOML (or JSON with the same keys): one `[[datasets]]` entry per table,
a table file with its `target` (and `group_column`, `time_column`, `leakage_columns`,
`categorical` when it has them), or a `bundled` dataset that knows its own roles. Split
options go in the entry too: `n_repeats = 1` keeps this run quick (3 splits a table; the
methodology's adaptive rule would give these small tables 20 repeats of 3 folds). The
whole suite is checked before any work starts: a missing file or a column that is not
there is one line naming the entry and the key.
"""),
            code('''import tempfile
from importlib.resources import files
from pathlib import Path

penguins = Path(str(files("arenalite.datasets") / "penguins.csv.gz"))
folder = Path(tempfile.mkdtemp(prefix="tournament-"))
suite_file = folder / "suite.toml"
suite_file.write_text(f"""name = "four real tables"

[[datasets]]
name = "penguins"
path = "{penguins.as_posix()}"
target = "species"
n_repeats = 1

[[datasets]]
bundled = "breast_cancer"
n_repeats = 1

[[datasets]]
bundled = "wine"
n_repeats = 1

[[datasets]]
bundled = "diabetes"
n_repeats = 1
""", encoding="utf-8")
suite = arenalite.tournament.read_suite(suite_file)
suite.names'''),
            md("""
The tournament: the splits are made once into `OUT/splits/`, every model plays every
split of every table here in this process (the only way in the browser; `workers=2` or a
Dask client spread it elsewhere), and each finished task's row is appended to
`OUT/results.csv` at once. The penguins rows are sorted by species, and the table reader
says so: the iid splits draw rows at random, so they stay valid.
"""),
            code('''models = ["knn:k=5", "knn:k=15", "attention", "icl_transformer"]
out = folder / "run"
played = arenalite.tournament(suite_file, models, out=out, n_bootstrap=200, report=False,
                              progress=False)
played'''),
            md("""
The scorecard: one split of one table is a match between two models; the lower error
wins (1 − AUC, log loss or RMSE: the table's own metric), equal errors tie. `elo` is the
Bradley-Terry fit of exactly those matches, `elo_low`/`elo_high` its 95 % split-bootstrap
interval, and each `vs` column the row model's record against that opponent:
"""),
            code('''played.scorecard'''),
            code('''fig = played.plot(title="Elo, 95 % split-bootstrap intervals, four real tables")
fig'''),
            code('''fig = played.plot_record(title="Splits won by the row model against the column")
fig'''),
            md("""
Nothing is lost when a run stops: the same call again runs only the tasks that have no
row in `OUT/results.csv` (here none), and returns the same scorecard:
"""),
            code('''again = arenalite.tournament(suite_file, models, out=out, n_bootstrap=200,
                             report=False, progress=False)
assert again.scorecard.equals(played.scorecard)
print(len(again.results), "rows;", sorted(p.name for p in out.iterdir()))'''),
        ]),
}


def render(nb: dict) -> str:
    """A notebook's file text: nbformat-4 JSON, one-space indents, UTF-8 as is."""
    return json.dumps(nb, indent=1, ensure_ascii=False) + "\n"


def write(folder: Path = CONTENT) -> list[Path]:
    """Write every notebook of :data:`NOTEBOOKS` into ``folder``; returns their paths."""
    paths = []
    for name, nb in NOTEBOOKS.items():
        path = folder / f"{name}.ipynb"
        path.write_text(render(nb), encoding="utf-8")
        paths.append(path)
    return paths


def stale(folder: Path = CONTENT) -> list[str]:
    """What differs between ``folder``'s notebooks and :data:`NOTEBOOKS`, one line each:
    a notebook that differs, is missing, or has no source here. Files are compared as
    parsed JSON (only their formatting may differ), every key and cell included."""
    problems = []
    for name, nb in NOTEBOOKS.items():
        path = folder / f"{name}.ipynb"
        if not path.is_file():
            problems.append(f"{path.name}: missing")
        elif json.loads(path.read_text(encoding="utf-8")) != json.loads(render(nb)):
            problems.append(f"{path.name}: differs from what sitebuild/notebooks.py makes")
    problems += [f"{p.name}: no source in sitebuild/notebooks.py"
                 for p in sorted(folder.glob("*.ipynb")) if p.stem not in NOTEBOOKS]
    return problems


def main(argv: list[str] | None = None) -> int:
    """``python scripts/make_notebooks.py [--check]``: write the notebooks, or (``--check``)
    list the stale ones and exit 1 if any."""
    parser = argparse.ArgumentParser(description="Write the site's notebooks (content/).")
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 if a committed notebook is not what "
                        "sitebuild/notebooks.py makes")
    args = parser.parse_args(argv)
    if args.check:
        problems = stale()
        for line in problems:
            print(f"make_notebooks: {line}")
        return 1 if problems else 0
    for path in write():
        print(f"wrote {path.relative_to(CONTENT.parent)}")
    return 0
