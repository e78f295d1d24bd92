"""The float32 numpy operators every checkpoint model (``tabicl``, ``tabpfn``, ``tabfm``) is
built of, each a small pure function with one contract.

Contracts: every function returns a new array and leaves its inputs alone, except
:func:`softmax`, which works in place on its argument (a scratch array of scores) and
returns it. Inputs are float32 arrays with the feature axis last; results are float32.
The passes run in place on one scratch array where that keeps the bits (the exact GELU,
LayerNorm), so a call allocates about one array of its input's size.

The state-dict view :class:`Block`, row :func:`chunks` and :func:`as_float32` are here
too, so that a stage module names tensors and nothing else. The model packages import
from here and never from each other (``tests/test_module_boundaries.py``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy.special import expit

from . import threads

LN_EPS = 1e-5
"""``nn.LayerNorm``'s default epsilon."""


def as_float32(x: Any) -> np.ndarray:
    """``x`` as a C-contiguous float32 array (no copy when it already is one)."""
    return np.ascontiguousarray(x, dtype=np.float32)


def chunks(n: int, size: int) -> list[slice]:
    """``slice`` objects covering 0 … n−1 in pieces of at most ``size``."""
    size = max(1, int(size))
    return [slice(i, min(i + size, n)) for i in range(0, n, size)]


QUERY_BLOCK = 64
"""Query rows per block of a model's query pass (TabICL's, TabPFN's and Google TabFM's
``predict_queries``)."""


def query_blocks(x: np.ndarray) -> list[tuple[np.ndarray, int]]:
    """Query rows ``x`` (M, …) as ``(block, rows)`` pairs: blocks of :data:`QUERY_BLOCK`
    rows, the last zero-padded to a whole block, each with how many of its rows are
    ``x``'s. Every product then has one shape whatever the batch, so a row's output does
    not depend on the other query rows, bit for bit where the BLAS kernel's result for a
    row does not depend on its place in the block. (Padding the last block only to a
    multiple of 16 rows made a small call 4–5 % faster on one thread and gave up that:
    bench/README.md, "Issue 45", fifth session.)"""
    blocks = []
    for start in range(0, x.shape[0], QUERY_BLOCK):
        block = x[start:start + QUERY_BLOCK]
        rows = block.shape[0]
        if rows < QUERY_BLOCK:
            block = np.concatenate([block, np.zeros((QUERY_BLOCK - rows, *x.shape[1:]),
                                                    x.dtype)])
        blocks.append((block, rows))
    return blocks


LINEAR_TRANSPOSED_ROWS = 128
"""Up to this many rows :func:`linear` multiplies ``weight @ x.T`` and transposes back:
the same dot products, with the weight as the product's long side. On OpenBLAS's
AVX-512 (SkylakeX) kernels that ran 4–32 % faster a product at 48–128 rows against
weights from memory, and a small model call 9–10 % faster; at 192 rows and more it was
slower (bench/README.md, "Issue 45", fourth session)."""


def linear(x: np.ndarray, weight: np.ndarray, bias: np.ndarray | None = None) -> np.ndarray:
    """``x @ weight.T + bias`` over the last axis (torch's ``F.linear``; weight out × in),
    C-contiguous; up to :data:`LINEAR_TRANSPOSED_ROWS` rows as ``(weight @ x.T).T``."""
    rows = x.reshape(-1, x.shape[-1])
    if rows.shape[0] <= LINEAR_TRANSPOSED_ROWS:
        out = np.ascontiguousarray((weight @ rows.T).T)
    else:
        out = rows @ weight.T
    out = out.reshape(*x.shape[:-1], weight.shape[0])
    if bias is not None:
        out += bias
    return out


