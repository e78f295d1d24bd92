"""The numeric pieces every Google TabFM stage is built of, float32 numpy.

Names follow ``tabfm.src.pytorch.model``: RMSNorm (ε 1e-6, normalised in float32), the
attention (``MultiheadAttention``: q/k/v projections; RoPE on q and k where the stage has
one; then q/k RMSNorm over each head; queries scaled by ``log2(e) / √d_head ·
softplus(per_dim_scale)``; softmax attention at scale 1; the output projection) and the
block around it (``MultiheadAttentionBlock``: RMSNorm before and after the attention and
the SwiGLU feed-forward, each added back), the tanh GELU of its MLPs. A stage module says
which tensors form which block through :class:`Block`, a view of the state dict. The
operators themselves (linear, RMSNorm, SwiGLU, tanh GELU, softmax, RoPE) are the shared
ones of :mod:`arenalite.models.ops`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..ops import Block, as_float32, attention, chunks, gelu_tanh, in_shares, linear, rotate
from ..ops import rms_norm as _rms_norm

__all__ = ["EPS", "Attention", "AttentionBlock", "Block", "as_float32", "chunks", "linear",
           "mlp", "rms_norm", "softplus"]

EPS = 1e-6
"""``RMSNorm``'s epsilon."""
LOG2E = 1.442695041
"""The constant ``MultiheadAttention`` scales its queries by (with 1/√d_head and the
softplus of ``per_dim_scale``)."""
SOFTPLUS_THRESHOLD = 20.0
"""``F.softplus``' threshold: above it softplus(x) is x."""


