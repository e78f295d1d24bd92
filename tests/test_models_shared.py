"""The modules every checkpoint model shares (docs/ARCHITECTURE.md, models/): the numpy
operators, the safetensors header reader, the state-dict check and random draw, and the
loader cache by path and modification time."""

from __future__ import annotations

import json
import math
import os
import struct

import numpy as np
import pytest
from scipy import special

from arenalite.models import checkpoint_cache, ops, safetensors, state_dict


def _x(shape=(3, 5, 8), seed=0) -> np.ndarray:
    return np.random.default_rng(seed).normal(0, 2, shape).astype(np.float32)


# --- operators ----------------------------------------------------------------------------


def test_operators_against_float64_formulas():
    x = _x()
    x64 = x.astype(np.float64)
    before = x.copy()
    np.testing.assert_allclose(ops.gelu(x), 0.5 * x64 * (1 + special.erf(x64 / math.sqrt(2))),
                               rtol=1e-6, atol=1e-6)
    tanh_form = 0.5 * x64 * (1 + np.tanh(math.sqrt(2 / math.pi) * (x64 + 0.044715 * x64 ** 3)))
    np.testing.assert_allclose(ops.gelu_tanh(x), tanh_form, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ops.silu(x), x64 / (1 + np.exp(-x64)), rtol=1e-6, atol=1e-6)
    g = _x((3, 5, 8), 1)
    np.testing.assert_allclose(ops.swiglu(g, x), g / (1 + np.exp(-g.astype(np.float64))) * x64,
                               rtol=1e-5, atol=1e-5)
    w, b = _x((8,), 2), _x((8,), 3)
    centred = x64 - x64.mean(-1, keepdims=True)
    ln = centred / np.sqrt((centred ** 2).mean(-1, keepdims=True) + 1e-5) * w + b
    np.testing.assert_allclose(ops.layer_norm(x, w, b), ln, rtol=1e-5, atol=1e-5)
    rms = x64 / np.sqrt((x64 ** 2).mean(-1, keepdims=True) + 1e-6) * w
    np.testing.assert_allclose(ops.rms_norm(x, w, 1e-6), rms, rtol=1e-5, atol=1e-5)
    weight, bias = _x((4, 8), 4), _x((4,), 5)
    np.testing.assert_allclose(ops.linear(x, weight, bias), x64 @ weight.T + bias,
                               rtol=1e-5, atol=1e-5)
    assert np.array_equal(x, before)  # every operator but softmax leaves its input alone
    for out in (ops.gelu(x), ops.gelu_tanh(x), ops.layer_norm(x, w, None), ops.rms_norm(x, None,
                                                                                         1e-6)):
        assert out.dtype == np.float32 and out.shape == x.shape


@pytest.mark.parametrize("rows", [0, 1, 63, ops.LINEAR_TRANSPOSED_ROWS,
                                  ops.LINEAR_TRANSPOSED_ROWS + 1, 300])
def test_linear_on_either_side_of_the_transposed_product(rows: int) -> None:
    """``x @ w.T + b`` whichever way the product runs (``(w @ x.T).T`` up to
    LINEAR_TRANSPOSED_ROWS rows): float32 round-off of the float64 product, C-contiguous,
    batch axes kept, the input left alone."""
    rng = np.random.default_rng(rows)
    x = rng.normal(size=(rows, 2, 48)).astype(np.float32)
    weight = rng.normal(size=(80, 48)).astype(np.float32)
    bias = rng.normal(size=80).astype(np.float32)
    before = x.copy()
    out = ops.linear(x, weight, bias)
    want = x.astype(np.float64) @ weight.T.astype(np.float64) + bias
    assert out.shape == (rows, 2, 80) and out.dtype == np.float32
    assert out.reshape(-1, 80).flags.c_contiguous and out.flags.c_contiguous
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-4)
    np.testing.assert_array_equal(x, before)
    if rows:
        np.testing.assert_allclose(ops.linear(x[0, 0], weight), want[0, 0] - bias,
                                   rtol=1e-5, atol=1e-4)


