"""Small public tabular datasets shipped with arenalite (binary, multiclass, regression).

Exported from scikit-learn by ``scripts/export_datasets.py``; sources and licences are
recorded in ``datasets.json`` next to the files. Loading needs only pandas.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).parent


@dataclass(frozen=True, eq=False)
class Dataset:
    """Features (n × F float64, or a table's typed columns as a DataFrame), target (int
    labels 0 … C−1 or float), task and names."""

    name: str
    X: np.ndarray | pd.DataFrame
    y: np.ndarray
    task: str
    n_classes: int | None
    feature_names: tuple[str, ...]

    @property
    def n_rows(self) -> int:
        return len(self.y)


@lru_cache(maxsize=1)
def catalogue() -> dict[str, dict]:
    """The bundled datasets' metadata (task, size, source, licence) by name."""
    return json.loads((HERE / "datasets.json").read_text())


def names() -> list[str]:
    """Names of the bundled datasets, sorted."""
    return sorted(catalogue())


def info(name: str) -> dict:
    """Metadata of one bundled dataset."""
    if not isinstance(name, str):
        raise TypeError(f"dataset name must be a string, got {type(name).__name__}")
    entries = catalogue()
    if name not in entries:
        raise ValueError(f"unknown dataset {name!r}; bundled datasets are {names()}")
    return entries[name]


def load(name: str) -> Dataset:
    """Load a bundled dataset by name (see :func:`names`)."""
    entry = info(name)
    frame = pd.read_csv(HERE / entry["file"], compression="gzip")
    target = entry["target"]
    features = [c for c in frame.columns if c != target]
    X = frame[features].to_numpy(dtype=np.float64)
    if entry["task"] == "regression":
        y = frame[target].to_numpy(dtype=np.float64)
    else:
        y = frame[target].to_numpy(dtype=np.int64)
    X.flags.writeable = False
    y.flags.writeable = False
    return Dataset(name, X, y, entry["task"], entry["n_classes"], tuple(features))
