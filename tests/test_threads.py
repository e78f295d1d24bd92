"""The worker threads of the numpy models (arenalite.models.threads): the count, the pool,
and TabICL's, TabPFN's and tabular_fm's forwards on 1 and on 4 threads (the same outputs up
to float32 round-off, the per-layer times still the stage's wall time)."""

from __future__ import annotations

import json
import math
import time
from pathlib import Path

import numpy as np
import pytest

from arenalite.models import tabicl, threads
from arenalite.models.tabicl.model import forward

DATA = Path(__file__).parent / "data" / "tabicl"
CASES = json.loads((DATA / "stages.json").read_text())


@pytest.fixture
def restore_count():
    yield
    threads.set_count(None)


@pytest.mark.needs_threads
def test_count_follows_the_environment(monkeypatch: pytest.MonkeyPatch, restore_count) -> None:
    monkeypatch.setenv(threads.ENV, "3")
    threads.set_count(None)
    assert threads.count() == 3
    monkeypatch.setenv(threads.ENV, "zero")
    threads.set_count(None)
    with pytest.raises(ValueError, match="ARENALITE_THREADS must be a positive whole number, "
                                         "got 'zero'"):
        threads.count()
    monkeypatch.delenv(threads.ENV)
    threads.set_count(None)
    assert threads.count() >= 1
    with pytest.raises(ValueError, match="positive integer or None, got 0"):
        threads.set_count(0)


def _busiest(n: int, size: int, k: int) -> int:
    sizes = [min(size, n - start) for start in range(0, n, size)]
    return max(sum(sizes[i::k]) for i in range(k))


