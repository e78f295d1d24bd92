"""In-context learning (``ICLTransformerBlock`` × ``nlayers``, then ``output_norm``): row
representations (Cl · E = D numbers), the context rows' with their target's embedding
(``icl_y_encoder``) added, through pre-norm blocks whose keys and values come from the
context rows only (softmax scaling for N keys on every layer).

Keys and values have ``icl_num_kv_heads`` heads (all ``icl_num_heads`` when unset; query
head h reads KV head ``h // (heads / kv_heads)``). Where ``icl_num_kv_heads_test`` is set,
the context rows attend with every KV head but query rows with the first
``icl_num_kv_heads_test`` only; the cache keeps just those (as the package's
``KVCacheEntry``). The context's keys and values per layer are the ICL stage's cache,
computed once per split (:func:`fit_context`); any batch of query rows then goes through
alone (:func:`query`). The cache stays float32 (the package's default int8 cache moves
outputs; parity is with ``fit_mode="low_memory"``).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from .. import threads
from ..ops import context_keys_values
from .cells import embed_target
from .layers import (
    Block,
    attend,
    chunks,
    feed_forward,
    gelu,
    in_shares,
    linear,
    merge_heads,
    norm,
    split_heads,
)

SCRATCH_FLOATS = 1 << 25
"""Attention scores one chunk of context rows may hold at once (128 MiB)."""


@dataclass(frozen=True)
class ICLLayer:
    block: Block
    heads: int
    kv_heads: int
    test_heads: int

    @cached_property
    def kv_weight(self) -> np.ndarray:
        """The key and value projections stacked (2 · kv width, D): one product for both."""
        a = self.block.sub("icl_attention")
        return np.concatenate([a["k_projection.weight"], a["v_projection.weight"]])

    def keys_values(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Normed rows ``x`` → their keys and values (kv_heads, rows, d) each."""
        kv = linear(x, self.kv_weight)
        width = kv.shape[-1] // 2
        return (split_heads(kv[..., :width], self.kv_heads),
                split_heads(kv[..., width:], self.kv_heads))

    cache = keys_values  # ``ops.context_keys_values`` calls it on row chunks

    def attention_share(self, x: np.ndarray, kv_heads: slice, n_kv: int,
                        kv: tuple[np.ndarray, np.ndarray] | None
                        ) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray]]:
        """The attention of normed rows ``x`` (T, D) for the key/value heads ``kv_heads``
        (of ``n_kv``) and the query heads that read them: their share of the output
        projection (T, D) and their keys and values (given in ``kv``, else projected from
        ``x``)."""
        a = self.block.sub("icl_attention")
        d = x.shape[-1] // self.heads
        group = self.heads // n_kv
        q_cols = slice(kv_heads.start * group * d, kv_heads.stop * group * d)
        kv_rows = slice(kv_heads.start * d, kv_heads.stop * d)
        count = kv_heads.stop - kv_heads.start
        if kv is None:
            k = split_heads(linear(x, a["k_projection.weight"][kv_rows]), count)
            v = split_heads(linear(x, a["v_projection.weight"][kv_rows]), count)
        else:
            k, v = kv[0][kv_heads], kv[1][kv_heads]
        q = split_heads(linear(x, a["q_projection.weight"][q_cols]), count * group)
        out = attend(q, k, v, a.sub("softmax_scaling_layer"),
                     slice(kv_heads.start * group, kv_heads.stop * group))
        return linear(merge_heads(out), a["out_projection.weight"][:, q_cols]), (k, v)

    def by_shares(self, h: np.ndarray, x: np.ndarray, kv: tuple[np.ndarray, np.ndarray] | None,
                  n: int) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray]]:
        """The layer on rows ``h`` (T, D), normed ``x``, as ``n`` near-equal shares of its
        key/value heads (with their query heads), then of its feed-forward's hidden
        units, on the worker threads, every share on all T rows, the shares' projections
        summed: equal to :meth:`__call__` up to float32 round-off. Without ``kv`` the rows
        attend to themselves with every key/value head. Returns the output and the
        keys/values read."""
        n_kv = self.kv_heads if kv is None else kv[0].shape[-3]
        out, new = in_shares(n, n_kv, lambda heads: self.attention_share(x, heads, n_kv, kv),
                             self.block["mlp.0.weight"].shape[0], self.feed_forward_share, h,
                             lambda out: norm(self.block, "layernorm_mlp", out), kv is None)
        return out, kv if new is None else new

    def feed_forward_share(self, x: np.ndarray, units: slice) -> np.ndarray:
        """The feed-forward's hidden units ``units`` alone: their share of its output."""
        mlp = self.block.sub("mlp")
        return linear(gelu(linear(x, mlp["0.weight"][units])), mlp["2.weight"][:, units])

    def __call__(self, h: np.ndarray, x: np.ndarray,
                 kv: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
        """Rows ``h`` (rows, D), normed ``x``, over keys/values ``kv`` → the block's output."""
        a = self.block.sub("icl_attention")
        q = split_heads(linear(x, a["q_projection.weight"]), self.heads)
        out = attend(q, *kv, a.sub("softmax_scaling_layer"))
        out = h + linear(merge_heads(out), a["out_projection.weight"])
        out += feed_forward(self.block.sub("mlp"), norm(self.block, "layernorm_mlp", out))
        return out


class ICLStage:
    """The ICL transformer's tensors and settings, read from a checkpoint's config."""

    def __init__(self, tensors: dict[str, np.ndarray], config: dict):
        self.root = Block(tensors, "")
        self.y_encoder = Block(tensors, "icl_y_encoder.")
        self.classification = config["max_num_classes"] >= 2
        heads = int(config["icl_num_heads"])
        kv_heads = int(config["icl_num_kv_heads"] or heads)
        test_heads = int(config["icl_num_kv_heads_test"] or kv_heads)
        self.heads, self.kv_heads, self.test_heads = heads, kv_heads, test_heads
        self.layers = [ICLLayer(self.root.sub(f"icl_blocks.{i}"), heads, kv_heads, test_heads)
                       for i in range(int(config["nlayers"]))]

    def chunk_rows(self, n_keys: int) -> int:
        return max(1, SCRATCH_FLOATS // max(self.heads * n_keys, 1))


@dataclass(frozen=True)
class ICLCache:
    """Per layer, the context rows' keys and values as query rows read them:
    (test_heads, N, d) each."""

    kv: tuple[tuple[np.ndarray, np.ndarray], ...]


def _through(stage: ICLStage, layer: ICLLayer, h: np.ndarray,
             kv: tuple[np.ndarray, np.ndarray], x: np.ndarray | None = None) -> np.ndarray:
    """One layer on rows ``h`` (``x``: their ``layernorm``, when already computed)."""
    if x is None:
        x = norm(layer.block, "layernorm", h)
    size = threads.spread(h.shape[0], stage.chunk_rows(kv[0].shape[-2]))
    if h.shape[0] <= size:
        return layer(h, x, kv)
    return np.concatenate(threads.map_chunks(lambda r: layer(h[r], x[r], kv),
                                             chunks(h.shape[0], size)))


def shares(stage: ICLStage, rows: int) -> int:
    """Into how many shares of heads (:meth:`ICLLayer.by_shares`) a layer on ``rows`` rows
    is split across the worker threads: all of them below ``threads.SMALL_STAGE_ROWS``
    rows, where row chunks would make each thread's products too small; else 1 (row
    chunks)."""
    n = min(threads.count(), stage.test_heads)
    return n if n > 1 and rows < threads.SMALL_STAGE_ROWS else 1


def fit_context(stage: ICLStage, r_train: np.ndarray, y_train: np.ndarray,
                layers: list[np.ndarray] | None = None) -> tuple[np.ndarray, ICLCache]:
    """Context rows' representations (N, D) with targets (N,) → their output after the last
    layer and ``output_norm`` (N, D), and the per-layer cache. ``layers`` collects each
    layer's output."""
    h = r_train + embed_target(stage.y_encoder, y_train, stage.classification)
    n_shares = shares(stage, h.shape[0])
    cached = []
    for layer in stage.layers:
        if n_shares > 1:
            h, (k, v) = layer.by_shares(h, norm(layer.block, "layernorm", h), None, n_shares)
        else:
            x = norm(layer.block, "layernorm", h)
            k, v = context_keys_values(layer, x)  # row chunks on the pool
            h = _through(stage, layer, h, (k, v), x)
        cached.append((np.ascontiguousarray(k[:stage.test_heads]),
                       np.ascontiguousarray(v[:stage.test_heads])))
        if layers is not None:
            layers.append(h)
    return norm(stage.root, "output_norm", h), ICLCache(tuple(cached))


def query(stage: ICLStage, cache: ICLCache, r: np.ndarray,
          layers: list[np.ndarray] | None = None) -> np.ndarray:
    """Query rows' representations (M, D) → their output after ``output_norm`` (M, D)."""
    h = r
    n_shares = shares(stage, h.shape[0])
    for layer, kv in zip(stage.layers, cache.kv, strict=True):
        if n_shares > 1:
            h = layer.by_shares(h, norm(layer.block, "layernorm", h), kv, n_shares)[0]
        else:
            h = _through(stage, layer, h, kv)
        if layers is not None:
            layers.append(h)
    return norm(stage.root, "output_norm", h)
