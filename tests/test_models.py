"""In-context models: shapes, golden values, brute-force kNN, KV cache, validation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import arenalite.datasets as D
from arenalite.models import predict, predict_timed, read_weights, transformer
from arenalite.models.preprocess import prepare
from arenalite.models.weights import Weights, check_config, tensor_shapes

MODELS = [{"name": "knn", "k": 3}, {"name": "attention"}, {"name": "icl_transformer"}]


def random_weights(seed: int = 0, **cfg: int) -> Weights:
    config = check_config({"d_in": 8, "d_model": 16, "n_heads": 4, "n_layers": 2, "d_mlp": 32,
                           "max_classes": 5, "ln_eps": 1e-5, **cfg})
    rng = np.random.default_rng(seed)
    return Weights(config, {n: (rng.normal(size=s) * 0.5).astype(np.float32)
                            for n, s in tensor_shapes(config).items()})


def data(task: str, n: int = 40, m: int = 13, f: int = 5, seed: int = 0):
    rng = np.random.default_rng(seed)
    X, Xt = rng.normal(size=(n, f)), rng.normal(size=(m, f))
    if task == "regression":
        return X, rng.normal(size=n) * 3 + 7, Xt, None
    c = 2 if task == "binary" else 4
    return X, np.arange(n) % c, Xt, c


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m["name"])
@pytest.mark.parametrize("task", ["binary", "multiclass", "regression"])
def test_shapes_and_probabilities(model, task):
    X, y, Xt, c = data(task)
    out, timings = predict_timed(model, X, y, Xt, task, c)
    if task == "regression":
        assert out.shape == (13,) and np.isfinite(out).all()
    else:
        assert out.shape == (13, c)
        assert np.allclose(out.sum(axis=1), 1.0) and (out > 0).all()
    assert set(timings) == {"embed", "layers", "head", "total"}
    n_layers = 2 if model["name"] == "icl_transformer" else 1
    assert len(timings["layers"]) == n_layers
    stages = timings["embed"] + sum(timings["layers"]) + timings["head"]
    assert timings["total"] == pytest.approx(stages)


def test_knn_golden():
    # Standardizing keeps the order on one feature; neighbours of 0.4 are rows 0, 1, 2.
    p = predict({"name": "knn", "k": 3}, [[0.0], [1.0], [2.0], [10.0]], [0, 0, 1, 1], [[0.4]],
                "binary")
    assert np.allclose(p, [[3 / 5, 2 / 5]])
    r = predict({"name": "knn", "k": 2}, [[0.0], [1.0], [5.0]], [1.0, 3.0, 9.0], [[0.2]],
                "regression")
    assert np.allclose(r, [2.0])


def test_attention_golden():
    # Standardized context is [-1, 1]; the query 0 maps to -1; T = F = 1.
    p = predict({"name": "attention"}, [[0.0], [2.0]], [0, 1], [[0.0]], "binary")
    w0 = 1 / (1 + math.exp(-4.0))
    s = np.array([w0, 1 - w0])
    assert np.allclose(p, [(2 * s + 1) / (2 + 2)])


def brute_knn(X, y, Xt, k, n_classes):
    """Plain loops: standardize, sort by (distance, index), count or average."""
    mean, std = X.mean(axis=0), X.std(axis=0)
    std = np.where(std < 1e-12, 1.0, std)
    Xs, Xts = (X - mean) / std, (Xt - mean) / std
    out = []
    for q in Xts:
        dist = [(round(float(np.sum((q - row) ** 2)), 9), j) for j, row in enumerate(Xs)]
        nearest = [j for _, j in sorted(dist)[:min(k, len(X))]]
        if n_classes is None:
            out.append(np.mean([y[j] for j in nearest]))
        else:
            counts = [sum(1 for j in nearest if y[j] == c) for c in range(n_classes)]
            out.append([(cnt + 1) / (len(nearest) + n_classes) for cnt in counts])
    return np.array(out)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), k=st.integers(1, 12), task=st.sampled_from(
    ["binary", "multiclass", "regression"]))
def test_knn_equals_brute_force(seed, k, task):
    rng = np.random.default_rng(seed)
    # Few distinct values, so duplicate rows and distance ties are common.
    X = rng.integers(0, 3, size=(10, 3)).astype(float)
    Xt = rng.integers(0, 3, size=(6, 3)).astype(float)
    y = rng.normal(size=10) if task == "regression" else rng.integers(0, 3, size=10)
    c = None if task == "regression" else (2 if task == "binary" else 3)
    if task == "binary":
        y = y % 2
    got = predict({"name": "knn", "k": k}, X, y, Xt, task, c)
    assert np.allclose(got, brute_knn(X, y, Xt, k, c), rtol=0, atol=1e-12)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_attention_and_transformer_ignore_context_order(seed):
    X, y, Xt, c = data("multiclass", n=20, m=5, seed=seed)
    perm = np.random.default_rng(seed).permutation(20)
    for model in ({"name": "attention"}, {"name": "icl_transformer"}):
        a = predict(model, X, y, Xt, "multiclass", c)
        b = predict(model, X[perm], y[perm], Xt, "multiclass", c)
        assert np.allclose(a, b, atol=1e-12)
        assert np.allclose(a.sum(axis=1), 1.0)


@pytest.mark.parametrize("task", ["multiclass", "regression"])
def test_kv_cached_batched_equals_uncached_random_weights(task, monkeypatch):
    params = transformer.Params(random_weights(3))
    X, y, Xt, c = data(task, n=30, m=9, f=6)
    prep = prepare(X, y, Xt, task, c)
    cached, _ = transformer.forward_cached(params, prep)
    assert np.array_equal(cached, transformer.forward_uncached(params, prep))
    # Several query batches must not change a row either.
    monkeypatch.setattr(transformer, "QUERY_BATCH", 4)
    assert np.array_equal(transformer.forward_cached(params, prep)[0], cached)


def test_kv_cached_equals_uncached_default_weights():
    ds = D.load("wine")
    prep = prepare(ds.X[::2], ds.y[::2], ds.X[1::6], ds.task, ds.n_classes)
    params = transformer.Params(read_weights())
    cached, _ = transformer.forward_cached(params, prep)
    assert np.array_equal(cached, transformer.forward_uncached(params, prep))


@pytest.mark.parametrize("name", D.names())
def test_default_weights_beat_the_baseline(name):
    ds = D.load(name)
    test = np.arange(ds.n_rows) % 3 == 0
    out = predict({"name": "icl_transformer"}, ds.X[~test], ds.y[~test], ds.X[test], ds.task,
                  ds.n_classes)
    y_tr, y_te = ds.y[~test], ds.y[test]
    if ds.task == "regression":
        rmse = np.sqrt(np.mean((out - y_te) ** 2))
        baseline = np.sqrt(np.mean((y_tr.mean() - y_te) ** 2))
        assert rmse < 0.9 * baseline
    else:
        majority = np.mean(y_te == np.bincount(y_tr).argmax())
        assert np.mean(out.argmax(axis=1) == y_te) > majority + 0.2


X3, Y3 = np.arange(12.0).reshape(6, 2), np.array([0, 1, 0, 1, 0, 1])
BAD = [
    (dict(model={"name": "forest"}), ValueError, "unknown model name 'forest'"),
    (dict(model="knn"), TypeError, "model must be a dict"),
    (dict(model={"name": "knn", "kk": 3}), ValueError, r"unknown parameters \['kk'\]"),
    (dict(model={"name": "knn", "k": 0}), ValueError,
     "knn parameter 'k' must be an integer ≥ 1, got 0"),
    (dict(model={"name": "attention", "temperature": -1.0}), ValueError, "temperature"),
    (dict(model={"name": "icl_transformer", "weights": 3}), TypeError, "'weights'"),
    (dict(task="ranking"), ValueError, "task must be one of"),
    (dict(X_train=X3[:, 0]), ValueError, "X_train must be 2-dimensional"),
    (dict(X_test=X3[:, :1]), ValueError, "X_test has 1 feature columns but X_train has 2"),
    (dict(X_train=np.where(X3 == 5, np.nan, X3)), ValueError, "non-finite value nan in row 2"),
    (dict(X_test=np.array([["a", "b"]])), TypeError, "X_test must be a numeric array"),
    (dict(y_train=Y3[:5]), ValueError, "y_train has 5 values but X_train has 6 rows"),
    (dict(y_train=np.array([0, 1, 0, 1, 0, 1.5])), ValueError, "row 5 has 1.5"),
    (dict(y_train=np.array([0, 1, 0, 2, 0, 1])), ValueError, "row 3 has 2"),
    (dict(y_train=np.array([0, 1, -1, 1, 0, 1])), ValueError, "row 2 has -1"),
    (dict(y_train=np.array([0, 1, 0, 1, 0, np.inf])), ValueError, "non-finite value inf in row 5"),
    (dict(n_classes=3), ValueError, "n_classes must be 2 for task 'binary'"),
    (dict(task="regression", n_classes=2), ValueError, "n_classes must be None"),
    (dict(task="multiclass", n_classes=11, model={"name": "icl_transformer"}), ValueError,
     "icl_transformer takes at most 10 classes \\(the weights' max_classes\\), got 11"),
    (dict(X_train=np.zeros((6, 33)), X_test=np.zeros((1, 33)),
          model={"name": "icl_transformer"}), ValueError,
     r"at most 32 features \(the weights' d_in\), got 33"),
]


@pytest.mark.parametrize("change,error,match", BAD, ids=[b[2][:30] for b in BAD])
def test_bad_input(change, error, match):
    args = dict(model={"name": "knn"}, X_train=X3, y_train=Y3, X_test=X3[:2], task="binary",
                n_classes=None)
    args.update(change)
    with pytest.raises(error, match=match):
        predict(**args)
