"""A column stage (``ColEmbedding``): each column's cells, as a set over the rows, through
``col_num_blocks`` induced set attention blocks, then a linear map and an RMSNorm.

An induced block (``InducedSelfAttentionBlock``) first lets its ``col_num_inds`` learned
points attend to the column's context rows (``mab1``, keys masked to the context), then
lets every row attend to those points (``mab2``). So a column's points, and the keys and
values ``mab2`` takes from them, depend on the context alone: :func:`fit_context` keeps
them per block (the column KV cache) and :func:`queries` runs any query rows through
them. Columns are independent: they go in chunks on the worker threads.

TabFM has two column stages, before and after the first row stage (``col_embedder``,
``col_embedder_2``; the second also embeds the CLS columns).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import threads
from .layers import AttentionBlock, Block, chunks, linear, rms_norm

SCRATCH_FLOATS = 1 << 24
"""Attention scores and feed-forward activations one chunk of columns may hold (64 MiB)."""


class ColumnStage:
    """One column stage's tensors (``prefix`` ``col_embedder.`` or ``col_embedder_2.``)."""

    def __init__(self, tensors: dict[str, np.ndarray], config: dict, prefix: str):
        self.root = Block(tensors, prefix)
        self.heads = int(config["col_nhead"])
        self.inds = int(config["col_num_inds"])
        self.ff = int(config["embed_dim"]) * int(config["ff_factor"])
        self.blocks = []
        for i in range(int(config["col_num_blocks"])):
            b = self.root.sub(f"tf_col.blocks.{i}")
            mab1 = AttentionBlock(b.sub("mab1"), self.heads)
            self.blocks.append((b["ind_vectors"], mab1, AttentionBlock(b.sub("mab2"), self.heads),
                                mab1.queries(b["ind_vectors"])))

    def finish(self, src: np.ndarray) -> np.ndarray:
        return rms_norm(linear(src, self.root["out_w.weight"], self.root["out_w.bias"]),
                        self.root["ln_w.weight"])

    def chunk_columns(self, n_rows: int) -> int:
        """Columns one chunk may hold for ``n_rows`` rows (scores and activations)."""
        e = self.root["out_w.weight"].shape[0]
        per_column = n_rows * max(self.heads * self.inds, 2 * self.ff + 4 * e)
        return max(1, SCRATCH_FLOATS // max(per_column, 1))


@dataclass(frozen=True)
class ColumnCache:
    """``mab2``'s keys and values per block, each (columns, heads, inds, d_head)."""

    kv: tuple[tuple[np.ndarray, np.ndarray], ...]


def _context_columns(stage: ColumnStage, src: np.ndarray):
    """Context cells of some columns (c, N, E) → outputs (c, N, E) and the cache."""
    kv_all = []
    for ind, mab1, mab2, q_ind in stage.blocks:
        kv1 = mab1.cache(src)
        hidden = mab1(np.broadcast_to(ind, (src.shape[0], *ind.shape)), kv1, q=q_ind)
        del kv1
        kv2 = mab2.cache(hidden)
        kv_all.append(kv2)
        src = mab2(src, kv2)
    return stage.finish(src), kv_all


def fit_context(stage: ColumnStage, x: np.ndarray,
                in_place: bool = False) -> tuple[np.ndarray, ColumnCache]:
    """Context rows' embeddings (N, C, E) → the stage's output (N, C, E) and its cache.
    Each chunk of columns writes its part of the output (``in_place``: into ``x`` itself,
    each chunk having copied its columns out first; no second array of x's size)."""
    n, c, e = x.shape
    out = x if in_place else np.empty((n, c, e), np.float32)

    def run(cols: slice):
        done, kv = _context_columns(stage, np.ascontiguousarray(x[:, cols].swapaxes(0, 1)))
        out[:, cols] = done.swapaxes(0, 1)
        return kv

    parts = chunks(c, threads.spread(c, stage.chunk_columns(n)))
    kvs = threads.map_chunks(run, parts)
    kv = tuple((np.concatenate([k[i][0] for k in kvs]), np.concatenate([k[i][1] for k in kvs]))
               for i in range(len(stage.blocks)))
    return out, ColumnCache(kv)


def _query_columns(stage: ColumnStage, cache: ColumnCache, src: np.ndarray,
                   cols: slice) -> np.ndarray:
    for (_, _, mab2, _), (k, v) in zip(stage.blocks, cache.kv, strict=True):
        src = mab2(src, (k[cols], v[cols]))
    return stage.finish(src)


def queries(stage: ColumnStage, cache: ColumnCache, x: np.ndarray) -> np.ndarray:
    """Query rows' embeddings (M, C, E) → the stage's output (M, C, E), from the cache."""
    m, c, e = x.shape
    out = np.empty((m, c, e), np.float32)

    def run(cols: slice) -> None:
        src = np.ascontiguousarray(x[:, cols].swapaxes(0, 1))
        out[:, cols] = _query_columns(stage, cache, src, cols).swapaxes(0, 1)

    threads.map_chunks(run, chunks(c, threads.spread(c, stage.chunk_columns(m))))
    return out
