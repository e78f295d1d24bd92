"""The column stage (``FeatureDistributionEmbedder``): per column, a stack of induced
self-attention blocks over the rows.

A block's inducing points (``inducing_vectors``, I of them) attend to the column's context
rows (``cross_attn_block1``, with the softmax scaling for N keys), giving the hidden points
(F, I, E); then every row attends to those hidden points (``cross_attn_block2``). Both are
pre-norm cross-attention blocks: ``x + attn(norm_q(x), norm_kv(ctx))``, then
``+ mlp(norm2(·))``. The hidden points depend on the context rows alone: they, and the keys
and values ``cross_attn_block2`` projects from them, are the column stage's cache,
computed once per split (:func:`embed_context`); query rows then go through alone
(:func:`embed_queries`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from .. import threads
from .cells import CellStage, embed_target
from .layers import Block, attend, chunks, feed_forward, linear, merge_heads, norm, split_heads

SCRATCH_FLOATS = 1 << 25
"""Floats of intermediate activations one column chunk of context rows may hold."""


@dataclass(frozen=True)
class CrossBlock:
    """A ``CrossAttentionBlock``: its tensors, heads and whether queries are scaled."""

    block: Block
    heads: int
    scaled: bool

    @cached_property
    def kv_weight(self) -> np.ndarray:
        """The key and value projections stacked: one product for both."""
        a = self.block.sub("attn")
        return np.concatenate([a["k_projection.weight"], a["v_projection.weight"]])

    def keys_values(self, ctx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Keys and values (…, heads, J, d) of the context ``ctx`` (…, J, E)."""
        kv = linear(norm(self.block, "layernorm_kv", ctx), self.kv_weight)
        width = kv.shape[-1] // 2
        return (split_heads(kv[..., :width], self.heads),
                split_heads(kv[..., width:], self.heads))

    def __call__(self, x: np.ndarray, kv: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
        a = self.block.sub("attn")
        q = split_heads(linear(norm(self.block, "layernorm_q", x), a["q_projection.weight"]),
                        self.heads)
        scaling = a.sub("softmax_scaling_layer") if self.scaled else None
        out = x + linear(merge_heads(attend(q, *kv, scaling)), a["out_projection.weight"])
        out += feed_forward(self.block.sub("mlp"), norm(self.block, "layernorm2", out))
        return out


@dataclass(frozen=True)
class ColumnCache:
    """Per induced block: the hidden points (F, I, E) and their keys and values as
    ``cross_attn_block2`` reads them, each (F, heads, I, d)."""

    hidden: tuple[np.ndarray, ...]
    kv: tuple[tuple[np.ndarray, np.ndarray], ...]


class ColumnStage:
    """The column stage's tensors and settings, read from a checkpoint's config."""

    def __init__(self, tensors: dict[str, np.ndarray], config: dict):
        self.cells = CellStage(tensors, config)
        self.y_encoder = Block(tensors, "col_y_encoder.")
        self.classification = config["max_num_classes"] >= 2
        heads = int(config["dist_embed_num_heads"])
        self.heads, self.embed_dim = heads, int(config["embed_dim"])
        self.inducing = int(config["dist_embed_num_inducing_points"])
        root = Block(tensors, "feature_distribution_embedder.")
        self.blocks = [(root.sub(f"layers.{i}")["inducing_vectors"],
                        CrossBlock(root.sub(f"layers.{i}.cross_attn_block1"), heads, True),
                        CrossBlock(root.sub(f"layers.{i}.cross_attn_block2"), heads, False))
                       for i in range(int(config["dist_embed_num_blocks"]))]

    def chunk_columns(self, n_rows: int) -> int:
        per_column = n_rows * (8 * self.embed_dim + 2 * self.heads * self.inducing)
        return max(1, SCRATCH_FLOATS // max(per_column, 1))


def _columns_through(stage: ColumnStage, grouped: np.ndarray, y_emb: np.ndarray,
                     cols: slice) -> tuple[np.ndarray, list[np.ndarray],
                                           list[tuple[np.ndarray, np.ndarray]]]:
    """One chunk of columns' context cells → their embeddings (cols, N, E) and, per induced
    block, the hidden points and their keys and values."""
    x = stage.cells.embed(np.ascontiguousarray(grouped[:, cols].transpose(1, 0, 2)))
    x += y_emb
    hidden, kvs = [], []
    for inducing, first, second in stage.blocks:
        ind = np.broadcast_to(inducing, (x.shape[0], *inducing.shape))
        h = first(ind, first.keys_values(x))
        kv = second.keys_values(h)
        hidden.append(h)
        kvs.append(kv)
        x = second(x, kv)
    return x, hidden, kvs


def embed_context(stage: ColumnStage, grouped: np.ndarray,
                  y_train: np.ndarray) -> tuple[np.ndarray, ColumnCache]:
    """Context rows' grouped cells (N, F, G') with targets (N,) → their column embeddings
    (N, F, E) and the cache; the column chunks run on the worker threads."""
    n, f = grouped.shape[:2]
    y_emb = embed_target(stage.y_encoder, y_train, stage.classification)
    out = np.empty((n, f, stage.embed_dim), dtype=np.float32)
    parts = chunks(f, threads.spread(f, stage.chunk_columns(n)))
    done = threads.map_chunks(lambda cols: _columns_through(stage, grouped, y_emb, cols), parts)
    for cols, (x, _, _) in zip(parts, done, strict=True):
        out[:, cols] = x.transpose(1, 0, 2)
    blocks = range(len(stage.blocks))
    cache = ColumnCache(tuple(np.concatenate([d[1][b] for d in done]) for b in blocks),
                        tuple((np.concatenate([d[2][b][0] for d in done]),
                               np.concatenate([d[2][b][1] for d in done])) for b in blocks))
    return out, cache


def embed_queries(stage: ColumnStage, cache: ColumnCache, grouped: np.ndarray) -> np.ndarray:
    """Query rows' grouped cells (M, F, G') → column embeddings (M, F, E), attending to the
    cached hidden points."""
    x = stage.cells.embed(np.ascontiguousarray(grouped.transpose(1, 0, 2)))
    for (_, _, second), kv in zip(stage.blocks, cache.kv, strict=True):
        x = second(x, kv)
    return np.ascontiguousarray(x.transpose(1, 0, 2))
