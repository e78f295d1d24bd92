"""The numeric pieces every TabICL stage is built of, float32 numpy.

Names follow the package's modules (``tabicl._model.layers`` / ``attention`` / ``ssmax`` /
``rope``): a pre-norm multi-head attention block (``MultiheadAttentionBlock``: attention on
LayerNorm'd inputs, residual, then a GELU feed-forward on a LayerNorm'd residual), its
query scaling (SSMax / QASSMax), rotary position encoding, exact (erf) GELU. Each function
takes the block's tensors as a :class:`Block` view of the state dict, so a stage module
only says which tensors form which block.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

LN_EPS = 1e-5
"""``nn.LayerNorm``'s and ``nn.TransformerEncoderLayer``'s default epsilon."""
SSMAX_KINDS = ("none", "ssmax", "ssmax-mlp", "ssmax-mlp-elementwise", "qassmax-mlp",
               "qassmax-mlp-elementwise")


def ssmax_kind(value: bool | str) -> str:
    """A config's ``*_ssmax`` as a kind name (``True`` is QASSMax elementwise)."""
    if isinstance(value, bool):
        return "qassmax-mlp-elementwise" if value else "none"
    return value


def gelu(x: np.ndarray) -> np.ndarray:
    """Exact GELU, ``x · Φ(x)`` with the error function (torch's default ``gelu``)."""
    from scipy.special import erf

    out = (x * np.float32(1 / math.sqrt(2))).astype(np.float32, copy=False)
    erf(out, out=out)  # one scratch array, every pass in place (0.5 · is exact: same bits)
    out += np.float32(1.0)
    out *= x
    out *= np.float32(0.5)
    return out


def linear(x: np.ndarray, weight: np.ndarray, bias: np.ndarray | None = None) -> np.ndarray:
    """``x @ weight.T + bias`` (torch's ``F.linear``)."""
    out = (x.reshape(-1, x.shape[-1]) @ weight.T).reshape(*x.shape[:-1], weight.shape[0])
    if bias is not None:
        out += bias
    return out


def layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray | None,
               eps: float = LN_EPS) -> np.ndarray:
    """LayerNorm over the last axis (biased variance, as torch)."""
    mean = x.mean(axis=-1, keepdims=True)
    out = x - mean
    std = np.mean(out * out, axis=-1, keepdims=True)
    std += np.float32(eps)
    np.sqrt(std, out=std)
    out /= std  # in place: one array of x's size besides the square
    out *= weight
    if bias is not None:
        out += bias
    return out


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """Numerically stable softmax, in place on ``x`` (a scratch array)."""
    x -= x.max(axis=axis, keepdims=True)
    np.exp(x, out=x)
    x /= x.sum(axis=axis, keepdims=True)
    return x


class Block:
    """A view of the state dict under one prefix: ``block["attn.in_proj_weight"]``."""

    def __init__(self, tensors: dict[str, np.ndarray], prefix: str):
        self.tensors, self.prefix = tensors, prefix

    def __getitem__(self, name: str) -> np.ndarray:
        return self.tensors[self.prefix + name]

    def get(self, name: str) -> np.ndarray | None:
        return self.tensors.get(self.prefix + name)

    def sub(self, name: str) -> Block:
        return Block(self.tensors, f"{self.prefix}{name}.")


def mlp(block: Block, x: np.ndarray) -> np.ndarray:
    """``Sequential(Linear, GELU, Linear)`` with tensors ``0.*`` and ``2.*``."""
    return linear(gelu(linear(x, block["0.weight"], block["0.bias"])),
                  block["2.weight"], block["2.bias"])


def ssmax_scale(block: Block | None, kind: str, q: np.ndarray, n: int) -> np.ndarray:
    """Queries ``q`` (…, heads, T, head_dim) scaled by the SSMax variant ``kind`` for a
    key sequence of length ``n`` (``tabicl._model.ssmax``); ``none`` returns ``q``."""
    if kind == "none" or block is None:
        return q
    heads, head_dim = q.shape[-3], q.shape[-1]
    logn = np.full((1, 1), math.log(max(n, 1)), dtype=np.float32)
    if kind == "ssmax":
        return q * (block["scales"] * logn[0, 0]).reshape(heads, 1, 1)
    if kind.startswith("ssmax-mlp"):
        scales = mlp(block.sub("mlp"), logn)
        shape = (heads, 1, head_dim) if kind.endswith("elementwise") else (heads, 1, 1)
        return q * scales.reshape(shape)
    base = mlp(block.sub("base_mlp"), logn)
    base = base.reshape((heads, 1, head_dim) if kind.endswith("elementwise") else (heads, 1, 1))
    modulation = np.tanh(mlp(block.sub("query_mlp"), q))
    modulation += np.float32(1.0)
    return q * (base * modulation)


