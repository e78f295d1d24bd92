"""Write tests/data/tabarena_results.csv: a small synthetic results file in TabArena's format.

One row per (dataset, fold, method), TabArena's per-split columns (``dataset, fold, method,
metric_error, metric_error_val, time_train_s, time_infer_s, metric, problem_type``) plus the
two row counts of its task metadata (``n_samples_train_per_fold``,
``n_samples_test_per_fold``), which its users join from ``task_metadata``. The numbers are
drawn here (seeded), not TabArena's: four methods of known order (``GBM-tuned`` best,
``Linear`` worst) on six datasets (three ROC AUC, two log loss, one RMSE), three folds
each, with a per-(method, dataset) effect and fold noise, so that orders
vary. ``metric_error`` is an error for every metric: 1 − AUC, log loss, RMSE.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

OUT = Path(__file__).resolve().parent.parent / "tests" / "data" / "tabarena_results.csv"
METHODS = {"GBM-tuned": (0.80, 30.0, 0.05), "TabICL": (0.88, 2.0, 1.20),
           "GBM-default": (0.95, 6.0, 0.03), "Linear": (1.25, 0.4, 0.01)}
"""method → (error factor, train seconds per 1K rows, inference seconds per 1K rows)."""
DATASETS = {  # name → (metric, problem type, typical error, train rows, test rows)
    "credit-g": ("roc_auc", "binary", 0.22, 900, 100),
    "blood-transfusion": ("roc_auc", "binary", 0.26, 673, 75),
    "diabetes-130": ("roc_auc", "binary", 0.30, 9000, 1000),
    "wine-quality": ("log_loss", "multiclass", 0.95, 5847, 650),
    "splice": ("log_loss", "multiclass", 0.12, 2871, 319),
    "houses": ("rmse", "regression", 0.22, 18576, 2064),
}
FOLDS = 3


def make(rng: np.random.Generator) -> pd.DataFrame:
    rows = []
    effect = {(m, d): float(rng.normal(0, 0.08)) for m in METHODS for d in DATASETS}
    for dataset, (metric, problem, typical, n_train, n_test) in DATASETS.items():
        for fold in range(FOLDS):
            for method, (factor, train_1k, infer_1k) in METHODS.items():
                noise = effect[method, dataset] + rng.normal(0, 0.05)
                error = typical * factor * float(np.exp(noise))
                rows.append({
                    "dataset": dataset, "fold": fold, "method": method,
                    "metric_error": round(error, 6),
                    "metric_error_val": round(error * float(np.exp(rng.normal(0, 0.05))), 6),
                    "time_train_s": round(train_1k * n_train / 1000
                                          * float(np.exp(rng.normal(0, 0.1))), 4),
                    "time_infer_s": round(infer_1k * n_test / 1000
                                          * float(np.exp(rng.normal(0, 0.1))), 5),
                    "metric": metric, "problem_type": problem,
                    "n_samples_train_per_fold": n_train, "n_samples_test_per_fold": n_test,
                })
    return pd.DataFrame(rows)


def main() -> None:
    OUT.parent.mkdir(parents=True, exist_ok=True)
    make(np.random.default_rng(19)).to_csv(OUT, index=False)
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
