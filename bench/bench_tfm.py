"""How good is ``tabular_fm``? Measured with arenalite itself on real data it never saw.

``python bench/bench_tfm.py [--out bench/out/tfm] [--quick]`` runs the Python runner on the
persisted splits (SPEC §6, adaptive 3-fold, at most ``--max-repeats`` repeats, default 3) of

* the four bundled datasets (breast_cancer, wine, iris, diabetes), and
* held-out real datasets that ship inside scikit-learn and were used for no training or
  model-selection decision: ``digits`` (1,797 × 64, 10 classes), ``digits_3v8`` (the 3s
  and 8s of digits, binary), and the three targets of ``linnerud`` (20 rows, regression),

for tabular_fm, knn (k 5 and 15), attention and the hand-built icl_transformer, and fits
scikit-learn's logistic / ridge regression and random forest on the same splits (bench
only), and the context mean (``context_mean``: the training rows' mean target for
regression, their class frequencies for classification — the floor a model must beat).
``--weights FILE`` (repeatable) adds tabular_fm with those weights as ``tabular_fm:STEM``
(a candidate against the shipped weights, on the same splits). The rows go through
``arenalite.load_df``; it prints two leaderboards (Elo with the dataset bootstrap, win
rate, improvability): on every dataset without icl_transformer (its weights take at most
32 features, digits has 64), and on the datasets it takes with every model; then the
per-dataset table. Markdown and CSV of each, and the raw results, go under ``--out``.
``--quick`` runs one repeat per dataset (a smoke test). ``--results CSV --exclude LABEL``
ranks an earlier run's rows without some models (say, the leaderboard before a candidate).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn import datasets as skd
from sklearn.dummy import DummyClassifier, DummyRegressor
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import arenalite
from arenalite import datasets as bundled
from arenalite import runner, splits

MODELS = [{"name": "tabular_fm", "label": "tabular_fm"},
          {"name": "icl_transformer", "label": "icl_transformer"},
          {"name": "attention", "label": "attention"},
          {"name": "knn", "k": 5, "label": "knn-5"},
          {"name": "knn", "k": 15, "label": "knn-15"}]
ICL_MAX_FEATURES = 32
METRIC_BOUNDS = {"roc_auc": (0.5, 1.0), "log_loss": (0.0, "knn-5"), "rmse": (0.0, "knn-5")}


def held_out() -> dict[str, bundled.Dataset]:
    """Real datasets bundled with scikit-learn, none of them seen in training."""
    out = {}
    digits = skd.load_digits()
    names = tuple(digits.feature_names)
    out["digits"] = bundled.Dataset("digits", digits.data.astype(float), digits.target,
                                    "multiclass", 10, names)
    keep = np.isin(digits.target, (3, 8))
    out["digits_3v8"] = bundled.Dataset("digits_3v8", digits.data[keep].astype(float),
                                        (digits.target[keep] == 8).astype(int), "binary", 2,
                                        names)
    lin = skd.load_linnerud()
    for j, target in enumerate(lin.target_names):
        out[f"linnerud_{target.lower()}"] = bundled.Dataset(
            f"linnerud_{target.lower()}", lin.data.astype(float), lin.target[:, j].astype(float),
            "regression", None, tuple(lin.feature_names))
    return out


def sklearn_models(task: str) -> dict[str, object]:
    if task == "regression":
        return {"linear (logistic/ridge)": make_pipeline(StandardScaler(), Ridge(alpha=1.0)),
                "random_forest": RandomForestRegressor(n_estimators=300, random_state=0,
                                                       n_jobs=1),
                "context_mean": DummyRegressor(strategy="mean")}
    return {"linear (logistic/ridge)": make_pipeline(StandardScaler(),
                                                     LogisticRegression(max_iter=5000)),
            "random_forest": RandomForestClassifier(n_estimators=300, random_state=0,
                                                    n_jobs=1),
            "context_mean": DummyClassifier(strategy="prior")}


def sklearn_rows(name: str, ds: bundled.Dataset, split: dict) -> list[dict]:
    """The scikit-learn baselines on every split, as rows of the runner's table."""
    rows = []
    for entry in split["splits"]:
        tr, te = np.asarray(entry["train"]), np.asarray(entry["test"])
        for label, est in sklearn_models(ds.task).items():
            t0 = time.perf_counter()
            est.fit(ds.X[tr], ds.y[tr])
            if ds.task == "regression":
                out = est.predict(ds.X[te])
            else:
                proba = est.predict_proba(ds.X[te])
                out = np.zeros((len(te), ds.n_classes))
                out[:, est.classes_] = proba
            ms = (time.perf_counter() - t0) * 1e3
            score, error = runner.task_metric(ds.task, ds.y[te], out)
            rows.append({"model": label, "dataset": name, "task": ds.task,
                         "metric": runner.METRIC_OF_TASK[ds.task], "score": score,
                         "error": error, "split_id": entry["id"], "repeat": entry["repeat"],
                         "fold": entry["fold"],
                         "seed": entry["repeat"] * split["n_folds"] + entry["fold"],
                         "n_train": len(tr), "n_test": len(te), "runner": "sklearn",
                         "device": "CPU", "total_ms": ms})
    return rows


