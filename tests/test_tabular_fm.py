"""tabular_fm: each stage's exact definition, parity with the committed torch outputs, limits,
bad weights files, a user-sized model, and KV-cache reuse independent of the batch size."""

from __future__ import annotations

import json
import math
import struct
from pathlib import Path

import numpy as np
import pytest

from arenalite import datasets, models
from arenalite.models import safetensors, tabular_fm
from arenalite.models.preprocess import prepare

DATA = Path(__file__).parent / "data"
SMALL = DATA / "tabular_fm_small.safetensors"
TORCH = DATA / "tabular_fm_torch.npz"
CONFIG = {"d_model": 8, "n_heads": 2, "n_layers": 1, "d_mlp": 6, "max_features": 5,
          "max_classes": 3, "max_context": 16, "ln_eps": 1e-5}


def fm(weights) -> dict:
    return {"name": "tabular_fm", "weights": weights}


def zero_weights(config: dict) -> dict[str, np.ndarray]:
    return {k: np.zeros(s, np.float32) for k, s in tabular_fm.tensor_shapes(config).items()}


# ---- stages on hand-checkable inputs -------------------------------------------------------

def test_layer_norm_gelu_softplus_by_hand():
    x = np.array([[1.0, 3.0]], np.float32)
    out = tabular_fm.layer_norm(x, np.array([2.0, 1.0], np.float32),
                                np.array([0.5, 0.0], np.float32), 0.0)
    assert np.allclose(out, [[-1.5, 1.0]])  # (x - 2) / 1 · g + b
    assert tabular_fm.gelu(np.float32(0.0)) == 0.0
    assert np.isclose(tabular_fm.gelu(np.float32(1.0)),
                      0.5 * (1 + math.tanh(math.sqrt(2 / math.pi) * 1.044715)), atol=1e-7)
    assert np.isclose(tabular_fm.softplus(np.float32(0.0)), math.log(2.0))
    assert np.isfinite(tabular_fm.softplus(np.float32(500.0)))


def test_embed_is_cell_value_times_w_plus_b_plus_feature_identity():
    t = zero_weights(CONFIG)
    t["cell.w"][:] = np.arange(8)
    t["cell.b"][:] = 1.0
    t["feature.emb"][:] = np.arange(5)[:, None] * 10.0
    model = tabular_fm.Model(models.Weights(tabular_fm.check_config(CONFIG), t))
    target = np.full((2, 8), 7.0, np.float32)
    h = tabular_fm.embed(model, np.array([[2.0, -1.0], [0.0, 0.5]], np.float32), target)
    assert h.shape == (2, 3, 8)
    assert np.allclose(h[0, 0], 2.0 * np.arange(8) + 1.0)
    assert np.allclose(h[0, 1], -1.0 * np.arange(8) + 1.0 + 10.0)
    assert np.allclose(h[:, 2], 7.0)  # the target token


def test_target_tokens_label_embedding_regression_scale_and_unknown():
    t = zero_weights(CONFIG)
    t["target.cls"][:] = np.arange(3)[:, None]
    t["target.reg.w"][:] = 2.0
    t["target.reg.b"][:] = 0.5
    t["target.unknown"][:] = -4.0
    model = tabular_fm.Model(models.Weights(tabular_fm.check_config(CONFIG), t))
    x = np.zeros((3, 1))
    cls = prepare(x, np.array([2, 0, 1]), x[:2], "multiclass", 3)
    ctx, q = tabular_fm.target_tokens(model, cls, 2)
    assert np.allclose(ctx[:, 0], [2, 0, 1]) and np.allclose(q, -4.0)
    reg = prepare(x, np.array([1.0, 2.0, 3.0]), x[:1], "regression")
    ctx, _ = tabular_fm.target_tokens(model, reg, 1)
    z = (np.array([1.0, 2.0, 3.0]) - 2.0) / np.std([1.0, 2.0, 3.0])
    assert np.allclose(ctx[:, 0], 2.0 * z + 0.5, atol=1e-6)