def test_a_derived_array_is_kept_per_setting_and_shared_by_sub_blocks() -> None:
    """``Block.derive`` computes once per setting, across the block's sub-blocks; a new
    setting recomputes; what it keeps cannot be written to."""
    root = ops.Block({"a.w": np.ones(3, dtype=np.float32)}, "")
    calls = []

    def compute(n):
        calls.append(n)
        return root.sub("a")["w"] * n

    first = root.sub("a").derive("scaled", 2, lambda: compute(2))
    again = root.sub("a").derive("scaled", 2, lambda: compute(2))
    assert again is first and calls == [2]
    np.testing.assert_array_equal(root.sub("a").derive("scaled", 5, lambda: compute(5)), 5)
    assert calls == [2, 5] and not first.flags.writeable
    assert ops.Block(root.tensors, "a.").derive("scaled", 5, lambda: compute(5)) is not None
    assert calls == [2, 5, 5]  # another root keeps its own


def test_query_aware_scale_keeps_its_base_scale_per_key_count() -> None:
    """The base scale ``base_mlp(log n)`` is computed once per n: equal to computing it
    afresh, and recomputed for another n."""
    rng = np.random.default_rng(3)
    tensors = {f"s.{m}.{k}": rng.normal(size=shape).astype(np.float32)
               for m, sizes in (("base_mlp", (1, 8, 16)), ("query_mlp", (4, 8, 4)))
               for k, shape in (("0.weight", (sizes[1], sizes[0])), ("0.bias", (sizes[1],)),
                                ("2.weight", (sizes[2], sizes[1])), ("2.bias", (sizes[2],)))}
    q = rng.normal(size=(4, 6, 4)).astype(np.float32)
    fresh = [ops.query_aware_scale(ops.Block(tensors, "s."), q, n, True) for n in (7, 300)]
    block = ops.Block(tensors, "s.")
    for n, want in [(7, fresh[0]), (7, fresh[0]), (300, fresh[1]), (7, fresh[0])]:
        np.testing.assert_array_equal(ops.query_aware_scale(block, q, n, True), want)
    assert not np.array_equal(fresh[0], fresh[1])


@pytest.mark.parametrize("rows", [0, 1, 17, 63, 64, 65, 130])
def test_query_blocks_cover_the_rows_in_whole_blocks(rows: int) -> None:
    """Blocks of 64 rows, the last zero-padded to 64; the rows in order, each once."""
    x = np.arange(rows * 3, dtype=np.float32).reshape(rows, 3) + 1
    blocks = ops.query_blocks(x)
    assert [b.shape for b, _ in blocks] == [(64, 3)] * math.ceil(rows / 64)
    np.testing.assert_array_equal(
        np.concatenate([b[:n] for b, n in blocks]) if blocks else x, x)
    for block, n in blocks:
        assert block.dtype == np.float32 and not block[n:].any()


def test_softmax_works_in_place_and_sums_to_one():
    scores = _x()
    want = np.exp(scores - scores.max(-1, keepdims=True))
    want /= want.sum(-1, keepdims=True)
    out = ops.softmax(scores)
    assert out is scores
    np.testing.assert_allclose(out, want, rtol=1e-6)


def _attention64(q, k, v, scale):
    scores = q.astype(np.float64) * scale @ np.swapaxes(k.astype(np.float64), -1, -2)
    weights = np.exp(scores - scores.max(-1, keepdims=True))
    return weights / weights.sum(-1, keepdims=True) @ v.astype(np.float64)


@pytest.mark.parametrize("shapes", [
    ((8, 300, 16), (8, 200, 16), (8, 200, 16)),  # heads × rows: blocks of rows
    ((3, 4, 100, 8), (3, 4, 60, 8), (3, 4, 60, 5)),  # batch entries per block
    ((4, 50, 8), (3, 4, 90, 8), (3, 4, 90, 8)),  # queries shared: inducing points
    ((2, 1, 70, 8), (1, 4, 80, 8), (2, 4, 80, 6)),  # axes of length 1 on either side
    ((500, 4), (900, 4), (900, 3)),  # no batch axes
    ((6, 9, 7), (9, 7), (9, 2)),  # fewer scores than a block: all at once
])
@pytest.mark.parametrize("block", [50, 1000, ops.ATTENTION_BLOCK])
def test_attention_in_score_blocks_equals_the_definition(monkeypatch, shapes, block):
    """Whatever the blocks (a batch entry's rows, several entries, everything), the
    attention is its float64 definition to float32 round-off, with the batch axes
    broadcast as numpy's matmul does; no input is changed."""
    monkeypatch.setattr(ops, "ATTENTION_BLOCK", block)
    q, k, v = (_x(shape, seed) for seed, shape in enumerate(shapes))
    before = [a.copy() for a in (q, k, v)]
    out = ops.attention(q, k, v, 0.4)
    want = _attention64(q, k, v, 0.4)
    assert out.dtype == np.float32 and out.shape == want.shape
    np.testing.assert_allclose(out, want, rtol=2e-5, atol=2e-5)
    assert all(np.array_equal(a, b) for a, b in zip((q, k, v), before, strict=True))