def persisted(name: str, ds: bundled.Dataset, out: Path, quick: bool, max_repeats: int) -> dict:
    path = out / "splits" / f"{name}.splits.json"
    if path.exists() and not quick:
        return splits.load(path)
    n_train = splits.effective_training_rows(ds.n_rows)
    repeats = 1 if quick else min(max_repeats, splits.n_repeats_for(n_train))
    s = splits.make_splits(ds.n_rows, ds.task, y=None if ds.task == "regression" else ds.y,
                           dataset=name, n_repeats=repeats)
    if not quick:
        path.parent.mkdir(parents=True, exist_ok=True)
        splits.save(s, path)
    return s


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("bench/out/tfm"))
    ap.add_argument("--quick", action="store_true", help="one repeat per dataset")
    ap.add_argument("--n-bootstrap", type=int, default=1000)
    ap.add_argument("--results", type=Path, default=None,
                    help="rank this results.csv of an earlier run instead of running")
    ap.add_argument("--max-repeats", type=int, default=3,
                    help="at most this many repeats of SPEC §6's 3-fold split (default 3; the "
                         "adaptive rule asks 10–20 on these sizes)")
    ap.add_argument("--weights", type=Path, action="append", default=[],
                    help="also run tabular_fm with these weights (label tabular_fm:STEM)")
    ap.add_argument("--exclude", action="append", default=[],
                    help="with --results: leave this model label out (repeatable)")
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    MODELS[1:1] = [{"name": "tabular_fm", "weights": str(w), "label": f"tabular_fm:{w.stem}"}
                   for w in args.weights]
    data = {n: bundled.load(n) for n in bundled.names()} | held_out()
    split_of = {n: persisted(n, ds, args.out, args.quick, args.max_repeats)
                for n, ds in data.items()}
    t0 = time.perf_counter()
    small = {n: ds for n, ds in data.items() if ds.X.shape[1] <= ICL_MAX_FEATURES}
    if args.results:
        results = pd.read_csv(args.results)
        results = results[~results["model"].isin(args.exclude)]
    else:
        results = run_all(data, small, split_of)
        results.to_csv(args.out / "results.csv", index=False)
    print(f"{len(results)} rows in {time.perf_counter() - t0:.0f} s", flush=True)
    tables(results, small, args)
    return 0


def run_all(data: dict, small: dict, split_of: dict) -> pd.DataFrame:
    """Every model on every split it can take, and the scikit-learn baselines."""
    icl = [m for m in MODELS if m["name"] == "icl_transformer"]
    ours = pd.concat([runner.run(data, split_of, [m for m in MODELS if m not in icl],
                                 progress=True),
                      runner.run(small, {n: split_of[n] for n in small}, icl, progress=True)],
                     ignore_index=True)
    theirs = pd.DataFrame([r for n, ds in data.items() for r in sklearn_rows(n, ds,
                                                                              split_of[n])])
    return pd.concat([ours, theirs], ignore_index=True)


def tables(results: pd.DataFrame, small: dict, args: argparse.Namespace) -> None:
    """The two leaderboards and the per-dataset table, printed and written under --out."""
    cols = ["model", "elo", "elo+", "elo-", "rank", "winrate", "improvability"]
    md = []
    boards = {"all 9 datasets (icl_transformer takes at most 32 features: not on digits)":
              results[results["model"] != "icl_transformer"],
              f"the {len(small)} datasets with at most 32 features, every model":
              results[results["dataset"].isin(list(small))]}
    for i, (title, rows) in enumerate(boards.items()):
        bench = arenalite.load_df(rows, seed="seed", metric_type_bounds=METRIC_BOUNDS,
                                  format="long")
        board = bench.leaderboard(n_bootstrap=args.n_bootstrap, random_state=0).table[cols]
        board.to_csv(args.out / f"leaderboard_{i}.csv", index=False)
        md += [f"Leaderboard on {title}:", "", "| " + " | ".join(cols) + " |",
               "|" + "---|" * len(cols)]
        for _, r in board.iterrows():
            md.append(f"| {r['model']} | {r['elo']:.0f} | +{r['elo+']:.0f} | -{r['elo-']:.0f} "
                      f"| {r['rank']:.2f} | {r['winrate']:.3f} | {r['improvability']:.3f} |")
        md.append("")
    per = (results.groupby(["dataset", "metric", "model"], sort=True)["score"].mean()
           .unstack("model"))
    per.to_csv(args.out / "per_dataset.csv")
    md += ["| dataset | metric | " + " | ".join(per.columns) + " |",
           "|" + "---|" * (len(per.columns) + 2)]
    for (dataset, metric), r in per.iterrows():
        md.append(f"| {dataset} | {metric} | "
                  + " | ".join("–" if np.isnan(v) else f"{v:.4f}" for v in r) + " |")
    (args.out / "tables.md").write_text("\n".join(md) + "\n")
    print("\n".join(md))


if __name__ == "__main__":
    raise SystemExit(main())