def test_attention_with_zero_queries_keys_averages_values():
    """q = k = 0 gives uniform weights: feature attention adds the row's mean value vector;
    row attention adds the mean over context rows only, whatever the query rows hold."""
    t = zero_weights(CONFIG)
    for part in ("fa", "ra"):
        t[f"layers.0.{part}.ln.g"][:] = 1.0
        t[f"layers.0.{part}.v.w"][:] = np.eye(8)
        t[f"layers.0.{part}.o.w"][:] = np.eye(8)
    model = tabular_fm.Model(models.Weights(tabular_fm.check_config(CONFIG), t))
    rng = np.random.default_rng(0)
    h = rng.normal(size=(4, 3, 8)).astype(np.float32)
    ln = tabular_fm.layer_norm(h, np.ones(8, np.float32), np.zeros(8, np.float32), 1e-5)
    fa = tabular_fm.feature_attention(model, 0, h)
    assert np.allclose(fa, h + ln.mean(axis=1, keepdims=True), atol=1e-6)
    k, v = tabular_fm.row_kv(model, 0, h[:2])
    assert k.shape == (3, 2, 2, 4)  # tokens, heads, context rows, d_h
    ra = tabular_fm.row_attention(model, 0, h, k, v)
    assert np.allclose(ra, h + ln[:2].mean(axis=0, keepdims=True), atol=1e-6)


def test_head_gaussian_mean_and_softplus_spread_in_target_units():
    t = zero_weights(CONFIG)
    t["head.ln.b"][:] = 1.0  # LN of anything is then b = 1
    t["head.reg.w"][0, 0] = 0.5  # z = ones, so z @ w[:, 0] = 0.5
    t["head.reg.b"][:] = [0.25, 0.0]
    model = tabular_fm.Model(models.Weights(tabular_fm.check_config(CONFIG), t))
    y = np.array([10.0, 14.0])
    prep = prepare(np.zeros((2, 1)), y, np.zeros((1, 1)), "regression")
    out = tabular_fm.head(model, np.zeros((1, 3, 8), np.float32), prep)
    assert np.allclose(out, [[0.75 * 2.0 + 12.0, (math.log(2.0) + 1e-3) * 2.0]], atol=1e-6)


# ---- parity with torch ---------------------------------------------------------------------

CASES = [("small_bin", "binary", 2), ("small_multi", "multiclass", 5),
         ("small_reg", "regression", None), ("small_ctx", "binary", 2)]


@pytest.mark.parametrize(("case", "task", "n_classes"), CASES)
def test_numpy_matches_committed_torch_outputs(case, task, n_classes):
    d = np.load(TORCH)
    xtr, ytr, xte = d[f"{case}.x_train"], d[f"{case}.y_train"], d[f"{case}.x_test"]
    if task == "regression":
        mean, std = models.predict_distribution(fm(SMALL), xtr, ytr, xte)
        scale = np.std(ytr)
        assert np.abs((mean - d[f"{case}.out"][:, 0]) / scale).max() < 1e-5
        assert np.abs((std - d[f"{case}.out"][:, 1]) / scale).max() < 1e-5
    else:
        out = models.predict(fm(SMALL), xtr, ytr, xte, task, n_classes)
        assert np.abs(out - d[f"{case}.out"]).max() < 1e-5


@pytest.mark.parametrize("name", ["iris", "diabetes"])
def test_shipped_weights_match_committed_torch_outputs(name):
    ds = datasets.load(name)
    x, y = ds.X[:120], ds.y[:120]
    expected = np.load(TORCH)[f"shipped_{name}.out"]
    if ds.task == "regression":
        mean, std = models.predict_distribution(fm(None), x[:90], y[:90], x[90:])
        scale = np.std(y[:90])
        assert np.abs((np.stack([mean, std], 1) - expected) / scale).max() < 1e-5
    else:
        out = models.predict(fm(None), x[:90], y[:90], x[90:], ds.task, ds.n_classes)
        assert np.abs(out - expected).max() < 1e-5


# ---- KV cache and batching -----------------------------------------------------------------

def test_kv_cache_output_identical_for_any_query_batching():
    rng = np.random.default_rng(1)
    xtr, ytr = rng.normal(size=(50, 6)), rng.integers(0, 3, 50)
    xte = rng.normal(size=(131, 6))
    whole = models.predict(fm(SMALL), xtr, ytr, xte, "multiclass", 3)
    for cuts in ([1], [63, 64, 65], [7, 70, 130]):
        parts = np.split(np.arange(131), cuts)
        pieces = [models.predict(fm(SMALL), xtr, ytr, xte[p], "multiclass", 3) for p in parts]
        # bit-identical where the BLAS kernel's row results do not depend on their place in
        # the block; float32 round-off (≤ 3e-7) with OpenBLAS on AMD EPYC
        np.testing.assert_allclose(np.concatenate(pieces), whole, rtol=0, atol=2e-6)


