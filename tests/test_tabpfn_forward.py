"""TabPFN v3's numpy forward against the tabpfn package (committed fixtures, no torch).

``tests/data/tabpfn/forward_<case>.npz`` hold the package's own stage outputs
(``TabPFNV3.forward`` on the CPU in float32, forward hooks; scripts/make_tabpfn_fixtures.py)
on the random-weight v3 checkpoints: a classifier (7 of 10 classes in the context), one
with NaN/±inf cells (all 10 classes), a regressor, one with 2 features and one with a
single feature (fewer than a feature group of 3), and the wide checkpoint (12 classes,
feature groups of 2, grouped ICL keys/values with 1 KV head for test rows, the decoder's
softmax scaling, no NaN indicators) with NaN/±inf cells.

Every stage within 1e-5 absolute (the largest tensors reach |14|; the package and numpy
differ by ≤ 5e-6 there).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from arenalite.models.tabpfn import cells, column, icl, row
from arenalite.models.tabpfn import model as tabpfn

DATA = Path(__file__).parent / "data" / "tabpfn"
CASES = json.loads((DATA / "forward.json").read_text())
TOL = 1e-5


def case(name: str):
    info = CASES[name]
    f = np.load(DATA / f"forward_{name}.npz")
    n = info["context_rows"]
    return info, f, n, tabpfn.load(DATA / info["checkpoint"])


def stage_names(f) -> list[str]:
    return [k for k in f.files if k not in ("x", "y_train")]


@pytest.mark.parametrize("name", list(CASES))
def test_every_stage_matches_the_package(name: str) -> None:
    info, f, n, net = case(name)
    out = tabpfn.stages(net, f["x"][:n], f["y_train"], f["x"][n:])
    names = stage_names(f)
    assert {"grouped", "column", "hidden_0", "row", "icl_0", "icl", "logits"} <= set(names)
    for stage in names:
        assert out[stage].shape == f[stage].shape, stage
        np.testing.assert_allclose(out[stage], f[stage], atol=TOL, rtol=0, err_msg=stage)


@pytest.mark.parametrize("name", list(CASES))
def test_forward_gives_the_package_logits(name: str) -> None:
    info, f, n, net = case(name)
    got = tabpfn.forward(net, f["x"][:n], f["y_train"], f["x"][n:])
    width = info["classes"] and net.config["max_num_classes"] or net.config["num_buckets"]
    assert got.shape == (info["query_rows"], width) and got.dtype == np.float32
    np.testing.assert_allclose(got, f["logits"], atol=TOL, rtol=0)


@pytest.mark.parametrize("name", ["classifier_nan_inf", "regressor", "wide_many_classes"])
def test_the_cache_gives_identical_rows_for_any_query_batch(name: str) -> None:
    _, f, n, net = case(name)
    context = tabpfn.fit_context(net, f["x"][:n], f["y_train"])
    frozen = cache_bytes(context)
    queries = f["x"][n:]
    whole = tabpfn.predict_queries(net, context, queries)
    np.testing.assert_allclose(whole, f["logits"], atol=TOL, rtol=0)
    for size in (1, 7):
        parts = [tabpfn.predict_queries(net, context, queries[i:i + size])
                 for i in range(0, len(queries), size)]
        assert_same_rows(np.concatenate(parts), whole, size)
    assert tabpfn.predict_queries(net, context, queries[:0]).shape == (0, whole.shape[1])
    assert cache_bytes(context) == frozen  # computed once, read only


def cache_bytes(context: tabpfn.Context) -> bytes:
    arrays = [context.scaler.impute, context.scaler.mean, context.scaler.std,
              *context.column.hidden, *(a for kv in context.column.kv for a in kv),
              *(a for kv in context.icl.kv for a in kv)]
    if context.decoder is not None:
        arrays += [context.decoder.keys, context.decoder.one_hot]
    return b"".join(a.tobytes() for a in arrays)


def assert_same_rows(got: np.ndarray, want: np.ndarray, what: object) -> None:
    """Rows equal up to float32 round-off (2e-6 of the outputs' scale): every query block
    has the same shape, so a row meets the same products whatever the batch, but the BLAS
    kernel's round-off for a row can depend on its place in the block (≤ 1e-6 here); a
    query leaking into another would move its row by orders of magnitude more."""
    scale = max(1.0, float(np.abs(want).max()))
    np.testing.assert_allclose(got, want, rtol=0, atol=2e-6 * scale, err_msg=str(what))


def test_the_cache_holds_what_query_rows_need() -> None:
    info, f, n, net = case("wide_many_classes")
    c = net.config
    context = tabpfn.fit_context(net, f["x"][:n], f["y_train"])
    features, e = info["features"], c["embed_dim"]
    heads, inds = c["dist_embed_num_heads"], c["dist_embed_num_inducing_points"]
    assert len(context.column.hidden) == c["dist_embed_num_blocks"]
    for h, (k, v) in zip(context.column.hidden, context.column.kv, strict=True):
        assert h.shape == (features, inds, e)
        assert k.shape == v.shape == (features, heads, inds, e // heads)
    d = e * c["feat_agg_num_cls_tokens"] // c["icl_num_heads"]
    assert len(context.icl.kv) == c["nlayers"]
    for k, v in context.icl.kv:  # only the test rows' KV heads
        assert k.shape == v.shape == (c["icl_num_kv_heads_test"], n, d)
        assert k.dtype == v.dtype == np.float32
    assert context.decoder.keys.shape == (c["decoder_num_heads"], n, c["decoder_head_dim"])
    assert context.decoder.one_hot.shape == (n, info["classes"])
    np.testing.assert_array_equal(context.scaler.impute[-1], 0.0)  # no finite context cell


def test_chunked_stages_equal_the_unchunked(monkeypatch: pytest.MonkeyPatch) -> None:
    _, f, n, net = case("wide_many_classes")
    want = tabpfn.stages(net, f["x"][:n], f["y_train"], f["x"][n:])
    for module in (column, row, icl):
        monkeypatch.setattr(module, "SCRATCH_FLOATS", 1)  # one column / row per chunk
    got = tabpfn.stages(net, f["x"][:n], f["y_train"], f["x"][n:])
    for stage in want:  # float32 round-off of the BLAS on other shapes
        scale = max(1.0, float(np.abs(want[stage]).max()))
        np.testing.assert_allclose(got[stage], want[stage], atol=1e-6 * scale, rtol=0,
                                   err_msg=stage)


def test_cells_indicators_imputation_and_groups() -> None:
    x = np.array([[1.0, np.nan, np.inf, 2.0], [3.0, -np.inf, 5.0, 2.0],
                  [5.0, 4.0, np.nan, 2.0]], dtype=np.float32)
    np.testing.assert_array_equal(cells.indicators(x)[:, 1:3], [[-2, 2], [4, 0], [0, -2]])
    scaler = cells.fit_scaler(x)
    np.testing.assert_allclose(scaler.impute, [3, 4, 5, 2])
    np.testing.assert_allclose(scaler.std, [2, 0 + 1, 1, 1])  # zero std counts as 1
    z = cells.standardise(scaler, x)
    assert np.isfinite(z).all() and np.all(z[:, 3] == 0)
    g = cells.group(np.arange(6, dtype=np.float32)[None, :2], 3)  # 2 features, group of 3
    np.testing.assert_array_equal(g[0], [[1, 0, 0], [0, 1, 1]])


def test_bad_targets_are_refused() -> None:
    _, f, n, net = case("classifier")
    x = f["x"][:n]
    with pytest.raises(ValueError, match="out of range"):
        tabpfn.fit_context(net, x, np.full(n, 10.0))
    with pytest.raises(ValueError, match="integers"):
        tabpfn.fit_context(net, x, np.full(n, 0.5))
    with pytest.raises(ValueError, match="finite"):
        tabpfn.fit_context(net, x, np.full(n, np.nan))
    context = tabpfn.fit_context(net, x, f["y_train"])
    with pytest.raises(ValueError, match="query rows must be"):
        tabpfn.predict_queries(net, context, f["x"][n:, :2])


@pytest.mark.parametrize(("kv_heads", "test_heads"), [(None, None), (2, None), (4, 2)])
def test_an_icl_layer_in_head_shares_equals_the_whole_layer(kv_heads, test_heads) -> None:
    """``ICLLayer.by_shares`` (the ICL's path for a few rows on several threads): shares of
    the key/value heads (with the query heads reading them) and of the hidden units, even
    or not, give the layer's output up to float32 round-off and its keys/values, with
    grouped heads and the query rows' fewer test heads."""
    from arenalite.models.tabpfn.checkpoint import random_checkpoint
    from arenalite.models.tabpfn.layers import norm

    config = {"embed_dim": 8, "nlayers": 1, "icl_num_heads": 4, "icl_num_kv_heads": kv_heads,
              "icl_num_kv_heads_test": test_heads, "dist_embed_num_blocks": 1,
              "feat_agg_num_blocks": 1, "dist_embed_num_heads": 2, "feat_agg_num_heads": 2,
              "dist_embed_num_inducing_points": 4, "max_num_classes": 3,
              "softmax_scaling_mlp_hidden_dim": 8}
    ck = random_checkpoint(config, seed=1)
    stage = tabpfn.TabPFNModel(ck.config, ck.tensors).icl
    layer = stage.layers[0]
    rng = np.random.default_rng(0)
    h, hq = (rng.normal(size=(n, 32)).astype(np.float32) for n in (30, 7))
    x, xq = norm(layer.block, "layernorm", h), norm(layer.block, "layernorm", hq)
    kv = layer.keys_values(x)
    test_kv = (kv[0][:stage.test_heads], kv[1][:stage.test_heads])
    whole, whole_queries = layer(h, x, kv), layer(hq, xq, test_kv)
    for n in (1, 2, 3, 4):
        got, got_kv = layer.by_shares(h, x, None, n)
        for got_part, want in zip(got_kv, kv, strict=True):
            np.testing.assert_allclose(got_part, want, rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(got, whole, rtol=1e-5, atol=1e-5, err_msg=str(n))
        got, same_kv = layer.by_shares(hq, xq, test_kv, n)
        assert same_kv is test_kv
        np.testing.assert_allclose(got, whole_queries, rtol=1e-5, atol=1e-5, err_msg=str(n))
