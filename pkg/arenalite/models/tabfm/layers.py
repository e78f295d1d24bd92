"""The numeric pieces every Google TabFM stage is built of, float32 numpy.

Names follow ``tabfm.src.pytorch.model``: RMSNorm (ε 1e-6, normalised in float32), the
attention (``MultiheadAttention``: q/k/v projections; RoPE on q and k where the stage has
one; then q/k RMSNorm over each head; queries scaled by ``log2(e) / √d_head ·
softplus(per_dim_scale)``; softmax attention at scale 1; the output projection) and the
block around it (``MultiheadAttentionBlock``: RMSNorm before and after the attention and
the SwiGLU feed-forward, each added back), the tanh GELU of its MLPs. A stage module says
which tensors form which block through :class:`Block`, a view of the state dict.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

EPS = 1e-6
"""``RMSNorm``'s epsilon."""
LOG2E = 1.442695041
"""The constant ``MultiheadAttention`` scales its queries by (with 1/√d_head and the
softplus of ``per_dim_scale``)."""
SOFTPLUS_THRESHOLD = 20.0
"""``F.softplus``' threshold: above it softplus(x) is x."""


def as_float32(x: Any) -> np.ndarray:
    return np.ascontiguousarray(x, dtype=np.float32)


def linear(x: np.ndarray, weight: np.ndarray, bias: np.ndarray | None = None) -> np.ndarray:
    """``x @ weight.T + bias`` (torch's ``nn.Linear``)."""
    out = (x.reshape(-1, x.shape[-1]) @ weight.T).reshape(*x.shape[:-1], weight.shape[0])
    if bias is not None:
        out += bias
    return out


def rms_norm(x: np.ndarray, weight: np.ndarray, eps: float = EPS) -> np.ndarray:
    """``x · rsqrt(mean(x²) + eps) · weight`` over the last axis."""
    scale = np.square(x).mean(axis=-1, keepdims=True, dtype=np.float32)
    scale += np.float32(eps)
    np.sqrt(scale, out=scale)
    np.divide(np.float32(1.0), scale, out=scale)
    out = x * scale
    out *= weight
    return out


def silu(x: np.ndarray) -> np.ndarray:
    """``x · sigmoid(x)``, in place on ``x`` (a scratch array)."""
    s = np.negative(x)
    np.exp(s, out=s)
    s += np.float32(1.0)
    x /= s
    return x


def gelu_tanh(x: np.ndarray) -> np.ndarray:
    """GELU with the tanh approximation (``F.gelu(approximate="tanh")``, jax's default)."""
    inner = x * x
    inner *= np.float32(0.044715)
    inner += np.float32(1.0)
    inner *= x
    inner *= np.float32(math.sqrt(2.0 / math.pi))
    np.tanh(inner, out=inner)
    inner += np.float32(1.0)
    inner *= x
    inner *= np.float32(0.5)
    return inner


def softplus(x: np.ndarray) -> np.ndarray:
    """``log(1 + e^x)``, ``x`` itself above :data:`SOFTPLUS_THRESHOLD` (torch's rule)."""
    x = as_float32(x)
    return np.where(x > SOFTPLUS_THRESHOLD, x,
                    np.log1p(np.exp(np.minimum(x, SOFTPLUS_THRESHOLD)))).astype(np.float32)


def softmax(x: np.ndarray) -> np.ndarray:
    """Softmax over the last axis, in place on ``x`` (a scratch array)."""
    x -= x.max(axis=-1, keepdims=True)
    np.exp(x, out=x)
    x /= x.sum(axis=-1, keepdims=True)
    return x


def rotate(x: np.ndarray, freqs: np.ndarray) -> np.ndarray:
    """Interleaved rotary encoding of ``x`` (…, T, d_head) at positions 0 … T−1: the pair
    (2i, 2i + 1) turned by the angle ``position · freqs[i]`` (``RoPE.rotate``)."""
    angles = np.arange(x.shape[-2], dtype=np.float32)[:, None] * freqs[None, :]
    cos = np.repeat(np.cos(angles), 2, axis=-1)
    sin = np.repeat(np.sin(angles), 2, axis=-1)
    pairs = x.reshape(*x.shape[:-1], -1, 2)
    turned = np.stack([-pairs[..., 1], pairs[..., 0]], axis=-1).reshape(x.shape)
    out = x * cos
    turned *= sin
    out += turned
    return out


class Block:
    """A view of the state dict under one prefix: ``block["attn.q_proj.weight"]``."""

    def __init__(self, tensors: dict[str, np.ndarray], prefix: str):
        self.tensors, self.prefix = tensors, prefix

    def __getitem__(self, name: str) -> np.ndarray:
        return self.tensors[self.prefix + name]

    def sub(self, name: str) -> Block:
        return Block(self.tensors, f"{self.prefix}{name}.")


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
        d_head = block["per_dim_scale"].shape[0]
        self.scale = (np.float32(LOG2E / math.sqrt(d_head))
                      * softplus(block["per_dim_scale"])).astype(np.float32)

    def split(self, x: np.ndarray) -> np.ndarray:
        """(…, T, E) → (…, heads, T, d_head)."""
        *lead, t, e = x.shape
        return x.reshape(*lead, t, self.heads, e // self.heads).swapaxes(-3, -2)

    def queries(self, x: np.ndarray) -> np.ndarray:
        """Normed inputs (…, T, E) → scaled queries (…, heads, T, d_head)."""
        b = self.block
        q = self.split(linear(x, b["q_proj.weight"], b["q_proj.bias"]))
        if self.freqs is not None:
            q = rotate(q, self.freqs)
        q = rms_norm(q, b["query_ln.weight"])
        q *= self.scale
        return q

    def keys_values(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Normed inputs (…, T, E) → keys and values (…, heads, T, d_head): what a KV cache
        holds."""
        b = self.block
        k = self.split(linear(x, b["k_proj.weight"], b["k_proj.bias"]))
        if self.freqs is not None:
            k = rotate(k, self.freqs)
        k = rms_norm(k, b["key_ln.weight"])
        v = self.split(linear(x, b["v_proj.weight"], b["v_proj.bias"]))
        return k, v

    def attend(self, q: np.ndarray, k: np.ndarray, v: np.ndarray) -> np.ndarray:
        """Softmax attention of queries over keys/values, heads merged, out projection:
        (…, T, E)."""
        out = softmax(q @ k.swapaxes(-1, -2)) @ v
        out = out.swapaxes(-3, -2)
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
        hidden = silu(linear(xn, b["linear1_gate.weight"], b["linear1_gate.bias"]))
        hidden *= linear(xn, b["linear1.weight"], b["linear1.bias"])
        return rms_norm(linear(hidden, b["linear2.weight"], b["linear2.bias"]),
                        b["post_ff_ln.weight"])

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


def chunks(n: int, size: int) -> list[slice]:
    """``slice`` objects covering 0 … n−1 in pieces of at most ``size``."""
    size = max(1, int(size))
    return [slice(i, min(i + size, n)) for i in range(0, n, size)]
