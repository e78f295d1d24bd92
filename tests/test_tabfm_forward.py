"""Google TabFM's numpy forward (``arenalite.models.tabfm``) against the package's torch model.

tests/data/tabfm/stages_<case>.npz hold every stage's output of ``tabfm`` 1.0.1's PyTorch
model in float32 on the random-weight checkpoints there (scripts/make_tabfm_fixtures.py;
binary, multiclass with padded columns, regression, fewer features than a group, one
active feature, another width and depth; categorical and missing cells), and the same
model's output in float64. No torch here.

Each stage is checked on the package's own input to it (so a stage's difference is its
own, 1e-5); the whole forward end to end is checked against the float64 output, where it
must be as close as the package's own float32 run is (float32 round-off grows through
the ~20 blocks of random weights to ~1e-5 in either implementation; see stages.json).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from arenalite.models import ops, threads
from arenalite.models.tabfm import cells, column, icl, model, read_checkpoint, row
from arenalite.models.tabfm.checkpoint import random_checkpoint

DATA = Path(__file__).parent / "data" / "tabfm"
CASES = json.loads((DATA / "stages.json").read_text())
TOL = 1e-5


def load(name: str):
    case = CASES[name]
    ck = read_checkpoint(DATA / case["checkpoint"], case["task"])
    f = dict(np.load(DATA / f"stages_{name}.npz"))
    return model.TabFMModel(ck.config, ck.tensors), f, len(f["y"])


def split(stage_out: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    return np.concatenate(stage_out)


@pytest.mark.parametrize("name", list(CASES))
def test_each_stage_matches_the_package_on_its_input(name: str) -> None:
    m, f, n = load(name)
    d, mask = int(f["d"]), f["cat_mask"][:int(f["d"])]
    x = f["x"][:, :d]
    got = {"cells": np.concatenate([cells.embed(m.cells, x[:n], mask, f["y"]),
                                    cells.embed(m.cells, x[n:], mask)])}
    c_out, cache = column.fit_context(m.column, f["cells"][:n])
    got["column"] = split((c_out, column.queries(m.column, cache, f["cells"][n:])))
    got["row"] = row.interact(m.row, model._with_cls(m, f["column"]))
    c_out, cache = column.fit_context(m.column_2, f["row"][:n])
    got["column_2"] = split((c_out, column.queries(m.column_2, cache, f["row"][n:])))
    got["row_2"] = row.interact(m.row_2, f["column_2"])
    y = f["y"] if m.is_classifier else f["y"].astype(np.float32)
    context, c_icl = icl.fit_context(m.icl, f["row_2"][:n], y, last=True)
    got["icl"] = split((c_icl, icl.query(m.icl, context, f["row_2"][n:])))
    got["output"] = m.decoder(f["icl"])
    for stage, value in got.items():
        np.testing.assert_allclose(value, f[stage], atol=TOL, rtol=0, err_msg=stage)


@pytest.mark.parametrize("name", list(CASES))
def test_the_whole_forward_is_as_close_to_exact_as_the_package(name: str) -> None:
    m, f, n = load(name)
    d = int(f["d"])
    out = model.stages(m, f["x"][:n], f["y"], f["x"][n:], d=d, cat_mask=f["cat_mask"])
    torch_error = np.abs(f["output"] - f["output64"]).max()
    numpy_error = np.abs(out["output"] - f["output64"]).max()
    assert numpy_error <= max(3 * torch_error, TOL), (numpy_error, torch_error)
    np.testing.assert_allclose(out["output"], f["output"], atol=3 * TOL, rtol=0)
    np.testing.assert_allclose(out["cells"], f["cells"], atol=TOL, rtol=0)
    logits, _ = model.forward(m, f["x"][:n], f["y"], f["x"][n:], d=d, cat_mask=f["cat_mask"])
    np.testing.assert_allclose(logits, out["output"][n:], atol=TOL, rtol=0)


@pytest.mark.parametrize("name", ["binary", "regression", "wide"])
def test_the_cache_gives_identical_rows_for_any_query_batch(name: str) -> None:
    """Query rows through one context's caches, in batches of 1, 7 and all: the same bits."""
    m, f, n = load(name)
    d = int(f["d"])
    context = model.fit_context(m, f["x"][:n], f["y"], d=d, cat_mask=f["cat_mask"])
    queries = f["x"][n:]
    whole = model.predict_queries(m, context, queries)
    for size in (1, 7):
        parts = [model.predict_queries(m, context, queries[i:i + size])
                 for i in range(0, len(queries), size)]
        np.testing.assert_array_equal(np.concatenate(parts), whole)
    np.testing.assert_allclose(whole, f["output"][n:], atol=3 * TOL, rtol=0)