@pytest.mark.parametrize("k", [2, 3, 4])
def test_spread_keeps_the_budget_and_evens_out_the_threads(
        k: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every chunk within its share of the budget; the busiest thread never holds more
    than with chunks as large as the budget allows; TabICL's 30 columns evenly. (The count
    is stubbed: the sizes are arithmetic, so this runs where there are no threads too.)"""
    monkeypatch.setattr(threads, "count", lambda: k)
    for n in range(1, 120):
        for most in range(1, 90, 7):
            size = threads.spread(n, most)
            assert 1 <= size <= max(1, most // k)
            simple = max(1, min(most // k, math.ceil(n / k)))
            assert _busiest(n, size, k) <= _busiest(n, simple, k)
    if k == 2:
        assert _busiest(30, threads.spread(30, 18), 2) == 15  # was 9, 9, 9, 3: 18


@pytest.mark.needs_threads
def test_map_chunks_keeps_the_order_and_raises(restore_count) -> None:
    threads.set_count(4)
    assert threads.map_chunks(lambda i: i * i, list(range(10))) == [i * i for i in range(10)]

    def fail(i):
        if i == 3:
            raise ValueError("chunk 3")
        return i

    with pytest.raises(ValueError, match="chunk 3"):
        threads.map_chunks(fail, list(range(6)))
    assert threads.spread(100, 1000) == 25 and threads.spread(100, 8) == 2
    threads.set_count(1)
    assert threads.spread(100, 1000) == 100


@pytest.mark.needs_threads
def test_the_caller_takes_chunks_and_nested_maps_stay_in_their_thread(restore_count) -> None:
    """The calling thread runs chunks beside the pool's; a chunk's own map runs in its
    thread, one chunk after another."""
    import threading

    threads.set_count(2)
    caller = threading.get_ident()

    def chunk(i):
        time.sleep(0.02)
        inner = threads.map_chunks(lambda j: threading.get_ident(), [0, 1, 2])
        return threading.get_ident(), set(inner)

    done = threads.map_chunks(chunk, list(range(4)))
    assert caller in {ident for ident, _ in done}
    assert len({ident for ident, _ in done}) == 2
    assert all(inner == {ident} for ident, inner in done)


@pytest.mark.needs_threads
def test_no_chunk_starts_after_one_failed(restore_count) -> None:
    threads.set_count(3)
    started = []

    def fail(i):
        started.append(i)
        time.sleep(0.01)
        raise ValueError(f"chunk {i}")

    with pytest.raises(ValueError, match="chunk"):
        threads.map_chunks(fail, list(range(50)))
    assert 1 <= len(started) <= 3


@pytest.mark.needs_threads
@pytest.mark.parametrize("name", ["wide", "binary", "regression"])
def test_tabicl_on_more_threads_gives_the_same_rows(name: str, restore_count) -> None:
    info = CASES[name]
    f = np.load(DATA / f"stages_{name}.npz")
    n = info["context_rows"]
    net = tabicl.load(str(DATA / info["checkpoint"]))
    threads.set_count(1)
    one = tabicl.stages(net, f["x"][:n], f["y_train"], f["x"][n:])
    threads.set_count(4)
    four = tabicl.stages(net, f["x"][:n], f["y_train"], f["x"][n:])
    for stage in ("column", "row", "icl", "output"):
        scale = max(1.0, float(np.abs(one[stage]).max()))  # how BLAS groups rows
        np.testing.assert_allclose(four[stage], one[stage], atol=1e-6 * scale, rtol=1e-6,
                                   err_msg=stage)


@pytest.mark.needs_threads
def test_layer_times_stay_wall_times_on_threads(restore_count) -> None:
    """The row stage's per-block times add up to its wall time, not to the threads' sum."""
    info = CASES["wide"]
    f = np.load(DATA / "stages_wide.npz")
    n = info["context_rows"]
    net = tabicl.load(str(DATA / info["checkpoint"]))
    threads.set_count(4)
    t0 = time.perf_counter()
    _, timings = forward(net, f["x"][:n], f["y_train"], f["x"][n:])
    wall = (time.perf_counter() - t0) * 1e3
    assert len(timings["layers"]) == len(net.row.blocks) + len(net.icl.blocks)
    assert all(t >= 0 for t in timings["layers"])
    assert timings["embed"] + sum(timings["layers"]) + timings["head"] <= wall * 1.01 + 1.0


def test_one_thread_where_there_are_none(monkeypatch: pytest.MonkeyPatch, restore_count) -> None:
    monkeypatch.setattr(threads.sys, "platform", "emscripten")
    monkeypatch.setenv(threads.ENV, "8")
    threads.set_count(None)
    assert threads.count() == 1
    with pytest.raises(ValueError, match="emscripten has no threads"):
        threads.set_count(2)


def _square_in_a_worker(n: int) -> list[int]:
    return threads.map_chunks(lambda i: i * i, list(range(n)))


@pytest.mark.needs_processes
@pytest.mark.needs_threads
def test_a_forked_worker_starts_its_own_pool(restore_count) -> None:
    """The parent's pool has threads; a forked child must not wait on them."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    threads.set_count(2)
    assert threads.map_chunks(lambda i: i + 1, [1, 2, 3]) == [2, 3, 4]
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("fork")) as pool:
        assert list(pool.map(_square_in_a_worker, [4, 5], timeout=60)) == [
            [0, 1, 4, 9], [0, 1, 4, 9, 16]]


@pytest.mark.needs_threads
def test_tabpfn_on_more_threads_gives_the_same_logits(restore_count) -> None:
    from arenalite.models import tabpfn

    tdata = Path(__file__).parent / "data" / "tabpfn"
    model = tabpfn.load(tdata / "classifier_small.ckpt")
    rng = np.random.default_rng(0)
    x = rng.normal(size=(90, 7)).astype(np.float32)
    y = (np.arange(60) % 3).astype(np.float32)
    threads.set_count(1)
    one = tabpfn.forward(model, x[:60], y, x[60:])
    threads.set_count(4)
    four = tabpfn.forward(model, x[:60], y, x[60:])
    scale = max(1.0, float(np.abs(one).max()))
    np.testing.assert_allclose(four, one, atol=1e-6 * scale, rtol=1e-6)