ERF_P = 0.3275911
ERF_A = (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)
"""Abramowitz & Stegun 7.1.26: ``erfc(z) ≈ t·(a1 + a2 t + … + a5 t⁴)·exp(−z²)`` with
``t = 1 / (1 + p z)``, z ≥ 0, absolute error at most 1.5e-7: the erf that torch's own
vectorised CPU kernels (``Vectorized<float>::erf``, hence ``F.gelu``) evaluate."""
_GELU_P = np.float32(ERF_P / math.sqrt(2))  # t from |x| rather than |x| / √2
_GELU_A = tuple(np.float32(a / 2) for a in ERF_A)  # ½ erfc(|x| / √2), the ½ folded in
GELU_BLOCK = 1 << 15
"""Floats per block of :func:`gelu`'s passes (128 KiB a buffer: cache-resident)."""


def gelu(x: np.ndarray) -> np.ndarray:
    """Exact GELU, ``x · Φ(x)`` (torch's default ``F.gelu``), as ``max(x, 0) − |x| · h``
    with ``h = ½ erfc(|x| / √2)``: equal to ``½ x (1 + erf(x / √2))`` on both signs,
    without its cancellation for negative ``x``. ``erfc`` is :data:`ERF_A`'s polynomial
    (torch's): a dozen float32 passes of numpy's vector loops over cache-sized blocks,
    several times faster than scipy's float32 ``erf`` (a scalar double loop), within
    ~1.5e-7 · |x| of the exact value, as torch's."""
    x = as_float32(x)
    out = np.empty_like(x)
    flat_x, flat_out = x.reshape(-1), out.reshape(-1)
    size = min(GELU_BLOCK, flat_x.size)
    a, t, h = (np.empty(size, dtype=np.float32) for _ in range(3))
    zero, one = np.zeros(size, dtype=np.float32), np.float32(1.0)
    for i in range(0, flat_x.size, GELU_BLOCK):
        xs, o = flat_x[i:i + GELU_BLOCK], flat_out[i:i + GELU_BLOCK]
        m = xs.size
        ab, tb, hb = a[:m], t[:m], h[:m]
        np.abs(xs, out=ab)
        np.multiply(ab, _GELU_P, out=tb)
        tb += one
        np.divide(one, tb, out=tb)  # numpy's reciprocal is the same division, unvectorised
        np.multiply(tb, _GELU_A[4], out=hb)
        for coef in _GELU_A[3:0:-1]:
            hb += coef
            hb *= tb
        hb += _GELU_A[0]
        hb *= tb
        np.multiply(ab, ab, out=tb)
        tb *= np.float32(-0.5)
        np.exp(tb, out=tb)
        hb *= tb  # h = ½ erfc(|x| / √2)
        hb *= ab
        np.maximum(xs, zero[:m], out=o)  # against an array: vectorised, unlike a scalar
        o -= hb
    return out


def gelu_tanh(x: np.ndarray) -> np.ndarray:
    """GELU in the tanh form, ``0.5 x (1 + tanh(√(2/π) (x + 0.044715 x³)))``
    (``F.gelu(approximate="tanh")``, JAX's default ``gelu``)."""
    out = x * x
    out *= x
    out *= np.float32(0.044715)
    out += x
    out *= np.float32(math.sqrt(2.0 / math.pi))
    np.tanh(out, out=out)
    out += np.float32(1.0)
    out *= x
    out *= np.float32(0.5)
    return out


def silu(x: np.ndarray) -> np.ndarray:
    """``x · sigmoid(x)`` (torch's ``F.silu``)."""
    out = expit(x)
    out *= x
    return out


def swiglu(gate: np.ndarray, up: np.ndarray) -> np.ndarray:
    """The SwiGLU product ``silu(gate) · up`` of a feed-forward's two input projections."""
    out = silu(gate)
    out *= up
    return out


def layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray | None,
               eps: float = LN_EPS) -> np.ndarray:
    """LayerNorm over the last axis (biased variance, as torch); ``bias`` may be None."""
    mean = x.mean(axis=-1, keepdims=True)
    out = x - mean
    std = _mean_square(out)
    std += np.float32(eps)
    np.sqrt(std, out=std)
    out /= std  # in place: one array of x's size, no square
    out *= weight
    if bias is not None:
        out += bias
    return out


