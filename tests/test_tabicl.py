"""TabICL's numpy reference against the tabicl package (committed fixtures, no torch).

``tests/data/tabicl/stages_<case>.npz`` hold the package's own stage outputs and its
wrappers' predictions on random-weight checkpoints (scripts/make_tabicl_fixtures.py);
the cases cover a classifier, a regressor, more than 10 classes (the class tree and
mixed-radix digits), fewer features than a feature group, and a non-default width and
depth.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from arenalite import models
from arenalite.models import ops, tabicl
from arenalite.models.tabicl import column, icl, row
from arenalite.models.tabicl.model import fit_context, predict_queries

DATA = Path(__file__).parent / "data" / "tabicl"
CASES = json.loads((DATA / "stages.json").read_text())
TOL = 1e-5


def case(name: str):
    info = CASES[name]
    f = np.load(DATA / f"stages_{name}.npz")
    n = info["context_rows"]
    task = ("regression" if info["classes"] == 0
            else "binary" if info["classes"] == 2 else "multiclass")
    y = f["y_train"] if task == "regression" else f["y_train"].astype(np.int64)
    return info, f, n, task, y, str(DATA / info["checkpoint"])


@pytest.mark.parametrize("name", list(CASES))
def test_every_stage_matches_the_package(name: str) -> None:
    info, f, n, _, _, path = case(name)
    out = tabicl.stages(tabicl.load(path), f["x"][:n], f["y_train"], f["x"][n:])
    for stage in ("column", "row", "output"):
        assert out[stage].shape == f[stage].shape, stage
        np.testing.assert_allclose(out[stage], f[stage], atol=TOL, rtol=0, err_msg=stage)


@pytest.mark.parametrize("name", list(CASES))
def test_predict_matches_the_wrappers(name: str) -> None:
    info, f, n, task, y, path = case(name)
    got = models.predict({"name": "tabicl", "weights": path}, f["x"][:n].astype(np.float64), y,
                         f["x"][n:].astype(np.float64), task)
    if task == "regression":  # TabICLRegressor.predict, in the target's units (~10 here)
        np.testing.assert_allclose(got, f["wrapper"], atol=TOL * 10, rtol=0)
    else:  # TabICLClassifier.predict_proba
        np.testing.assert_allclose(got, f["wrapper"], atol=TOL, rtol=0)
        np.testing.assert_allclose(got.sum(axis=1), 1.0, atol=1e-6)


@pytest.mark.parametrize("name", ["binary", "many_classes", "regression"])
def test_kv_caches_give_identical_rows_for_any_query_batch(name: str) -> None:
    _, f, n, _, _, path = case(name)
    net = tabicl.load(path)
    context = fit_context(net, f["x"][:n], f["y_train"])
    queries = f["x"][n:]
    whole = predict_queries(net, context, queries)
    for size in (1, 7):
        parts = [predict_queries(net, context, queries[i:i + size])
                 for i in range(0, len(queries), size)]
        assert_same_rows(np.concatenate(parts), whole, size)
    out, timings = tabicl.forward(net, f["x"][:n], f["y_train"], queries)
    assert_same_rows(out, whole, "forward")
    assert len(timings["layers"]) == len(net.row.blocks) + len(net.icl.blocks)
    assert timings["total"] == pytest.approx(
        timings["embed"] + sum(timings["layers"]) + timings["head"])


def assert_same_rows(got: np.ndarray, want: np.ndarray, what: object) -> None:
    """Rows equal up to float32 round-off (2e-6 of the outputs' scale): bit-identical where
    the BLAS kernel's result for a row does not depend on its place in the block, a few
    ulps where it does (OpenBLAS on AMD EPYC); a query leaking into another moves its
    row by orders of magnitude more."""
    scale = max(1.0, float(np.abs(want).max()))
    np.testing.assert_allclose(got, want, rtol=0, atol=2e-6 * scale, err_msg=str(what))


def test_column_cache_holds_the_hidden_points_per_block() -> None:
    _, f, n, _, _, path = case("wide")
    net = tabicl.load(path)
    context = fit_context(net, f["x"][:n], f["y_train"])
    (per_pass,) = context.column.passes
    heads, inds = net.config["col_nhead"], net.config["col_num_inds"]
    d_head = net.config["embed_dim"] // heads
    assert len(per_pass) == net.config["col_num_blocks"]
    for k, v in per_pass:
        assert k.shape == v.shape == (f["x"].shape[1], heads, inds, d_head)
    assert len(context.icl.kv) == net.config["icl_num_blocks"]
    assert context.icl.kv[0][0].shape[-2] == n  # the context rows' keys, per layer


def test_many_classes_use_digits_and_the_tree() -> None:
    _, f, n, _, y, path = case("many_classes")
    net = tabicl.load(path)
    assert column.mixed_radix_bases(13, 10) == [4, 4]
    assert len(column.target_passes(y.astype(np.float32), 10)) == 2
    context = fit_context(net, f["x"][:n], f["y_train"])
    assert context.icl is None and len(context.tree.children) == 2
    assert sorted(np.concatenate([c.classes for c in context.tree.children])) == list(range(13))
    assert icl.class_groups(13, 10).tolist() == [0] * 7 + [1] * 6


def test_chunked_stages_equal_the_unchunked(monkeypatch: pytest.MonkeyPatch) -> None:
    _, f, n, _, _, path = case("wide")
    net = tabicl.load(path)
    want = tabicl.stages(net, f["x"][:n], f["y_train"], f["x"][n:])
    for module, floats in ((column, 1), (row, 1)):
        monkeypatch.setattr(module, "SCRATCH_FLOATS", floats)  # one column / row per chunk
    monkeypatch.setattr(ops, "ICL_SCRATCH_FLOATS", 1)  # the ICL stage's row chunks
    got = tabicl.stages(net, f["x"][:n], f["y_train"], f["x"][n:])
    for stage in ("column", "row", "icl", "output"):
        scale = max(1.0, float(np.abs(want[stage]).max()))  # float32 round-off of the BLAS
        np.testing.assert_allclose(got[stage], want[stage], atol=1e-6 * scale, rtol=1e-6,
                                   err_msg=stage)


def test_regression_distribution_gives_the_mean_and_a_spread() -> None:
    _, f, n, _, y, path = case("regression")
    model = {"name": "tabicl", "weights": path}
    x_train, x_test = f["x"][:n].astype(np.float64), f["x"][n:].astype(np.float64)
    mean, spread = models.predict_distribution(model, x_train, y, x_test)
    np.testing.assert_allclose(mean, models.predict(model, x_train, y, x_test, "regression"))
    assert np.all(np.isfinite(spread)) and np.all(spread > 0)


def test_a_class_missing_from_the_context_gets_zero() -> None:
    _, f, n, _, y, path = case("multiclass_two_features")
    p = models.predict({"name": "tabicl", "weights": path, "n_estimators": 2},
                       f["x"][:n], y, f["x"][n:], "multiclass", n_classes=5)
    assert p.shape == (9, 5)
    assert np.all(p[:, 3:] == 0) and np.allclose(p.sum(axis=1), 1)


def test_parameters_reach_the_ensemble() -> None:
    _, f, n, task, y, path = case("binary")
    x_train, x_test = f["x"][:n], f["x"][n:]
    one = models.predict({"name": "tabicl", "weights": path, "n_estimators": 1},
                         x_train, y, x_test, task)
    two = models.predict({"name": "tabicl", "weights": path, "n_estimators": 2,
                          "softmax_temperature": 0.5}, x_train, y, x_test, task)
    assert one.shape == two.shape == (17, 2) and not np.allclose(one, two)
    assert models.model_label({"name": "tabicl", "weights": path, "n_estimators": 2}) == (
        f"tabicl(weights={path}, n_estimators=2)")


def test_without_weights_one_message_says_where_they_come_from() -> None:
    x = np.random.default_rng(0).normal(size=(12, 3))
    y = np.arange(12) % 2
    with pytest.raises(ValueError) as caught:
        models.predict({"name": "tabicl"}, x[:8], y[:8], x[8:], "binary")
    text = str(caught.value)
    assert "jingang/TabICL" in text and "tabicl-classifier-v2-20260212.ckpt" in text
    assert "arenalite convert tabicl" in text
    with pytest.raises(ValueError, match="'nowhere.ckpt' does not exist; download"):
        models.predict({"name": "tabicl", "weights": "nowhere.ckpt"}, x[:8], y[:8], x[8:],
                       "binary")


def test_the_checkpoint_decides_the_task() -> None:
    x = np.random.default_rng(1).normal(size=(20, 3))
    with pytest.raises(ValueError, match="is a TabICL classifier .* needs a TabICL regressor"):
        models.predict({"name": "tabicl", "weights": str(DATA / "classifier_small.ckpt")},
                       x[:15], x[:15, 0], x[15:], "regression")
    with pytest.raises(ValueError, match="is a TabICL regressor .* needs a TabICL classifier"):
        models.predict({"name": "tabicl", "weights": str(DATA / "regressor_small.ckpt")},
                       x[:15], np.arange(15) % 2, x[15:], "binary")


def test_a_bad_checkpoint_is_refused_through_predict() -> None:
    x = np.random.default_rng(2).normal(size=(20, 3))
    with pytest.raises(ValueError, match="bad_shape.ckpt"):
        models.predict({"name": "tabicl", "weights": str(DATA / "bad_shape.ckpt")},
                       x[:15], np.arange(15) % 2, x[15:], "binary")


def test_bad_parameters_are_named() -> None:
    with pytest.raises(ValueError, match="tabicl parameter 'n_estimators' must be an integer ≥ 1"):
        models.check_model({"name": "tabicl", "n_estimators": 0})
    with pytest.raises(ValueError, match="'softmax_temperature' must be a finite number > 0"):
        models.check_model({"name": "tabicl", "softmax_temperature": 0})


@pytest.mark.parametrize("kind", ["none", "ssmax", "ssmax-mlp", "ssmax-mlp-elementwise",
                                  "qassmax-mlp", "qassmax-mlp-elementwise"])
def test_a_block_in_head_shares_equals_the_whole_block(kind: str) -> None:
    """``by_shares`` (the ICL's path for a few rows on several threads): shares of the heads
    and hidden units, even or not, give the block's output up to float32 round-off, and
    the keys/values the whole block would cache, for every SSMax kind."""
    from arenalite.models.tabicl.checkpoint import random_checkpoint
    from arenalite.models.tabicl.model import TabICLModel

    config = {"embed_dim": 8, "row_num_cls": 3, "icl_nhead": 3, "icl_num_blocks": 1,
              "icl_ssmax": kind, "col_nhead": 2, "row_nhead": 2, "col_num_blocks": 1,
              "row_num_blocks": 1, "max_classes": 3}
    ck = random_checkpoint(config, seed=3)
    rng = np.random.default_rng(0)
    tensors = {name: rng.uniform(0.5, 2.0, t.shape).astype(np.float32)  # per head, not ones
               if name.endswith(".scales") else t for name, t in ck.tensors.items()}
    block = TabICLModel(ck.config, tensors).icl.blocks[0]
    assert block.can_share()
    context, queries = (rng.normal(size=(n, 24)).astype(np.float32) for n in (30, 7))
    kv = block.cache(context)
    whole_context, whole_queries = block(context, kv), block(queries, kv)
    for n in (1, 2, 3):  # 3 heads: shares of 3, 2 + 1 and 1 + 1 + 1
        got, got_kv = block.by_shares(context, None, n)
        for got_part, want in zip(got_kv, kv, strict=True):
            np.testing.assert_allclose(got_part, want, rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(got, whole_context, rtol=1e-5, atol=1e-5, err_msg=str(n))
        got, same_kv = block.by_shares(queries, kv, n)
        assert same_kv is kv
        np.testing.assert_allclose(got, whole_queries, rtol=1e-5, atol=1e-5, err_msg=str(n))
