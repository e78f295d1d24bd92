"""The row stage (``ColumnAggregator``): within each row, CLS tokens
(``feat_agg_num_cls_tokens`` of them) and the row's F column embeddings attend to each other
with rotary positions (split-half layout, base ``feat_agg_rope_base``; positions 0 … Cl − 1
are the CLS tokens) through pre-norm transformer blocks; the last block updates the CLS
tokens only (queries: the CLS tokens, keys and values: the whole sequence). The CLS
tokens through ``out_ln``, concatenated, are the row's representation (Cl · E numbers).

Rows are independent, so they go through in chunks of at most :data:`SCRATCH_FLOATS`.
"""

from __future__ import annotations

import numpy as np

from .. import threads
from .layers import (
    Block,
    attend,
    chunks,
    feed_forward,
    linear,
    merge_heads,
    norm,
    rotate,
    split_heads,
)

SCRATCH_FLOATS = 1 << 24


class RowStage:
    """The row stage's tensors and settings, read from a checkpoint's config."""

    def __init__(self, tensors: dict[str, np.ndarray], config: dict):
        self.root = Block(tensors, "column_aggregator.")
        self.n_cls = int(config["feat_agg_num_cls_tokens"])
        self.heads = int(config["feat_agg_num_heads"])
        n_blocks = int(config["feat_agg_num_blocks"])
        if n_blocks < 1:
            raise ValueError("TabPFN v3's row stage needs at least one block "
                             "(feat_agg_num_blocks ≥ 1), as the package's forward does")
        self.blocks = [self.root.sub(f"blocks.{i}") for i in range(n_blocks)]
        self.freqs = self.root.get("rope.freqs") if config["use_rope"] else None

    def chunk_rows(self, n_tokens: int, embed_dim: int) -> int:
        per_row = n_tokens * (self.heads * n_tokens + 8 * embed_dim)
        return max(1, SCRATCH_FLOATS // max(per_row, 1))

    def _rope(self, x: np.ndarray) -> np.ndarray:
        return x if self.freqs is None else rotate(x, self.freqs, False)

    def block(self, block: Block, tokens: np.ndarray, n_queries: int | None) -> np.ndarray:
        """One ``TransformerBlock`` on ``tokens`` (rows, S, E); ``n_queries``: only the first
        so many tokens are updated (``forward_cross``)."""
        a = block.sub("attention")
        x = norm(block, "layernorm", tokens)
        k = self._rope(split_heads(linear(x, a["k_projection.weight"]), self.heads))
        v = split_heads(linear(x, a["v_projection.weight"]), self.heads)
        if n_queries is not None:
            x, tokens = x[:, :n_queries], tokens[:, :n_queries]
        q = self._rope(split_heads(linear(x, a["q_projection.weight"]), self.heads))
        out = tokens + linear(merge_heads(attend(q, k, v)), a["out_projection.weight"])
        out += feed_forward(block.sub("mlp"), norm(block, "layernorm_mlp", out))
        return out


def _rows_through(stage: RowStage, cells: np.ndarray) -> np.ndarray:
    """One chunk of rows' column embeddings (t, F, E) → their representations (t, Cl · E)."""
    cls = stage.root["cls_tokens"]
    tokens = np.concatenate([np.broadcast_to(cls, (cells.shape[0], *cls.shape)), cells], axis=1)
    for i, block in enumerate(stage.blocks):
        last = i == len(stage.blocks) - 1
        tokens = stage.block(block, tokens, stage.n_cls if last else None)
    tokens = norm(stage.root, "out_ln", tokens)
    return tokens.reshape(tokens.shape[0], -1)


def aggregate(stage: RowStage, embeddings: np.ndarray) -> np.ndarray:
    """Column embeddings (rows, F, E) → row representations (rows, Cl · E); the row chunks
    run on the worker threads."""
    t, f, e = embeddings.shape
    out = np.empty((t, stage.n_cls * e), dtype=np.float32)
    parts = chunks(t, threads.spread(t, stage.chunk_rows(f + stage.n_cls, e)))
    for rows, rep in zip(parts, threads.map_chunks(
            lambda rows: _rows_through(stage, embeddings[rows]), parts), strict=True):
        out[rows] = rep
    return out