def _mean_square(x: np.ndarray) -> np.ndarray:
    """``mean(x², axis=-1, keepdims=True)`` in one pass, without an array of squares
    (``einsum``'s row dot products)."""
    out = np.einsum("...i,...i->...", x, x)[..., None]
    out /= np.float32(x.shape[-1])
    return out


def rms_norm(x: np.ndarray, weight: np.ndarray | None, eps: float) -> np.ndarray:
    """RMSNorm over the last axis, ``x / √(mean(x²) + eps) · weight`` (``weight`` may be
    None: no elementwise affine)."""
    ms = _mean_square(x)
    ms += np.float32(eps)
    out = x / np.sqrt(ms, out=ms)
    if weight is not None:
        out *= weight
    return out


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """Numerically stable softmax along ``axis``, IN PLACE on ``x`` (a scratch array of
    scores), which it returns."""
    x -= x.max(axis=axis, keepdims=True)
    np.exp(x, out=x)
    x /= x.sum(axis=axis, keepdims=True)
    return x


ATTENTION_BLOCK = 1 << 18
"""Scores :func:`attention` computes at once (1 MiB of float32: a core's L2 cache holds them
between the passes over them)."""
ATTENTION_SMALL = 1 << 12
"""Scores per query/key matrix below which :func:`attention` takes the whole batch at once
(many tiny products: blocks would only add calls)."""


def attention(q: np.ndarray, k: np.ndarray, v: np.ndarray,
              scale: float | None = None) -> np.ndarray:
    """Scaled-dot-product attention ``softmax(q kᵀ · scale) v`` over the last two axes
    (batch axes broadcast; ``scale`` 1/√d by default).

    The scores go through in blocks of at most :data:`ATTENTION_BLOCK` (whole batch
    entries first, then query rows), so that the softmax's passes and the second product
    read them from cache, not memory, as a fused attention kernel does. Two passes fewer
    over the scores than scores, :func:`softmax`, product: the scale goes onto the queries
    (T × d rather than T × J) and the softmax's division onto the output (T × d_v). Equal
    to that up to float32 round-off (bit for bit in the scores when the scale is a power
    of two). Blocks never mix query rows: a row's output is its own scores'."""
    if scale is None:
        scale = 1 / math.sqrt(q.shape[-1])
    q = q * np.float32(scale)
    batch = np.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    rows, keys = q.shape[-2], k.shape[-2]
    if rows * keys < ATTENTION_SMALL or math.prod(batch) * rows * keys <= ATTENTION_BLOCK:
        return _attend(q, k, v)
    out = np.empty((*batch, rows, v.shape[-1]), dtype=np.float32)
    q, k, v = (x.reshape((1,) * (out.ndim - x.ndim) + x.shape) for x in (q, k, v))
    for index in _score_blocks(out.shape[:-1], keys, ATTENTION_BLOCK):
        entries = index[:len(batch)]  # k and v: every key of the block's batch entries
        _attend(q[_broadcast_index(q, index)], k[_broadcast_index(k, entries)],
                v[_broadcast_index(v, entries)], out[index])
    return out


def _attend(q: np.ndarray, k: np.ndarray, v: np.ndarray,
            out: np.ndarray | None = None) -> np.ndarray:
    """``softmax(q kᵀ) v`` (into ``out`` when given), the scores made, used and dropped in
    one go."""
    scores = q @ k.swapaxes(-1, -2)
    scores -= scores.max(axis=-1, keepdims=True)
    np.exp(scores, out=scores)
    total = scores.sum(axis=-1, keepdims=True)
    if out is None:
        out = scores @ v
    else:
        np.matmul(scores, v, out=out)
    out /= total
    return out


