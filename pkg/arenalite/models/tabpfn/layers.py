"""The numeric pieces TabPFN v3's stages are built of, float32 numpy
(``tabpfn/architectures/tabpfn_v3.py``).

The operators are the shared ones of :mod:`arenalite.models.ops`: the exact GELU,
``F.linear``, the in-place softmax, RMSNorm, rotary positions (split-half layout), the
state-dict view :class:`Block`, row chunks, and the query-aware softmax scaling
(``SoftmaxScalingMLP``: ``q · base_mlp(log n) · (1 + tanh(query_mlp(q)))``, per head and
dimension). What v3 does with them lives here: bias-free RMSNorm (``nn.RMSNorm`` with torch's
default epsilon, float32's machine epsilon), bias-free GELU feed-forwards, separate q/k/v
projections without biases, and grouped keys and values (query head h reads KV head
``h // (heads / kv_heads)``, torch's ``repeat_interleave``).

Attention tensors are laid out (…, heads, rows, head_dim).
"""

from __future__ import annotations

import numpy as np

from .. import ops
from ..ops import (
    Block,
    as_float32,
    attention,
    chunks,
    gelu,
    in_shares,
    linear,
    mlp,
    query_aware_scale,
    rotate,
    softmax,
)

__all__ = ["Block", "as_float32", "attend", "chunks", "feed_forward", "gelu", "linear",
           "merge_heads", "mlp", "rms_norm", "rotate", "softmax", "split_heads",
           "softmax_scaling", "in_shares"]

RMS_EPS = np.float32(np.finfo(np.float32).eps)
"""``nn.RMSNorm(eps=None)`` uses ``torch.finfo(input.dtype).eps``."""


def rms_norm(x: np.ndarray, weight: np.ndarray | None) -> np.ndarray:
    """RMSNorm over the last axis: ``x / √(mean(x²) + eps) · weight``."""
    return ops.rms_norm(x, weight, RMS_EPS)


def norm(block: Block, name: str, x: np.ndarray) -> np.ndarray:
    """The RMSNorm ``name`` of ``block`` (its weight absent without elementwise affine)."""
    return rms_norm(x, block.get(f"{name}.weight"))


def feed_forward(block: Block, x: np.ndarray) -> np.ndarray:
    """v3's ``MLP``: ``Linear(no bias) → GELU → Linear(no bias)``, tensors ``0``/``2``."""
    return linear(gelu(linear(x, block["0.weight"])), block["2.weight"])


def split_heads(x: np.ndarray, heads: int) -> np.ndarray:
    """(…, S, heads · d) → (…, heads, S, d)."""
    *lead, s, e = x.shape
    return x.reshape(*lead, s, heads, e // heads).swapaxes(-3, -2)


def merge_heads(x: np.ndarray) -> np.ndarray:
    """(…, heads, S, d) → (…, S, heads · d)."""
    x = x.swapaxes(-3, -2)
    return x.reshape(*x.shape[:-2], -1)


def softmax_scaling(block: Block | None, q: np.ndarray, n: int,
                    heads: slice = slice(None)) -> np.ndarray:
    """``SoftmaxScalingMLP`` on queries (…, heads, S, d) for ``n`` keys; ``None``: ``q``.
    ``heads``: which of the layer's heads ``q`` holds (all by default)."""
    if block is None:
        return q
    return query_aware_scale(block, q, n, elementwise=True, heads=heads)


def attend(q: np.ndarray, k: np.ndarray, v: np.ndarray,
           scaling: Block | None = None, heads: slice = slice(None)) -> np.ndarray:
    """Scaled-dot-product attention: ``q`` (…, H, S, d) over ``k``/``v`` (…, Hkv, J, d),
    Hkv dividing H (grouped heads), queries first through ``scaling`` (``heads``: which of
    the layer's heads ``q`` holds). → (…, H, S, d)."""
    q = softmax_scaling(scaling, q, k.shape[-2], heads)
    heads, kv_heads = q.shape[-3], k.shape[-3]
    if kv_heads == heads:
        return attention(q, k, v)
    group = heads // kv_heads
    *lead, _, s, d = q.shape
    qg = q.reshape(*lead, kv_heads, group, s, d)
    out = attention(qg, k[..., None, :, :], v[..., None, :, :])
    return out.reshape(*lead, heads, s, d)