def test_cached_pass_equals_uncached_reference():
    rng = np.random.default_rng(2)
    xtr, ytr = rng.normal(size=(30, 4)), rng.normal(size=30)
    xte = rng.normal(size=(9, 4))
    model = tabular_fm.Model(tabular_fm.read_weights(SMALL))
    prep = prepare(xtr, ytr, xte, "regression")
    cached, timings = tabular_fm.forward(model, prep)
    assert np.allclose(cached, tabular_fm.forward_uncached(model, prep), rtol=1e-5, atol=1e-5)
    assert len(timings["layers"]) == model.config["n_layers"]


def test_query_rows_do_not_change_the_context_or_each_other():
    rng = np.random.default_rng(3)
    xtr, ytr = rng.normal(size=(40, 3)), rng.integers(0, 2, 40)
    xte = rng.normal(size=(5, 3))
    base = models.predict(fm(SMALL), xtr, ytr, xte, "binary")
    moved = xte.copy()
    moved[1:] = 100.0
    assert np.array_equal(models.predict(fm(SMALL), xtr, ytr, moved, "binary")[0], base[0])


# ---- limits --------------------------------------------------------------------------------

def test_limits_name_the_limit_and_the_value():
    small = tabular_fm.read_weights(SMALL).config
    rng = np.random.default_rng(0)
    f = small["max_features"] + 1
    with pytest.raises(ValueError, match=rf"tabular_fm takes at most {f - 1} features "
                                         rf"\(the weights' max_features\), got {f}"):
        models.predict(fm(SMALL), rng.normal(size=(10, f)), rng.integers(0, 2, 10),
                       rng.normal(size=(2, f)), "binary")
    c = small["max_classes"] + 1
    with pytest.raises(ValueError, match=rf"at most {c - 1} classes \(the weights' "
                                         rf"max_classes\), got {c}"):
        models.predict(fm(SMALL), rng.normal(size=(10, 2)), np.arange(10) % c,
                       rng.normal(size=(2, 2)), "multiclass", c)


def test_shipped_manifest_limits_at_least_the_promised_ones():
    config = tabular_fm.read_weights().config
    assert config["max_features"] >= 100
    assert config["max_classes"] >= 10
    assert config["max_context"] >= 1024


def lowbias32(x: int) -> int:
    """Wellons' lowbias32 in plain Python integers (the documented rule)."""
    m = 0xFFFFFFFF
    x &= m
    x ^= x >> 16
    x = (x * 0x7FEB352D) & m
    x ^= x >> 15
    x = (x * 0x846CA68B) & m
    return x ^ (x >> 16)


def test_large_context_is_subsampled_by_the_documented_seeded_rule():
    keep = tabular_fm.context_rows(100, 64)
    assert int(tabular_fm.row_hash(np.array([0]))[0]) == 0
    hashes = [lowbias32(i) for i in range(100)]
    assert tabular_fm.row_hash(np.arange(100)).tolist() == hashes
    assert keep.tolist() == sorted(sorted(range(100), key=lambda i: (hashes[i], i))[:64])
    assert tabular_fm.context_rows(64, 64) is None
    rng = np.random.default_rng(4)
    xtr, ytr, xte = rng.normal(size=(100, 3)), rng.integers(0, 2, 100), rng.normal(size=(4, 3))
    kept = models.predict(fm(SMALL), xtr[keep], ytr[keep], xte, "binary")
    assert np.array_equal(models.predict(fm(SMALL), xtr, ytr, xte, "binary"), kept)


# ---- weights files -------------------------------------------------------------------------

def test_user_model_of_another_size_round_trips_and_runs(tmp_path):
    weights = tabular_fm.random_weights({**CONFIG, "d_model": 12, "n_heads": 3, "n_layers": 2},
                                        seed=5)
    path = tabular_fm.write_weights(tmp_path / "mine.safetensors", weights.config,
                                    weights.tensors)
    back = tabular_fm.read_weights(path)
    assert back.config == weights.config
    assert all(np.array_equal(back[k], weights[k]) for k in weights.tensors)
    rng = np.random.default_rng(0)
    out = models.predict(fm(str(path)), rng.normal(size=(12, 5)), np.arange(12) % 3,
                         rng.normal(size=(4, 5)), "multiclass", 3)
    assert out.shape == (4, 3) and np.allclose(out.sum(1), 1.0)