@pytest.mark.needs_threads
@pytest.mark.parametrize("task", ["multiclass", "regression"])
def test_tabular_fm_on_more_threads_gives_the_same_output(task: str, restore_count) -> None:
    """tabular_fm's query blocks and row-attention blocks on the worker threads: 200 query
    rows (4 blocks of 64) and a context whose row blocks split between the threads."""
    from arenalite import models

    rng = np.random.default_rng(3)
    x = rng.normal(size=(500, 6))
    y = (x[:, 0] > 0).astype(float) + (x[:, 1] > 0.5) if task == "multiclass" else x[:, 0] * 3
    n_classes = 3 if task == "multiclass" else None
    model = {"name": "tabular_fm"}

    def run() -> np.ndarray:
        return np.asarray(models.predict(model, x[:300], y[:300], x[300:], task, n_classes))

    threads.set_count(1)
    one = run()
    threads.set_count(4)
    four = run()
    scale = max(1.0, float(np.abs(one).max()))
    np.testing.assert_allclose(four, one, atol=1e-6 * scale, rtol=1e-6)


@pytest.mark.needs_threads
def test_a_small_tabpfn_icl_runs_in_head_shares_and_gives_the_row_chunks_output(
        monkeypatch: pytest.MonkeyPatch, restore_count) -> None:
    """Below SMALL_STAGE_ROWS rows every TabPFN ICL layer runs as shares of its heads and
    hidden units (``ICLLayer.by_shares``), context and query rows alike, and gives what row
    chunks give, up to float32 round-off."""
    from arenalite.models import tabpfn
    from arenalite.models.tabpfn.icl import ICLLayer

    tdata = Path(__file__).parent / "data" / "tabpfn"
    model = tabpfn.load(tdata / "classifier_small.ckpt")
    rng = np.random.default_rng(1)
    x = rng.normal(size=(150, 5)).astype(np.float32)
    y = (np.arange(100) % 3).astype(np.float32)
    threads.set_count(2)
    counts = []
    whole = ICLLayer.by_shares

    def spy(self, h, x_normed, kv, n_shares):
        counts.append((kv is None, n_shares))
        return whole(self, h, x_normed, kv, n_shares)

    monkeypatch.setattr(ICLLayer, "by_shares", spy)
    shared = tabpfn.forward(model, x[:100], y, x[100:])
    layers = len(model.icl.layers)
    assert counts.count((True, 2)) == layers and counts.count((False, 2)) == layers
    monkeypatch.setattr(threads, "SMALL_STAGE_ROWS", 0)  # row chunks again
    counts.clear()
    chunked = tabpfn.forward(model, x[:100], y, x[100:])
    assert counts == []
    scale = max(1.0, float(np.abs(chunked).max()))
    np.testing.assert_allclose(shared, chunked, atol=1e-6 * scale, rtol=1e-6)


@pytest.mark.needs_threads
@pytest.mark.parametrize("name", ["wide", "regression"])
def test_a_small_tabicl_icl_runs_in_head_shares_and_gives_the_row_chunks_output(
        name: str, monkeypatch: pytest.MonkeyPatch, restore_count) -> None:
    """Below SMALL_STAGE_ROWS rows every ICL layer runs as shares of its heads and hidden
    units (``AttentionBlock.by_shares``; "wide" has 3 heads, shared 2 + 1), context and
    query rows alike, and gives what row chunks give, up to float32 round-off."""
    from arenalite.models.tabicl.layers import AttentionBlock

    info = CASES[name]
    f = np.load(DATA / f"stages_{name}.npz")
    n = info["context_rows"]
    net = tabicl.load(str(DATA / info["checkpoint"]))
    threads.set_count(2)
    counts = []
    whole = AttentionBlock.by_shares

    def spy(self, q_source, kv, n_shares):
        counts.append((kv is None, n_shares))
        return whole(self, q_source, kv, n_shares)

    monkeypatch.setattr(AttentionBlock, "by_shares", spy)
    shared = tabicl.stages(net, f["x"][:n], f["y_train"], f["x"][n:])
    layers = len(net.icl.blocks)
    assert counts.count((True, 2)) == layers - 1 and counts.count((False, 2)) == layers
    monkeypatch.setattr(threads, "SMALL_STAGE_ROWS", 0)  # row chunks again
    counts.clear()
    chunked = tabicl.stages(net, f["x"][:n], f["y_train"], f["x"][n:])
    assert counts == []
    for stage in ("icl", "output"):
        scale = max(1.0, float(np.abs(chunked[stage]).max()))
        np.testing.assert_allclose(shared[stage], chunked[stage], atol=1e-6 * scale,
                                   rtol=1e-6, err_msg=stage)
