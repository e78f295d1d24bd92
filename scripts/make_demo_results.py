"""Regenerate content/demo_results.csv: real runs of the bundled in-context models.

Six model variants on the four bundled datasets, on the persisted splits of
``arenalite.splits.make_splits`` (SPEC §6 protocol), with the Python runner. The scores
are deterministic; the timing columns are measurements of the machine that ran it.
"""

from __future__ import annotations

from pathlib import Path

from arenalite import datasets, runner, splits

MODELS = [
    {"name": "knn", "k": 1, "label": "knn-1"},
    {"name": "knn", "k": 5, "label": "knn-5"},
    {"name": "knn", "k": 15, "label": "knn-15"},
    {"name": "attention", "label": "attention"},
    {"name": "attention", "temperature": 1.0, "label": "attention-sharp"},
    {"name": "icl_transformer", "label": "icl-transformer"},
]
OUT = Path(__file__).resolve().parent.parent / "content" / "demo_results.csv"


def main() -> None:
    data = {name: datasets.load(name) for name in datasets.names()}
    persisted = {name: splits.make_splits(len(d.y), d.task, y=d.y) for name, d in data.items()}
    results = runner.run(data, persisted, MODELS, progress=True)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    results.to_csv(OUT, index=False, float_format="%.6g")
    print(f"wrote {OUT} ({len(results)} rows)")


if __name__ == "__main__":
    main()