@pytest.mark.parametrize("name", ["binary", "regression"])
def test_the_streamed_icl_stage_gives_the_cached_bits(name: str,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Past the cache budget the ICL keys and values are made block by block per call:
    the same bits as the kept cache."""
    m, f, n = load(name)
    args = (m, f["x"][:n], f["y"], f["x"][n:])
    kept, _ = model.forward(*args, d=int(f["d"]), cat_mask=f["cat_mask"])
    monkeypatch.setattr(model, "ICL_CACHE_BYTES", 0)
    context = model.fit_context(m, f["x"][:n], f["y"], d=int(f["d"]), cat_mask=f["cat_mask"])
    assert context.icl.kv is None and context.icl.h is not None
    streamed = model.predict_queries(m, context, f["x"][n:])
    np.testing.assert_array_equal(streamed, kept)
    one = [model.predict_queries(m, context, f["x"][i:i + 1]) for i in range(n, n + 3)]
    np.testing.assert_array_equal(np.concatenate(one), kept[:3])


def test_padded_columns_change_nothing() -> None:
    """Columns past d (the batch's padding) are never read, whatever they hold."""
    m, f, n = load("multiclass_padded")
    d = int(f["d"])
    x = f["x"].copy()
    x[:, d:] = np.random.default_rng(0).normal(size=(x.shape[0], x.shape[1] - d))
    mask = f["cat_mask"].copy()
    mask[d:] = True
    a, _ = model.forward(m, f["x"][:n], f["y"], f["x"][n:], d=d, cat_mask=f["cat_mask"])
    b, _ = model.forward(m, x[:n], f["y"], x[n:], d=d, cat_mask=mask)
    np.testing.assert_array_equal(a, b)


@pytest.mark.needs_threads
def test_threads_change_round_off_only() -> None:
    m, f, n = load("wide")
    d = int(f["d"])
    try:
        threads.set_count(1)
        one, _ = model.forward(m, f["x"][:n], f["y"], f["x"][n:], d=d, cat_mask=f["cat_mask"])
        threads.set_count(4)
        four, _ = model.forward(m, f["x"][:n], f["y"], f["x"][n:], d=d, cat_mask=f["cat_mask"])
    finally:
        threads.set_count(None)
    np.testing.assert_allclose(one, four, atol=TOL, rtol=0)


def test_chunked_stages_equal_the_unchunked(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tiny scratch budgets (one row or column per chunk) give the same outputs."""
    m, f, n = load("binary")
    want = model.stages(m, f["x"][:n], f["y"], f["x"][n:], cat_mask=f["cat_mask"])
    for mod in (cells, column, row):
        monkeypatch.setattr(mod, "SCRATCH_FLOATS", 1)
    monkeypatch.setattr(ops, "ICL_SCRATCH_FLOATS", 1)  # the ICL stage's row chunks
    got = model.stages(m, f["x"][:n], f["y"], f["x"][n:], cat_mask=f["cat_mask"])
    for stage in want:  # round-off of other BLAS shapes, grown through the blocks
        scale = max(1.0, float(np.abs(want[stage]).max()))
        np.testing.assert_allclose(got[stage], want[stage], atol=TOL * scale, rtol=0,
                                   err_msg=stage)


def test_timings_cover_every_stage() -> None:
    m, f, n = load("binary")
    out, timings = model.forward(m, f["x"][:n], f["y"], f["x"][n:])
    assert out.shape == (len(f["x"]) - n, m.max_classes)
    assert len(timings["column"]) == 2 and len(timings["row"]) == 2
    assert len(timings["icl"]) == m.config["icl_num_blocks"]
    parts = timings["cells"] + sum(timings["column"]) + sum(timings["row"]) \
        + sum(timings["icl"]) + timings["decoder"]
    assert timings["total"] == pytest.approx(parts)


def test_bad_inputs_are_refused() -> None:
    m, f, n = load("binary")
    x, y = f["x"], f["y"]
    with pytest.raises(ValueError, match="class target 7"):
        model.forward(m, x[:n], np.where(np.arange(n) == 3, 7, y), x[n:])
    with pytest.raises(ValueError, match="row 2"):
        model.forward(m, x[:n], np.where(np.arange(n) == 2, 0.5, y), x[n:])
    with pytest.raises(ValueError, match="missing or infinite"):
        model.forward(m, x[:n], np.where(np.arange(n) == 1, np.nan, y), x[n:])
    with pytest.raises(ValueError, match="one target per context row"):
        model.forward(m, x[:n], y[:-1], x[n:])
    with pytest.raises(ValueError, match="d \\(active features\\)"):
        model.forward(m, x[:n], y, x[n:], d=0)
    with pytest.raises(ValueError, match="cat_mask"):
        model.forward(m, x[:n], y, x[n:], cat_mask=np.zeros(3, bool))
    with pytest.raises(ValueError, match="x_query"):
        model.forward(m, x[:n], y, x[n:, :2])


def test_random_regression_checkpoint_runs_end_to_end() -> None:
    ck = random_checkpoint({"embed_dim": 8, "is_classifier": False, "num_freq": 4}, seed=5)
    m = model.TabFMModel(ck.config, ck.tensors)
    rng = np.random.default_rng(1)
    x = rng.normal(size=(20, 3)).astype(np.float32)
    out, _ = model.forward(m, x[:15], rng.normal(size=15), x[15:])
    assert out.shape == (5, 1) and np.isfinite(out).all()


@pytest.mark.parametrize("name", ["binary", "wide"])
def test_an_icl_block_in_head_shares_equals_the_whole_block(name: str) -> None:
    """Shares of the heads and of the SwiGLU's hidden units, even and uneven, summed and
    put through the block's norms after the attention and the feed-forward: the whole
    block up to float32 round-off (whether the pool runs them or not)."""
    m, _, _ = load(name)
    block = m.icl.blocks[0]
    rng = np.random.default_rng(0)
    width = block.block["pre_attn_ln.weight"].shape[0]
    rows, context = rng.normal(size=(40, width)), rng.normal(size=(70, width))
    rows, context = rows.astype(np.float32), context.astype(np.float32)
    kv = block.cache(context)
    whole = block(rows, kv)
    scale = max(1.0, float(np.abs(whole).max()))
    for n in sorted({2, 3, m.icl.heads} - {1}):
        np.testing.assert_allclose(block.by_shares(rows, kv, n), whole,
                                   atol=1e-5 * scale, rtol=0, err_msg=f"{n} shares")


@pytest.mark.needs_threads
def test_a_small_icl_runs_in_head_shares_on_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    """On two threads the fixtures' small context and query blocks go through the ICL in
    shares of heads, and the output is the row chunks' up to float32 round-off."""
    m, f, n = load("binary")
    args = (m, f["x"][:n], f["y"], f["x"][n:])
    used = []
    by_shares = icl.AttentionBlock.by_shares
    monkeypatch.setattr(icl.AttentionBlock, "by_shares",
                        lambda self, *a: used.append(1) or by_shares(self, *a))
    try:
        threads.set_count(2)
        shared, _ = model.forward(*args, d=int(f["d"]), cat_mask=f["cat_mask"])
        assert len(used) >= 2 * len(m.icl.blocks) - 1  # context and query rows
        monkeypatch.setattr(threads, "SMALL_STAGE_ROWS", 0)  # row chunks again
        chunked, _ = model.forward(*args, d=int(f["d"]), cat_mask=f["cat_mask"])
    finally:
        threads.set_count(None)
    np.testing.assert_allclose(shared, chunked, atol=TOL, rtol=0)
