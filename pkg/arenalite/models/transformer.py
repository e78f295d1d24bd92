"""The small in-context transformer encoder (docs/models.md, ``icl_transformer``).

Rows are embedded (context rows also get a label embedding), pass ``n_layers``
pre-LayerNorm blocks in which every row attends to context rows only, and query rows
go through a head. Because context rows never see query rows, each layer's context
keys/values are computed once per fold (the KV cache) and every batch of query rows
reuses them: :func:`forward_cached`. :func:`forward_uncached` recomputes the whole
stack for one query at a time; it is the reference the cached path must equal.

All arithmetic is float64 on float32-stored weights. Products use ``np.einsum``
(fixed accumulation order per output element, no BLAS), so a row's result does not
depend on which other rows share its batch: the cached and uncached paths agree
bit for bit (BLAS gemm/gemv pick kernels by matrix shape and would not).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

import numpy as np

from .preprocess import Prepared, target_stats
from .weights import Weights

QUERY_BATCH = 1024


def layer_norm(x: np.ndarray, g: np.ndarray, b: np.ndarray, eps: float) -> np.ndarray:
    """``(x − mean) / sqrt(var + eps) · g + b`` over the last axis (population variance)."""
    mean = x.mean(axis=-1, keepdims=True)
    centred = x - mean
    var = (centred * centred).mean(axis=-1, keepdims=True)
    return centred / np.sqrt(var + eps) * g + b


def gelu(x: np.ndarray) -> np.ndarray:
    """GELU in the tanh form ``0.5 x (1 + tanh(√(2/π) (x + 0.044715 x³)))``."""
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


def linear(x: np.ndarray, w: np.ndarray, b: np.ndarray | None = None) -> np.ndarray:
    """``x @ w (+ b)`` for row vectors, with a row-independent accumulation order."""
    y = np.einsum("ik,kn->in", x, w)
    return y if b is None else y + b


def softmax(z: np.ndarray, axis: int = -1) -> np.ndarray:
    """Max-subtracted softmax along ``axis``."""
    e = np.exp(z - z.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


class Params:
    """Float64 views of a :class:`Weights` object, looked up by tensor name."""

    def __init__(self, weights: Weights) -> None:
        self.config = weights.config
        self._t = {name: t.astype(np.float64) for name, t in weights.tensors.items()}

    def __getitem__(self, name: str) -> np.ndarray:
        return self._t[name]

    def layer(self, index: int, name: str) -> np.ndarray:
        return self._t[f"layers.{index}.{name}"]


def embed(params: Params, prep: Prepared) -> tuple[np.ndarray, np.ndarray]:
    """Steps 1–3: padded features @ embed.w + embed.b, plus the context label embedding."""
    d_in = params.config["d_in"]
    pad = d_in - prep.x_train.shape[1]
    x_ctx = np.pad(prep.x_train, ((0, 0), (0, pad)))
    x_q = np.pad(prep.x_test, ((0, 0), (0, pad)))
    h_ctx = linear(x_ctx, params["embed.w"], params["embed.b"])
    h_q = linear(x_q, params["embed.w"], params["embed.b"])
    if prep.n_classes is None:
        mean, std = target_stats(prep.y_train)
        h_ctx = h_ctx + ((prep.y_train - mean) / std)[:, None] * params["label.reg"]
    else:
        h_ctx = h_ctx + params["label.w"][prep.y_train]
    return h_ctx, h_q


def _split_heads(x: np.ndarray, n_heads: int) -> np.ndarray:
    """(rows, d_model) → (heads, rows, d_h)."""
    rows, d = x.shape
    return x.reshape(rows, n_heads, d // n_heads).transpose(1, 0, 2)


def context_kv(params: Params, layer: int, h_ctx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One layer's context keys and values, split into heads: the KV cache entry."""
    eps, n_heads = params.config["ln_eps"], params.config["n_heads"]
    a = layer_norm(h_ctx, params.layer(layer, "ln1.g"), params.layer(layer, "ln1.b"), eps)
    k = linear(a, params.layer(layer, "attn.wk"), params.layer(layer, "attn.bk"))
    v = linear(a, params.layer(layer, "attn.wv"), params.layer(layer, "attn.bv"))
    return _split_heads(k, n_heads), _split_heads(v, n_heads)


