"""The numeric pieces every TabICL stage is built of, float32 numpy.

Names follow the package's modules (``tabicl._model.layers`` / ``attention`` / ``ssmax`` /
``rope``): a pre-norm multi-head attention block (``MultiheadAttentionBlock``: attention on
LayerNorm'd inputs, residual, then a GELU feed-forward on a LayerNorm'd residual), its
query scaling (SSMax / QASSMax). Each function takes the block's tensors as a
:class:`Block` view of the state dict, so a stage module only says which tensors form which
block. The operators themselves (linear, exact GELU, LayerNorm, softmax, rotary positions)
are the shared ones of :mod:`arenalite.models.ops`, re-exported here for the stage modules.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..ops import (
    LN_EPS,
    Block,
    as_float32,
    attention,
    chunks,
    gelu,
    in_shares,
    layer_norm,
    linear,
    mlp,
    query_aware_scale,
    rotate,
    softmax,
)

__all__ = ["LN_EPS", "SSMAX_KINDS", "Attention", "AttentionBlock", "Block", "as_float32",
           "attention",
           "chunks", "gelu", "layer_norm", "linear", "mlp", "rotate", "softmax", "ssmax_kind",
           "ssmax_scale"]

SSMAX_KINDS = ("none", "ssmax", "ssmax-mlp", "ssmax-mlp-elementwise", "qassmax-mlp",
               "qassmax-mlp-elementwise")


def ssmax_kind(value: bool | str) -> str:
    """A config's ``*_ssmax`` as a kind name (``True`` is QASSMax elementwise)."""
    if isinstance(value, bool):
        return "qassmax-mlp-elementwise" if value else "none"
    return value


def ssmax_scale(block: Block | None, kind: str, q: np.ndarray, n: int,
                heads: slice = slice(None)) -> np.ndarray:
    """Queries ``q`` (…, heads, T, head_dim) scaled by the SSMax variant ``kind`` for a
    key sequence of length ``n`` (``tabicl._model.ssmax``); ``none`` returns ``q``.
    ``heads``: which of the block's heads ``q`` holds (all by default)."""
    if kind == "none" or block is None:
        return q
    head_dim = q.shape[-1]
    logn = np.full((1, 1), math.log(max(n, 1)), dtype=np.float32)
    if kind == "ssmax":
        return q * (block["scales"] * logn[0, 0]).reshape(-1, 1, 1)[heads]
    if kind.startswith("ssmax-mlp"):
        scales = mlp(block.sub("mlp"), logn)
        width = head_dim if kind.endswith("elementwise") else 1
        return q * scales.reshape(-1, 1, width)[heads]
    return query_aware_scale(block, q, n, kind.endswith("elementwise"), heads)


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
        out = attention(q, k, v).swapaxes(-3, -2)
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

    def can_share(self) -> bool:
        """Whether :meth:`by_shares` can run this block (pre-norm, no RoPE: the ICL's)."""
        return self.norm_first

    def attention_share(self, x: np.ndarray, heads: slice,
                        kv: tuple[np.ndarray, np.ndarray] | None
                        ) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray]]:
        """The attention of normed rows ``x`` (T, E) for the heads ``heads`` alone: their
        share of the output projection (T, E; no bias) and the keys and values they read
        (``kv``'s heads, or projected from ``x`` itself when ``kv`` is None)."""
        a = self.attention.block
        e, count = x.shape[-1], heads.stop - heads.start
        d = e // self.heads
        cols = slice(heads.start * d, heads.stop * d)
        w, b = a["in_proj_weight"], a["in_proj_bias"]

        def project(offset: int) -> np.ndarray:
            rows = slice(offset + cols.start, offset + cols.stop)
            return linear(x, w[rows], b[rows]).reshape(-1, count, d).swapaxes(0, 1)

        k, v = (project(e), project(2 * e)) if kv is None else (kv[0][heads], kv[1][heads])
        q = ssmax_scale(a.sub("ssmax_layer") if self.ssmax != "none" else None, self.ssmax,
                        project(0), k.shape[-2], heads)
        out = attention(q, k, v).swapaxes(0, 1).reshape(x.shape[0], -1)
        return linear(out, a["out_proj.weight"][:, cols]), (k, v)

    def feed_forward_share(self, x: np.ndarray, units: slice) -> np.ndarray:
        """The feed-forward's hidden units ``units`` alone: their share of its output (no
        bias)."""
        b = self.block
        hidden = gelu(linear(x, b["linear1.weight"][units], b["linear1.bias"][units]))
        return linear(hidden, b["linear2.weight"][:, units])

    def by_shares(self, q_source: np.ndarray, kv: tuple[np.ndarray, np.ndarray] | None,
                  n: int) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray]]:
        """The pre-norm block on rows ``q_source`` (T, E), as ``n`` near-equal shares of
        its heads and then of its feed-forward's hidden units on the worker threads, the
        shares' projections summed: for a few rows, where a chunk of rows would leave each
        thread a product too small for BLAS to run well (every share keeps all T rows).
        Equal to :meth:`__call__` up to float32 round-off. Without ``kv`` the rows attend
        to themselves. Returns the output and the keys/values read (heads, N, d_head)."""
        x = self.norm("norm1", q_source)
        out, new = in_shares(n, self.heads, lambda heads: self.attention_share(x, heads, kv),
                             self.block["linear1.weight"].shape[0], self.feed_forward_share,
                             q_source, lambda out: self.norm("norm2", out), kv is None,
                             self.attention.block["out_proj.bias"], self.block["linear2.bias"])
        return out, kv if new is None else new

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