def rms_norm(x: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """``RMSNorm``: ``x / √(mean(x²) + 1e-6) · weight`` over the last axis."""
    return _rms_norm(x, weight, EPS)


def swiglu(gate: np.ndarray, up: np.ndarray) -> np.ndarray:
    """``silu(gate) · up``, SiLU as ``gate / (1 + e^−gate)`` in place on ``gate`` (a scratch
    array): three times faster than scipy's ``expit`` (``ops.silu``) on float32, within an
    ulp of it; the feed-forwards' one elementwise cost that shows in the bench."""
    e = np.negative(gate)
    np.exp(e, out=e)
    e += np.float32(1.0)
    np.divide(gate, e, out=gate)
    gate *= up
    return gate


def softplus(x: np.ndarray) -> np.ndarray:
    """``log(1 + e^x)``, ``x`` itself above :data:`SOFTPLUS_THRESHOLD` (torch's rule)."""
    x = as_float32(x)
    return np.where(x > SOFTPLUS_THRESHOLD, x,
                    np.log1p(np.exp(np.minimum(x, SOFTPLUS_THRESHOLD)))).astype(np.float32)


def mlp(block: Block, x: np.ndarray, layers: int = 2) -> np.ndarray:
    """``MLP``: Linears ``layers.0`` … with the tanh GELU between them."""
    for k in range(layers):
        x = linear(x, block[f"layers.{k}.weight"], block[f"layers.{k}.bias"])
        if k < layers - 1:
            x = gelu_tanh(x)
    return x


class Attention:
    """One ``MultiheadAttention``: ``heads`` heads, RoPE with ``freqs`` when given."""

    def __init__(self, block: Block, heads: int, freqs: np.ndarray | None = None):
        self.block, self.heads, self.freqs = block, heads, freqs
        self.d_head = d_head = block["per_dim_scale"].shape[0]
        self.scale = (np.float32(LOG2E / math.sqrt(d_head))
                      * softplus(block["per_dim_scale"])).astype(np.float32)

    def split(self, x: np.ndarray) -> np.ndarray:
        """(…, T, E) → (…, E / d_head, T, d_head): every head, or a share's columns."""
        *lead, t, e = x.shape
        return x.reshape(*lead, t, e // self.d_head, self.d_head).swapaxes(-3, -2)

    def columns(self, heads: slice) -> slice:
        """The projections' columns of the heads ``heads``."""
        return slice(heads.start * self.d_head, heads.stop * self.d_head)

    def queries(self, x: np.ndarray, heads: slice | None = None) -> np.ndarray:
        """Normed inputs (…, T, E) → scaled queries (…, heads, T, d_head); ``heads``: those
        heads alone (a share of them)."""
        b = self.block
        cols = self.columns(heads or slice(0, self.heads))
        q = self.split(linear(x, b["q_proj.weight"][cols], b["q_proj.bias"][cols]))
        if self.freqs is not None:
            q = rotate(q, self.freqs, interleaved=True)
        q = rms_norm(q, b["query_ln.weight"])
        q *= self.scale
        return q

    def keys_values(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Normed inputs (…, T, E) → keys and values (…, heads, T, d_head): what a KV cache
        holds."""
        b = self.block
        k = self.split(linear(x, b["k_proj.weight"], b["k_proj.bias"]))
        if self.freqs is not None:
            k = rotate(k, self.freqs, interleaved=True)
        k = rms_norm(k, b["key_ln.weight"])
        v = self.split(linear(x, b["v_proj.weight"], b["v_proj.bias"]))
        return k, v

    def attend(self, q: np.ndarray, k: np.ndarray, v: np.ndarray) -> np.ndarray:
        """Softmax attention of queries over keys/values, heads merged, out projection:
        (…, T, E)."""
        out = attention(q, k, v, scale=1.0).swapaxes(-3, -2)
        out = out.reshape(*out.shape[:-2], -1)
        return linear(out, self.block["out_proj.weight"], self.block["out_proj.bias"])


@dataclass(frozen=True)
class AttentionBlock:
    """One ``MultiheadAttentionBlock``: ``x + RMSNorm(attn(RMSNorm(x), RMSNorm(kv)))``,
    then ``x + RMSNorm(SwiGLU(RMSNorm(x)))``."""

    block: Block
    heads: int
    freqs: np.ndarray | None = None

    @property
    def attention(self) -> Attention:
        return Attention(self.block.sub("attn"), self.heads, self.freqs)

    def cache(self, kv_source: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The keys and values this block's queries attend to, from their source rows."""
        return self.attention.keys_values(rms_norm(kv_source, self.block["pre_attn_ln.weight"]))

    def queries(self, q_source: np.ndarray) -> np.ndarray:
        return self.attention.queries(rms_norm(q_source, self.block["pre_attn_ln.weight"]))

    def feed_forward(self, x: np.ndarray) -> np.ndarray:
        b = self.block
        xn = rms_norm(x, b["pre_ff_ln.weight"])
        hidden = swiglu(linear(xn, b["linear1_gate.weight"], b["linear1_gate.bias"]),
                        linear(xn, b["linear1.weight"], b["linear1.bias"]))
        return rms_norm(linear(hidden, b["linear2.weight"], b["linear2.bias"]),
                        b["post_ff_ln.weight"])

    def by_shares(self, q_source: np.ndarray, kv: tuple[np.ndarray, np.ndarray],
                  n: int) -> np.ndarray:
        """The block on a few query rows ``q_source`` (T, E) over cached ``kv`` (heads, N,
        d_head each) as ``n`` near-equal shares of its heads, then of its feed-forward's
        hidden units, on the worker threads, every share on all T rows (``ops.in_shares``,
        with the block's norms after the attention and the feed-forward): equal to
        :meth:`__call__` up to float32 round-off."""
        b = self.block
        x = rms_norm(q_source, b["pre_attn_ln.weight"])
        out, _ = in_shares(
            n, self.heads, lambda heads: (self.attention_share(x, heads, kv), None),
            b["linear2.weight"].shape[1], self.feed_forward_share, q_source,
            lambda out: rms_norm(out, b["pre_ff_ln.weight"]), False,
            b["attn.out_proj.bias"], b["linear2.bias"],
            (lambda out: rms_norm(out, b["post_attn_ln.weight"]),
             lambda out: rms_norm(out, b["post_ff_ln.weight"])))
        return out

    def attention_share(self, x: np.ndarray, heads: slice,
                        kv: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
        """The heads ``heads`` alone on normed rows ``x`` (T, E): their part of the output
        projection (T, E), without its bias."""
        a = self.attention
        out = attention(a.queries(x, heads), kv[0][heads], kv[1][heads], scale=1.0)
        return linear(out.swapaxes(0, 1).reshape(x.shape[0], -1),
                      a.block["out_proj.weight"][:, a.columns(heads)])

    def feed_forward_share(self, xn: np.ndarray, units: slice) -> np.ndarray:
        """The SwiGLU's hidden units ``units`` alone on normed rows ``xn``: their part of
        ``linear2`` (no bias, no norm)."""
        b = self.block
        hidden = swiglu(linear(xn, b["linear1_gate.weight"][units], b["linear1_gate.bias"][units]),
                        linear(xn, b["linear1.weight"][units], b["linear1.bias"][units]))
        return linear(hidden, b["linear2.weight"][:, units])

    def __call__(self, q_source: np.ndarray, kv: tuple[np.ndarray, np.ndarray],
                 q: np.ndarray | None = None) -> np.ndarray:
        """The block on query rows ``q_source`` (…, T, E) over cached ``kv``; ``q``: their
        queries when already computed (shared by every column, as inducing points)."""
        attention = self.attention
        q = attention.queries(rms_norm(q_source, self.block["pre_attn_ln.weight"])) \
            if q is None else q
        out = rms_norm(attention.attend(q, *kv), self.block["post_attn_ln.weight"])
        out += q_source
        out += self.feed_forward(out)
        return out