def block(params: Params, layer: int, h: np.ndarray, k_ctx: np.ndarray,
          v_ctx: np.ndarray) -> np.ndarray:
    """One pre-LN layer for rows ``h`` attending to the cached context keys/values."""
    eps, n_heads = params.config["ln_eps"], params.config["n_heads"]
    a = layer_norm(h, params.layer(layer, "ln1.g"), params.layer(layer, "ln1.b"), eps)
    q = _split_heads(linear(a, params.layer(layer, "attn.wq"), params.layer(layer, "attn.bq")),
                     n_heads)
    scores = np.einsum("hqd,hnd->hqn", q, k_ctx) / math.sqrt(q.shape[-1])
    o = np.einsum("hqn,hnd->hqd", softmax(scores), v_ctx).transpose(1, 0, 2).reshape(h.shape)
    h = h + linear(o, params.layer(layer, "attn.wo"), params.layer(layer, "attn.bo"))
    m = layer_norm(h, params.layer(layer, "ln2.g"), params.layer(layer, "ln2.b"), eps)
    hidden = gelu(linear(m, params.layer(layer, "mlp.w1"), params.layer(layer, "mlp.b1")))
    return h + linear(hidden, params.layer(layer, "mlp.w2"), params.layer(layer, "mlp.b2"))


def head(params: Params, h_q: np.ndarray, prep: Prepared) -> np.ndarray:
    """Step 5: class probabilities (first C logits) or a prediction in target units."""
    z = layer_norm(h_q, params["head.ln.g"], params["head.ln.b"], params.config["ln_eps"])
    if prep.n_classes is None:
        mean, std = target_stats(prep.y_train)
        reg = linear(z, params["head.reg.w"][:, None], params["head.reg.b"])[:, 0]
        return reg * std + mean
    logits = linear(z, params["head.cls.w"], params["head.cls.b"])[:, :prep.n_classes]
    return softmax(logits)


def forward_cached(params: Params, prep: Prepared,
                   clock: Callable[[], float] = time.perf_counter) -> tuple[np.ndarray, dict]:
    """Batched forward pass with the per-layer KV cache; returns output and stage times (ms).

    Layer-major order: for each layer the context keys/values are computed once, the
    context rows advance, then every batch of query rows attends to the cached keys.
    """
    t0 = clock()
    h_ctx, h_q = embed(params, prep)
    t1 = clock()
    layers = []
    for layer in range(params.config["n_layers"]):
        start = clock()
        k_ctx, v_ctx = context_kv(params, layer, h_ctx)
        out = np.empty_like(h_q)
        for s in range(0, len(h_q), QUERY_BATCH):
            out[s:s + QUERY_BATCH] = block(params, layer, h_q[s:s + QUERY_BATCH], k_ctx, v_ctx)
        h_q = out
        if layer + 1 < params.config["n_layers"]:
            h_ctx = block(params, layer, h_ctx, k_ctx, v_ctx)
        layers.append((clock() - start) * 1e3)
    t2 = clock()
    output = head(params, h_q, prep)
    t3 = clock()
    return output, {"embed": (t1 - t0) * 1e3, "layers": layers, "head": (t3 - t2) * 1e3}


def forward_uncached(params: Params, prep: Prepared) -> np.ndarray:
    """Reference: each query row alone, appended to the context, through the full stack.

    Keys/values are recomputed at every layer from the stacked (context + query)
    states, and only the context rows' keys/values are attended to.
    """
    h_ctx, h_q = embed(params, prep)
    n = len(h_ctx)
    rows = []
    for i in range(len(h_q)):
        h = np.concatenate([h_ctx, h_q[i:i + 1]])
        for layer in range(params.config["n_layers"]):
            k, v = context_kv(params, layer, h)
            h = block(params, layer, h, k[:, :n], v[:, :n])
        rows.append(h[n])
    return head(params, np.stack(rows), prep)