def test_attention_blocks_never_mix_rows(monkeypatch):
    """Rows split across blocks, or attended alone, give what they give among all the rows:
    a row's output is its own scores' (up to the round-off of other product shapes; bit for
    bit where the BLAS does not change with the shape, which numpy's own loops on wasm32
    do)."""
    monkeypatch.setattr(ops, "ATTENTION_BLOCK", 64 * 37)
    q, k, v = _x((8, 200, 16), 1), _x((8, 64, 16), 2), _x((8, 64, 16), 3)
    whole = ops.attention(q, k, v)
    for rows in (slice(150, 190), slice(3, 40), slice(7, 8)):
        np.testing.assert_allclose(ops.attention(q[:, rows], k, v), whole[:, rows],
                                   rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("interleaved", [False, True])
def test_rotate_keeps_norms_and_moves_pairs(interleaved):
    """RoPE is a rotation of each pair: norms stay; position 0 is unchanged; the pair of
    position t is turned by t · freq."""
    x = _x((2, 6, 8))
    freqs = np.array([1.0, 0.5, 0.25, 0.125], dtype=np.float32)
    out = ops.rotate(x, freqs, interleaved)
    np.testing.assert_allclose(np.linalg.norm(out, axis=-1), np.linalg.norm(x, axis=-1),
                               rtol=1e-5)
    np.testing.assert_allclose(out[:, 0], x[:, 0], rtol=1e-6)
    i, j = (2, 3) if interleaved else (1, 5)  # the pair of freqs[1]
    angle = 3 * 0.5
    a, b = x[:, 3, i], x[:, 3, j]
    np.testing.assert_allclose(out[:, 3, i], a * np.cos(angle) - b * np.sin(angle), atol=1e-5)
    np.testing.assert_allclose(out[:, 3, j], b * np.cos(angle) + a * np.sin(angle), atol=1e-5)


def test_chunks_cover_the_rows_once():
    assert ops.chunks(7, 3) == [slice(0, 3), slice(3, 6), slice(6, 7)]
    assert ops.chunks(0, 3) == []
    assert ops.chunks(2, 0) == [slice(0, 1), slice(1, 2)]


# --- safetensors header -------------------------------------------------------------------


def _file(tmp_path, tensors=None, metadata=None):
    tensors = tensors or {"a": np.arange(6, dtype=np.float32).reshape(2, 3),
                          "b": np.ones(4, dtype=np.float32)}
    return safetensors.write(tmp_path / "w.safetensors", tensors, metadata or {"k": "v"})


def _rewrite_header(path, edit):
    data = path.read_bytes()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    edit(header)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    path.write_bytes(struct.pack("<Q", len(text)) + text + data[8 + n:])


def test_read_header_reads_metadata_and_entries_only(tmp_path):
    path = _file(tmp_path)
    header = safetensors.read_header(path)
    assert header.metadata == {"k": "v"}
    assert header.entries["a"] == safetensors.Entry("F32", (2, 3), 0, 24)
    assert header.entries["b"] == safetensors.Entry("F32", (4,), 24, 40)
    assert header.data_start + 40 == path.stat().st_size


@pytest.mark.parametrize("cut, message", [
    (4, "is 4 bytes long"),
    (20, r"declares a \d+-byte header but holds"),
    (-4, "tensor 'b' ends at byte 40 of a 36-byte buffer"),
])
def test_read_header_refuses_truncated_files(tmp_path, cut, message):
    path = _file(tmp_path)
    path.write_bytes(path.read_bytes()[:cut])
    with pytest.raises(ValueError, match=message):
        safetensors.read_header(path)
    with pytest.raises(ValueError, match=message):
        safetensors.read(path)


def test_read_header_refuses_a_lying_header(tmp_path):
    path = _file(tmp_path)
    _rewrite_header(path, lambda h: h["a"].update(shape=[3, 3]))
    with pytest.raises(ValueError, match="tensor 'a' spans 24 bytes but shape"):
        safetensors.read_header(path)
    path = _file(tmp_path)
    _rewrite_header(path, lambda h: h["b"].update(data_offsets=[8, 24]))
    with pytest.raises(ValueError, match="tensors 'a' and 'b' overlap"):
        safetensors.read_header(path)


def test_dtypes_narrow_what_is_read(tmp_path):
    path = _file(tmp_path)
    _rewrite_header(path, lambda h: h["b"].update(dtype="F64", shape=[2]))
    assert safetensors.read(path)[1]["b"].dtype == np.float32  # F64 read as float32
    with pytest.raises(ValueError, match=r"'b' has dtype 'F64'; this reader takes \['F32'\]"):
        safetensors.read_header(path, dtypes=("F32",))
    with pytest.raises(ValueError, match="tensor 'b' has dtype 'F64'"):
        safetensors.read(path, dtypes=("F32",))
    with pytest.raises(ValueError, match="does not exist"):
        safetensors.read_header(tmp_path / "nope.safetensors")


# --- state dict ---------------------------------------------------------------------------


def test_state_dict_check_names_the_culprit():
    shapes = {"x.weight": (2, 3), "x.bias": (2,)}
    good = {"x.bias": np.zeros(2), "x.weight": np.zeros((2, 3))}
    assert list(state_dict.check(shapes, good, "f", "M")) == ["x.weight", "x.bias"]
    with pytest.raises(ValueError, match=r"f: missing tensors \['x.bias'\] for its config "
                                         r"\(M has 2 tensors\)"):
        state_dict.check(shapes, {"x.weight": np.zeros((2, 3))}, "f", "M")
    with pytest.raises(ValueError, match=r"unexpected tensors \['y', 'z'\]"):
        state_dict.check(shapes, {**good, "y": np.zeros(1)}, "f", "M", unexpected=["z"])
    with pytest.raises(ValueError, match=r"tensor 'x.bias' has shape \[3\], expected \[2\]"):
        state_dict.check(shapes, {**good, "x.bias": np.zeros(3)}, "f", "M")


def test_random_tensors_rule_and_seed():
    shapes = {"a.weight": (4, 16), "n.weight": (4,), "a.bias": (4,), "tokens": (3, 4),
              "freqs": (2,)}
    t = state_dict.random_tensors(shapes, 7, {"freqs": np.array([1.0, 2.0])})
    assert list(t) == list(shapes) and all(v.dtype == np.float32 for v in t.values())
    assert np.array_equal(t["n.weight"], np.ones(4)) and np.array_equal(t["freqs"], [1, 2])
    assert 0.1 < t["a.weight"].std() < 0.5  # normal(0, 1/4)
    assert t["a.bias"].std() < 0.1 and t["tokens"].std() < 0.1
    again = state_dict.random_tensors(shapes, 7, {"freqs": np.array([1.0, 2.0])})
    assert all(np.array_equal(t[k], again[k]) for k in t)
    for bad in (-1, True, 1.5):
        with pytest.raises(ValueError, match="seed must be a non-negative integer"):
            state_dict.random_tensors(shapes, bad)


# --- the loader cache ---------------------------------------------------------------------


def test_cache_reads_once_per_modification(tmp_path):
    checkpoint_cache.clear()
    path = tmp_path / "w.bin"
    path.write_bytes(b"one")
    reads = []

    def reader(p: str) -> bytes:
        reads.append(p)
        with open(p, "rb") as f:
            return f.read()

    assert checkpoint_cache.load(path, reader) == b"one"
    assert checkpoint_cache.load(str(path), reader) == b"one"
    assert len(reads) == 1
    path.write_bytes(b"two!")
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    assert checkpoint_cache.load(path, reader) == b"two!"
    assert len(reads) == 2
    with pytest.raises(ValueError, match="weights file .*nope.* does not exist"):
        checkpoint_cache.load(tmp_path / "nope", reader)
    with pytest.raises(ValueError, match="^bring your own$"):
        checkpoint_cache.load(tmp_path / "nope", reader, "bring your own")
