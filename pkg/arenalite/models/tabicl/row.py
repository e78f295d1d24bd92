"""Row interaction (``tabicl._model.interaction.RowInteraction``): within each row, CLS
tokens and the row's column embeddings attend to each other with rotary positions
(split-half layout for TabICLv2), the last block updates the CLS tokens only, and the
LayerNorm'd CLS tokens, concatenated, are the row's representation (C · E numbers).

Rows are independent here, so rows go through in chunks of at most :data:`SCRATCH_FLOATS`
attention scores.
"""

from __future__ import annotations

import time

import numpy as np

from .. import threads
from .layers import AttentionBlock, Block, chunks, layer_norm

SCRATCH_FLOATS = 1 << 24


class RowStage:
    """The row interactor's tensors and settings, read from a checkpoint's config."""

    def __init__(self, tensors: dict[str, np.ndarray], config: dict):
        self.root = Block(tensors, "row_interactor.")
        self.n_cls = config["row_num_cls"]
        self.heads = config["row_nhead"]
        self.norm_first = config["norm_first"]
        self.blocks = [AttentionBlock(self.root.sub(f"tf_row.blocks.{i}"), self.heads, "none",
                                      self.norm_first)
                       for i in range(config["row_num_blocks"])]
        self.rope = (self.root["tf_row.rope.freqs"], bool(config["row_rope_interleaved"]))

    def chunk_rows(self, n_tokens: int, embed_dim: int) -> int:
        per_row = n_tokens * (self.heads * n_tokens + 6 * embed_dim)
        return max(1, SCRATCH_FLOATS // max(per_row, 1))


def _rows_through(stage: RowStage, cells: np.ndarray) -> tuple[np.ndarray, list[float]]:
    """One chunk of rows' cell embeddings (t, G, E) → their representations (t, C · E) and
    each block's seconds on them."""
    cls = stage.root["cls_tokens"]
    tokens = np.concatenate([np.broadcast_to(cls, (cells.shape[0], *cls.shape)), cells], axis=1)
    seconds = []
    for i, block in enumerate(stage.blocks):
        start = time.perf_counter()
        kv = block.cache(tokens, stage.rope)
        last = i == len(stage.blocks) - 1
        tokens = block(tokens[:, :stage.n_cls] if last else tokens, kv, stage.rope)
        seconds.append(time.perf_counter() - start)
    if stage.norm_first:
        tokens = layer_norm(tokens, stage.root["out_ln.weight"], stage.root.get("out_ln.bias"))
    return tokens.reshape(tokens.shape[0], -1), seconds


def interact(stage: RowStage, embeddings: np.ndarray,
             layer_ms: list[float] | None = None, clock=None) -> np.ndarray:
    """Cell embeddings (T, G, E) → row representations (T, C · E).

    The row chunks run on the worker threads (:mod:`arenalite.models.threads`).
    ``layer_ms`` (one entry per block), with ``clock`` (seconds), collects the stage's
    wall time, shared out over the blocks as their summed times over the chunks are.
    """
    t, g, e = embeddings.shape
    out = np.empty((t, stage.n_cls * e), dtype=np.float32)
    size = threads.spread(t, stage.chunk_rows(g + stage.n_cls, e))
    parts = chunks(t, size)
    start = clock() if layer_ms is not None else 0.0
    done = threads.map_chunks(lambda rows: _rows_through(stage, embeddings[rows]), parts)
    for rows, (rep, _) in zip(parts, done, strict=True):
        out[rows] = rep
    if layer_ms is not None:
        wall = (clock() - start) * 1e3
        per_block = np.sum([s for _, s in done], axis=0)
        shares = per_block / per_block.sum() if per_block.sum() > 0 else \
            np.full(len(per_block), 1 / len(per_block))
        for i, share in enumerate(shares):
            layer_ms[i] += float(wall * share)
    return out
