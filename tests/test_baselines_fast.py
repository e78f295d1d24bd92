"""knn and attention's fast paths against their definitions (issue 43, item 6).

The references below are the implementations before the fast paths, kept here verbatim in
substance: a stable sort of every rounded difference-based distance (knn) and the softmax
of the difference-based distances (attention). knn must agree index for index, ties to the
lower row index included; attention to round-off (the expansion's, about 1e-14).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arenalite.models import distances, knn, predict, threads
from arenalite.models.attention import attention_output, attention_predict, attention_weights
from arenalite.models.knn import TIE_DECIMALS, neighbours


def reference_distances(x_query: np.ndarray, x_context: np.ndarray) -> np.ndarray:
    diff = x_query[:, None, :] - x_context[None, :, :]
    return np.einsum("qnf,qnf->qn", diff, diff)


def reference_neighbours(x_query: np.ndarray, x_context: np.ndarray, k: int) -> np.ndarray:
    d = np.round(reference_distances(x_query, x_context), TIE_DECIMALS)
    return np.argsort(d, axis=1, kind="stable")[:, :min(k, len(x_context))]


def reference_weights(x_query: np.ndarray, x_context: np.ndarray,
                      temperature: float) -> np.ndarray:
    logits = -reference_distances(x_query, x_context) / temperature
    logits -= logits.max(axis=1, keepdims=True)
    w = np.exp(logits)
    return w / w.sum(axis=1, keepdims=True)


@st.composite
def tables(draw, max_rows: int = 60, max_features: int = 5):
    """Context and query rows with many duplicate rows and equal distances: cells from a
    few levels (scaled), query rows often copies of context rows, some near-copies."""
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    n = draw(st.integers(1, max_rows))
    m = draw(st.integers(1, 20))
    f = draw(st.integers(1, max_features))
    levels = draw(st.integers(1, 4))
    scale = draw(st.sampled_from([1e-6, 1e-3, 1.0, 7.3, 1e4]))
    x = rng.integers(0, levels, size=(n, f)) * scale
    q = rng.integers(0, levels, size=(m, f)) * scale
    copies = rng.random(m) < 0.5
    q[copies] = x[rng.integers(0, n, copies.sum())]
    nudge = rng.random(m) < draw(st.sampled_from([0.0, 0.3]))
    q[nudge, 0] += rng.choice([1e-12, 1e-10, 5e-10, 1e-9, 2e-9], nudge.sum())
    k = draw(st.integers(1, n + 3))
    return x.astype(np.float64), q.astype(np.float64), k


@settings(max_examples=300, deadline=None)
@given(tables())
def test_knn_equals_definition_with_ties(case):
    x, q, k = case
    assert np.array_equal(neighbours(q, x, k), reference_neighbours(q, x, k))


def blocks_of_few_rows(x: np.ndarray, q: np.ndarray, k: int, n_threads: int) -> np.ndarray:
    """``neighbours`` with blocks of a few query rows, on ``n_threads`` threads."""
    saved, before = (distances.BLOCK_ELEMENTS, distances.MIN_BLOCK_ROWS), threads.count()
    distances.BLOCK_ELEMENTS, distances.MIN_BLOCK_ROWS = 3 * len(x), 1
    threads.set_count(n_threads)
    try:
        return neighbours(q, x, k)
    finally:
        distances.BLOCK_ELEMENTS, distances.MIN_BLOCK_ROWS = saved
        threads.set_count(before)


@settings(max_examples=40, deadline=None)
@given(tables(max_rows=3000, max_features=3))
def test_knn_large_context_and_small_blocks(case):
    """Large contexts (many rows a group in the bound of step 1) in blocks of a few query
    rows."""
    x, q, k = case
    k = min(k, 40)
    assert np.array_equal(blocks_of_few_rows(x, q, k, 1), reference_neighbours(q, x, k))


@pytest.mark.needs_threads
@settings(max_examples=20, deadline=None)
@given(tables(max_rows=3000, max_features=3))
def test_knn_blocks_on_two_threads(case):
    x, q, k = case
    k = min(k, 40)
    assert np.array_equal(blocks_of_few_rows(x, q, k, 2), reference_neighbours(q, x, k))


@pytest.mark.parametrize("seed", range(4))
def test_knn_random_continuous(seed):
    rng = np.random.default_rng(seed)
    x, q = rng.normal(size=(2500, 26)), rng.normal(size=(300, 26))
    q[::3] = x[rng.integers(0, 2500, 100)]  # exact matches at distance 0
    for k in (1, 5, 15):
        assert np.array_equal(neighbours(q, x, k), reference_neighbours(q, x, k))


def test_knn_context_sorted_by_cluster():
    """Rows sorted by cluster (a table sorted by its target): the same neighbours."""
    rng = np.random.default_rng(7)
    centres = rng.normal(size=(3, 8)) * 4
    x = np.vstack([c + rng.normal(size=(700, 8)) for c in centres])
    q = np.vstack([c + rng.normal(size=(40, 8)) for c in centres])
    q[::5] = x[::53][:len(q[::5])]
    for k in (1, 3, 10, 60):
        assert np.array_equal(neighbours(q, x, k), reference_neighbours(q, x, k))


def test_knn_all_rows_equal_and_huge_values(monkeypatch):
    x = np.ones((500, 4))
    assert np.array_equal(neighbours(np.ones((7, 4)), x, 5), np.tile(np.arange(5), (7, 1)))
    # Squared norms near the float64 range: the exact path ranks them.
    exact = []
    monkeypatch.setattr(knn, "_exact", lambda *a: exact.append(1) or reference_neighbours(*a))
    rng = np.random.default_rng(0)
    big = rng.normal(size=(50, 3)) * 1e146
    qbig = rng.normal(size=(6, 3)) * 1e146
    assert np.array_equal(neighbours(qbig, big, 4), reference_neighbours(qbig, big, 4))
    assert exact
    exact.clear()  # large but below float32's range: the float32 preselection
    mid, qmid = big * 1e-133, qbig * 1e-133
    assert np.array_equal(neighbours(qmid, mid, 4), reference_neighbours(qmid, mid, 4))
    assert not exact


def test_pair_distances_are_the_full_computations_bits():
    rng = np.random.default_rng(5)
    x, q = rng.normal(size=(300, 26)) * 3, rng.normal(size=(40, 26))
    full = reference_distances(q, x)
    rows, cols = np.divmod(np.arange(full.size), full.shape[1])
    assert np.array_equal(distances.pair_distances(q, x, rows, cols), full.ravel())
    assert np.array_equal(distances.squared_distances(q, x), full)


def test_expansion_within_its_bound():
    rng = np.random.default_rng(2)
    x, q = rng.normal(size=(400, 26)) * 5, rng.normal(size=(100, 26)) * 5
    context = distances.augmented_context(x)
    shifted = distances.shifted_distances(q, context)
    qn = distances.squared_norms(q)
    gap = np.abs(shifted + qn[:, None] - reference_distances(q, x))
    bound = distances.expansion_error(qn, float(context[-1].max()), 26)
    assert (gap <= bound[:, None]).all()


@pytest.mark.parametrize("task", ["binary", "multiclass", "regression"])
def test_knn_predict_unchanged(task):
    rng = np.random.default_rng(11)
    x = rng.integers(0, 3, size=(400, 6)).astype(float)
    xt = rng.integers(0, 3, size=(150, 6)).astype(float)
    c = None if task == "regression" else (2 if task == "binary" else 4)
    y = rng.normal(size=400) if c is None else rng.integers(0, c, 400)
    mean, std = x.mean(axis=0), x.std(axis=0)
    idx = reference_neighbours((xt - mean) / std, (x - mean) / std, 7)
    got = predict({"name": "knn", "k": 7}, x, y, xt, task, c)
    assert np.array_equal(got, knn.knn_output(idx, y, c))


@settings(max_examples=60, deadline=None)
@given(tables(max_rows=200, max_features=6), st.sampled_from([None, 2, 3]),
       st.floats(0.05, 30.0))
def test_attention_equals_definition_to_roundoff(case, n_classes, temperature):
    x, q, _ = case
    scale = max(1.0, float(np.abs(np.vstack([x, q])).max()))
    x, q = x / scale, q / scale  # standardized-like magnitudes, as the models see them
    rng = np.random.default_rng(len(x))
    y = rng.normal(size=len(x)) if n_classes is None else rng.integers(0, n_classes, len(x))
    want_w = reference_weights(q, x, temperature)
    got_w = attention_weights(q, x, temperature)
    assert np.allclose(got_w, want_w, rtol=1e-11, atol=1e-300)
    assert np.allclose(got_w.sum(axis=1), 1.0, rtol=0, atol=1e-13)
    want = attention_output(want_w, y, n_classes)
    got, weights_ms, head_ms = attention_predict(q, x, y, n_classes, temperature)
    assert np.allclose(got, want, rtol=1e-11, atol=1e-13)
    assert np.allclose(attention_output(got_w, y, n_classes), want, rtol=1e-11, atol=1e-13)
    assert weights_ms >= 0 and head_ms >= 0


@pytest.mark.needs_threads
def test_attention_blocks_and_threads_agree():
    rng = np.random.default_rng(3)
    x, q = rng.normal(size=(700, 8)), rng.normal(size=(90, 8))
    y = rng.integers(0, 3, 700)
    one, _, _ = attention_predict(q, x, y, 3, 8.0)
    saved, before = (distances.BLOCK_ELEMENTS, distances.MIN_BLOCK_ROWS), threads.count()
    distances.BLOCK_ELEMENTS, distances.MIN_BLOCK_ROWS = 5 * 700, 1
    threads.set_count(2)
    try:
        many, _, _ = attention_predict(q, x, y, 3, 8.0)
    finally:
        distances.BLOCK_ELEMENTS, distances.MIN_BLOCK_ROWS = saved
        threads.set_count(before)
    assert np.allclose(many, one, rtol=1e-13, atol=0)