def header_and_buffer(path: Path) -> tuple[dict, bytes]:
    raw = path.read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    return json.loads(raw[8:8 + n]), raw[8 + n:]


def rewrite(path: Path, header: dict, buffer: bytes) -> None:
    text = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(text)) + text + buffer)


@pytest.fixture
def user_file(tmp_path):
    w = tabular_fm.random_weights(CONFIG)
    return tabular_fm.write_weights(tmp_path / "w.safetensors", w.config, w.tensors)


def test_wrong_shape_names_the_tensor(user_file):
    header, buffer = header_and_buffer(user_file)
    header["cell.w"]["shape"] = [2, 4]
    rewrite(user_file, header, buffer)
    with pytest.raises(ValueError, match=r"tensor 'cell.w' has shape \[2, 4\], expected \[8\]"):
        tabular_fm.read_weights(user_file)


def test_truncated_buffer_names_the_tensor(user_file):
    header, buffer = header_and_buffer(user_file)
    last = max((k for k in header if k != "__metadata__"),
               key=lambda k: header[k]["data_offsets"][1])
    rewrite(user_file, header, buffer[:-4])
    with pytest.raises(ValueError, match=rf"tensor '{last}' ends at byte .* truncated"):
        tabular_fm.read_weights(user_file)


def test_truncated_header_is_rejected(user_file):
    user_file.write_bytes(user_file.read_bytes()[:20])
    with pytest.raises(ValueError, match="declares a .*-byte header"):
        tabular_fm.read_weights(user_file)


def test_unknown_dtype_names_the_tensor(user_file):
    header, buffer = header_and_buffer(user_file)
    header["head.reg.b"]["dtype"] = "BF16"
    rewrite(user_file, header, buffer)
    with pytest.raises(ValueError, match=r"tensor 'head.reg.b' has dtype 'BF16'"):
        tabular_fm.read_weights(user_file)


def test_missing_tensor_and_wrong_model_are_rejected(user_file):
    header, buffer = header_and_buffer(user_file)
    del header["target.unknown"]
    rewrite(user_file, header, buffer)
    with pytest.raises(ValueError, match=r"missing \['target.unknown'\]"):
        tabular_fm.read_weights(user_file)
    header, buffer = header_and_buffer(user_file)
    header["__metadata__"]["model"] = "icl_transformer"
    rewrite(user_file, header, buffer)
    with pytest.raises(ValueError, match="metadata 'model' must be 'tabular_fm'"):
        tabular_fm.read_weights(user_file)


def test_non_finite_values_name_the_tensor(user_file):
    header, buffer = header_and_buffer(user_file)
    start = header["cell.b"]["data_offsets"][0]
    buffer = buffer[:start] + np.float32(np.nan).tobytes() + buffer[start + 4:]
    rewrite(user_file, header, buffer)
    with pytest.raises(ValueError, match="tensor 'cell.b' has non-finite values"):
        tabular_fm.read_weights(user_file)


def test_reader_converts_f64_and_f16_to_float32(tmp_path):
    arr = np.arange(6, dtype="<f8").reshape(2, 3)
    text = json.dumps({"a": {"dtype": "F64", "shape": [2, 3], "data_offsets": [0, 48]},
                       "b": {"dtype": "F16", "shape": [2], "data_offsets": [48, 52]}}).encode()
    path = tmp_path / "x.safetensors"
    path.write_bytes(struct.pack("<Q", len(text)) + text + arr.tobytes()
                     + np.array([1.5, -2], "<f2").tobytes())
    _, tensors = safetensors.read(path)
    assert tensors["a"].dtype == np.float32 and np.array_equal(tensors["a"], arr)
    assert tensors["b"].tolist() == [1.5, -2.0]


def test_spread_only_for_models_that_have_one():
    with pytest.raises(ValueError, match="predicts no spread"):
        models.predict_distribution({"name": "knn"}, np.zeros((3, 1)), np.zeros(3),
                                    np.zeros((1, 1)))
