"""Bundled datasets: names, tasks, shapes, labels, provenance, errors."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

import arenalite.datasets as D

EXPECTED = {"breast_cancer": ("binary", 569, 30, 2), "wine": ("multiclass", 178, 13, 3),
            "iris": ("multiclass", 150, 4, 3), "diabetes": ("regression", 442, 10, None)}


def test_names():
    assert D.names() == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_load(name):
    task, n, f, c = EXPECTED[name]
    ds = D.load(name)
    assert (ds.name, ds.task, ds.n_classes, ds.n_rows) == (name, task, c, n)
    assert ds.X.shape == (n, f) and ds.X.dtype == np.float64 and np.isfinite(ds.X).all()
    assert len(ds.feature_names) == f and "target" not in ds.feature_names
    if c is None:
        assert ds.y.dtype == np.float64 and np.isfinite(ds.y).all()
    else:
        assert ds.y.dtype == np.int64 and set(np.unique(ds.y)) == set(range(c))
    with pytest.raises(ValueError):
        ds.X[0, 0] = 1.0  # read-only: callers that share the arrays cannot corrupt them


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_provenance(name):
    entry = D.info(name)
    data = (D.HERE / entry["file"]).read_bytes()
    assert hashlib.sha256(data).hexdigest() == entry["sha256"]
    assert entry["source"] and entry["licence"]


def test_unknown_dataset():
    with pytest.raises(ValueError, match="unknown dataset 'titanic'; bundled datasets are"):
        D.load("titanic")
    with pytest.raises(TypeError, match="dataset name must be a string"):
        D.load(3)
