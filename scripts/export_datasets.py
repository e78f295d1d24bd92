"""Export the bundled datasets from scikit-learn into pkg/arenalite/datasets/.

Run ``python scripts/export_datasets.py`` (needs scikit-learn, a dev-only tool; the
runtime reads the exported files with pandas only). Writes one ``NAME.csv.gz`` per
dataset (feature columns then ``target``; gzip with mtime 0, so reruns are
byte-identical) and ``datasets.json`` with task, classes, source and licence.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn import datasets as skd

OUT = Path(__file__).resolve().parents[1] / "pkg" / "arenalite" / "datasets"

UCI = "Creative Commons Attribution 4.0 International (CC BY 4.0), UCI Machine Learning Repository"
SOURCES = {
    "breast_cancer": dict(
        loader=lambda: skd.load_breast_cancer(), task="binary",
        source="Breast Cancer Wisconsin (Diagnostic), W. Wolberg, O. Mangasarian, N. Street, "
               "W. Street (1995), UCI ML Repository, doi:10.24432/C5DW2B; via "
               "sklearn.datasets.load_breast_cancer",
        licence=UCI),
    "wine": dict(
        loader=lambda: skd.load_wine(), task="multiclass",
        source="Wine, S. Aeberhard and M. Forina (1991), UCI ML Repository, "
               "doi:10.24432/C5PC7J; via sklearn.datasets.load_wine",
        licence=UCI),
    "iris": dict(
        loader=lambda: skd.load_iris(), task="multiclass",
        source="Iris, R. A. Fisher (1936), UCI ML Repository, doi:10.24432/C56C76; via "
               "sklearn.datasets.load_iris",
        licence=UCI),
    "diabetes": dict(
        loader=lambda: skd.load_diabetes(scaled=False), task="regression",
        source="Diabetes, B. Efron, T. Hastie, I. Johnstone, R. Tibshirani (2004), 'Least "
               "Angle Regression', Annals of Statistics 32(2); unscaled copy distributed "
               "with scikit-learn, via sklearn.datasets.load_diabetes(scaled=False)",
        licence="BSD-3-Clause (as distributed with scikit-learn); the authors published the "
                "data freely with the LARS paper"),
}


def export(name: str, spec: dict) -> dict:
    """Write NAME.csv.gz and return its catalogue entry."""
    bunch = spec["loader"]()
    names = [str(n) for n in bunch.feature_names]
    frame = pd.DataFrame(np.asarray(bunch.data, dtype=np.float64), columns=names)
    if spec["task"] == "regression":
        frame["target"] = np.asarray(bunch.target, dtype=np.float64)
        n_classes, class_names = None, None
    else:
        frame["target"] = np.asarray(bunch.target, dtype=np.int64)
        n_classes = int(frame["target"].max()) + 1
        class_names = [str(c) for c in bunch.target_names]
    text = frame.to_csv(index=False, lineterminator="\n").encode()
    raw = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=9) as gz:
        gz.write(text)
    data = raw.getvalue()
    (OUT / f"{name}.csv.gz").write_bytes(data)
    return {"file": f"{name}.csv.gz", "sha256": hashlib.sha256(data).hexdigest(),
            "task": spec["task"], "n_rows": len(frame), "n_features": len(names),
            "n_classes": n_classes, "class_names": class_names, "target": "target",
            "source": spec["source"], "licence": spec["licence"]}


def main() -> None:
    catalogue = {name: export(name, spec) for name, spec in SOURCES.items()}
    (OUT / "datasets.json").write_text(json.dumps(catalogue, indent=1) + "\n")
    for name, entry in catalogue.items():
        print(f"{name}: {entry['n_rows']} rows, {entry['n_features']} features, {entry['task']}")


if __name__ == "__main__":
    main()