def _score_blocks(shape: tuple[int, ...], keys: int, budget: int) -> list[tuple]:
    """Indices into an array of ``shape`` (batch axes, then query rows) whose blocks each
    hold at most ``budget`` scores over ``keys`` keys (one query row at least): slices of
    the first axis where a whole entry fits, else each entry's own blocks."""
    if len(shape) == 1:
        return [(rows,) for rows in chunks(shape[0], budget // keys)]
    entry = math.prod(shape[1:]) * keys
    if entry <= budget:
        return [(part,) for part in chunks(shape[0], budget // entry)]
    return [(i, *inner) for i in range(shape[0])
            for inner in _score_blocks(shape[1:], keys, budget)]


def _broadcast_index(x: np.ndarray, index: tuple) -> tuple:
    """``index`` (over the leading axes) as it applies to ``x``, whose axes of length 1
    broadcast: those take all of it (a slice) or its one entry (an integer)."""
    return tuple(part if size != 1 else (0 if isinstance(part, int) else slice(None))
                 for part, size in zip(index, x.shape, strict=False))


def rotate(x: np.ndarray, freqs: np.ndarray, interleaved: bool) -> np.ndarray:
    """Rotary position encoding (RoPE) of ``x`` (…, T, head_dim) at positions 0 … T−1.

    ``freqs`` (head_dim / 2) are the checkpoint's inverse frequencies. The split-half
    layout (``interleaved=False``) rotates the pair (i, i + head_dim/2); the interleaved
    layout rotates (2i, 2i + 1).
    """
    positions = np.arange(x.shape[-2], dtype=np.float32)
    angles = positions[:, None] * freqs[None, :]
    if interleaved:
        angles = np.repeat(angles, 2, axis=-1)
        pairs = x.reshape(*x.shape[:-1], -1, 2)
        turned = np.stack([-pairs[..., 1], pairs[..., 0]], axis=-1).reshape(x.shape)
    else:
        angles = np.concatenate([angles, angles], axis=-1)
        half = x.shape[-1] // 2
        turned = np.concatenate([-x[..., half:], x[..., :half]], axis=-1)
    return (x * np.cos(angles) + turned * np.sin(angles)).astype(np.float32, copy=False)


class Block:
    """A view of a state dict under one prefix: ``block["attn.in_proj_weight"]``; its
    sub-blocks share its :meth:`derive` store."""

    def __init__(self, tensors: dict[str, np.ndarray], prefix: str,
                 derived: dict[str, tuple[Any, np.ndarray]] | None = None):
        self.tensors, self.prefix = tensors, prefix
        self.derived = {} if derived is None else derived

    def __getitem__(self, name: str) -> np.ndarray:
        return self.tensors[self.prefix + name]

    def get(self, name: str) -> np.ndarray | None:
        return self.tensors.get(self.prefix + name)

    def sub(self, name: str) -> Block:
        return Block(self.tensors, f"{self.prefix}{name}.", self.derived)

    def derive(self, name: str, setting: Any, compute: Callable[[], np.ndarray]) -> np.ndarray:
        """``compute()``, an array the block's tensors give for one ``setting`` (the base
        softmax scale for n keys), kept read-only under ``name`` until the setting changes:
        every layer of every call reads it again, and computing it is a dozen tiny numpy
        calls."""
        key = self.prefix + name
        held = self.derived.get(key)
        if held is None or held[0] != setting:
            value = compute()
            value.setflags(write=False)
            held = self.derived[key] = (setting, value)
        return held[1]


def mlp(block: Block, x: np.ndarray) -> np.ndarray:
    """``Sequential(Linear, GELU, Linear)`` with tensors ``0.*`` and ``2.*`` (biases
    optional)."""
    return linear(gelu(linear(x, block["0.weight"], block.get("0.bias"))),
                  block["2.weight"], block.get("2.bias"))


def query_aware_scale(block: Block, q: np.ndarray, n: int, elementwise: bool,
                      heads: slice = slice(None)) -> np.ndarray:
    """Queries ``q`` (…, heads, T, head_dim) scaled for ``n`` keys by the query-aware
    softmax scaling: ``q · base_mlp(log n) · (1 + tanh(query_mlp(q)))`` (TabICL's
    ``qassmax-mlp*``, TabPFN v3's ``SoftmaxScalingMLP``); the base scale is per head and
    dimension when ``elementwise``, else per head. ``heads``: which of the block's heads
    ``q`` holds (all by default; a share of them when a block is split by heads)."""
    head_dim = q.shape[-1]
    base = block.derive("base_scale", n, lambda: mlp(
        block.sub("base_mlp"), np.full((1, 1), math.log(max(n, 1)), dtype=np.float32)))
    base = base.reshape(-1, 1, head_dim if elementwise else 1)[heads]
    modulation = np.tanh(mlp(block.sub("query_mlp"), q))
    modulation += np.float32(1.0)
    return q * (base * modulation)


ICL_SCRATCH_FLOATS = 1 << 25
"""The most floats of one row chunk's (heads × rows × context keys) scores in an ICL block
(128 MiB)."""


def attend_context(block: Any, h: np.ndarray, kv: tuple[np.ndarray, np.ndarray],
                   heads: int) -> np.ndarray:
    """``block(h, kv)``: rows ``h`` (M, D) through one ICL block over the context's keys
    and values ``kv``, in row chunks that bound the score matrix, spread over the worker
    threads (rows are independent given the keys and values)."""
    size = threads.spread(h.shape[0], ICL_SCRATCH_FLOATS // max(heads * kv[0].shape[-2], 1))
    if h.shape[0] <= size:
        return block(h, kv)
    return np.concatenate(threads.map_chunks(lambda rows: block(h[rows], kv),
                                             chunks(h.shape[0], size)))


def context_keys_values(block: Any, h: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``block.cache(h)``: the context rows' keys and values (each heads × N × d), one row
    chunk per worker thread (a row's keys and values are its own)."""
    parts = chunks(h.shape[0], math.ceil(h.shape[0] / threads.count()))
    if len(parts) == 1:
        return block.cache(h)
    done = threads.map_chunks(lambda rows: block.cache(h[rows]), parts)
    return (np.concatenate([k for k, _ in done], axis=-2),
            np.concatenate([v for _, v in done], axis=-2))


def in_shares(n: int, heads: int, attention_share: Callable, hidden: int,
              feed_forward_share: Callable, residual: np.ndarray,
              norm_mlp: Callable[[np.ndarray], np.ndarray], new_kv: bool,
              attention_bias: np.ndarray | None = None,
              feed_forward_bias: np.ndarray | None = None,
              post_norms: tuple[Callable, Callable] | None = None
              ) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray] | None]:
    """A pre-norm transformer layer on a few rows as ``n`` near-equal shares on the worker
    threads, every share on all the rows (row chunks would leave each thread too small a
    product): ``attention_share(heads)`` for a slice of the ``heads`` heads returns its part
    of the output projection and its keys and values; the parts are summed, plus
    ``attention_bias`` and ``residual``; then ``feed_forward_share(norm_mlp(out), units)``
    for a slice of the ``hidden`` units returns its part of the feed-forward's output, summed
    plus ``feed_forward_bias`` and added. ``post_norms``: the norms a sandwich-norm block
    (TabFM's) applies to the attention's and the feed-forward's whole output before each is
    added back. Equal to the whole layer up to float32 round-off. Returns the output and,
    when ``new_kv``, the shares' keys and values joined."""
    after_attention, after_feed_forward = post_norms or (None, None)
    done = threads.map_chunks(attention_share, chunks(heads, math.ceil(heads / n)))
    out = _summed([part for part, _ in done])
    if attention_bias is not None:
        out += attention_bias
    if after_attention is not None:
        out = after_attention(out)
    out += residual
    normed = norm_mlp(out)
    ff = _summed(threads.map_chunks(lambda units: feed_forward_share(normed, units),
                                    chunks(hidden, math.ceil(hidden / n))))
    if feed_forward_bias is not None:
        ff += feed_forward_bias
    if after_feed_forward is not None:
        ff = after_feed_forward(ff)
    out += ff
    if not new_kv:
        return out, None
    return out, (np.concatenate([k for _, (k, _) in done]),
                 np.concatenate([v for _, (_, v) in done]))


def _summed(parts: list[np.ndarray]) -> np.ndarray:
    """``parts[0] + parts[1] + …``, left to right, into the first part (a scratch array)."""
    total = parts[0]
    for part in parts[1:]:
        total += part
    return total