def rotate(x: np.ndarray, freqs: np.ndarray, interleaved: bool) -> np.ndarray:
    """Rotary position encoding of ``x`` (…, T, head_dim) at positions 0 … T−1.

    ``freqs`` is the stored ``rope.freqs`` (head_dim / 2). Split-half layout
    (``interleaved=False``, TabICLv2) rotates the pair (i, i + head_dim/2); the interleaved
    layout (TabICLv1) rotates (2i, 2i + 1).
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


@dataclass(frozen=True)
class Attention:
    """One ``MultiheadAttention``: its block of tensors, head count and SSMax kind."""

    block: Block
    heads: int
    ssmax: str = "none"

    def split(self, x: np.ndarray) -> np.ndarray:
        """(…, T, E) → (…, heads, T, head_dim)."""
        *lead, t, e = x.shape
        return x.reshape(*lead, t, self.heads, e // self.heads).swapaxes(-3, -2)

    def queries(self, x: np.ndarray) -> np.ndarray:
        e = x.shape[-1]
        w, b = self.block["in_proj_weight"], self.block["in_proj_bias"]
        return self.split(linear(x, w[:e], b[:e]))

    def keys_values(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The projected keys and values of ``x`` (what a KV cache holds)."""
        e = x.shape[-1]
        w, b = self.block["in_proj_weight"], self.block["in_proj_bias"]
        kv = linear(x, w[e:], b[e:])
        return self.split(kv[..., :e]), self.split(kv[..., e:])

    def attend(self, q: np.ndarray, k: np.ndarray, v: np.ndarray) -> np.ndarray:
        """Scaled-dot-product attention of projected ``q`` over ``k``/``v``, merged heads
        and the output projection applied: (…, T, E)."""
        q = ssmax_scale(self.block.sub("ssmax_layer") if self.ssmax != "none" else None,
                        self.ssmax, q, k.shape[-2])
        scores = q @ k.swapaxes(-1, -2)
        scores *= np.float32(1 / math.sqrt(q.shape[-1]))
        out = softmax(scores) @ v
        out = out.swapaxes(-3, -2)
        out = out.reshape(*out.shape[:-2], -1)
        return linear(out, self.block["out_proj.weight"], self.block["out_proj.bias"])


@dataclass(frozen=True)
class AttentionBlock:
    """A ``MultiheadAttentionBlock`` (pre-norm when ``norm_first``, as TabICL's configs)."""

    block: Block
    heads: int
    ssmax: str = "none"
    norm_first: bool = True

    @property
    def attention(self) -> Attention:
        return Attention(self.block.sub("attn"), self.heads, self.ssmax)

    def norm(self, which: str, x: np.ndarray) -> np.ndarray:
        return layer_norm(x, self.block[f"{which}.weight"], self.block.get(f"{which}.bias"))

    def feed_forward(self, x: np.ndarray) -> np.ndarray:
        b = self.block
        return linear(gelu(linear(x, b["linear1.weight"], b["linear1.bias"])),
                      b["linear2.weight"], b["linear2.bias"])

    def cache(self, kv_source: np.ndarray,
              rope: tuple[np.ndarray, bool] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Keys and values of ``kv_source`` as this block attends to them (normed first)."""
        x = self.norm("norm1", kv_source) if self.norm_first else kv_source
        k, v = self.attention.keys_values(x)
        if rope is not None:
            k = rotate(k, *rope)
        return k, v

    def __call__(self, q_source: np.ndarray, kv: tuple[np.ndarray, np.ndarray],
                 rope: tuple[np.ndarray, bool] | None = None) -> np.ndarray:
        """The block on queries ``q_source`` (…, T, E) over cached keys/values ``kv``."""
        attention = self.attention
        x = self.norm("norm1", q_source) if self.norm_first else q_source
        q = attention.queries(x)
        if rope is not None:
            q = rotate(q, *rope)
        out = attention.attend(q, *kv)
        if self.norm_first:
            out += q_source
            out += self.feed_forward(self.norm("norm2", out))
            return out
        out = self.norm("norm1", out + q_source)
        return self.norm("norm2", out + self.feed_forward(out))


def chunks(n: int, size: int) -> list[slice]:
    """``slice`` objects covering 0 … n−1 in pieces of at most ``size``."""
    size = max(1, int(size))
    return [slice(i, min(i + size, n)) for i in range(0, n, size)]


def as_float32(x: Any) -> np.ndarray:
    return np.ascontiguousarray(x, dtype=np.float32)
