"""Row interaction (``tabicl._model.interaction.RowInteraction``): within each row, CLS
tokens and the row's column embeddings attend to each other with rotary positions
(split-half layout for TabICLv2), the last block updates the CLS tokens only, and the
LayerNorm'd CLS tokens, concatenated, are the row's representation (C · E numbers).

Rows are independent here, so rows go through in chunks of at most :data:`SCRATCH_FLOATS`
attention scores.
"""

from __future__ import annotations

import numpy as np

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


def interact(stage: RowStage, embeddings: np.ndarray,
             layer_ms: list[float] | None = None, clock=None) -> np.ndarray:
    """Cell embeddings (T, G, E) → row representations (T, C · E).

    ``layer_ms`` (one entry per block), with ``clock`` (seconds), collects each block's
    time over all chunks.
    """
    t, g, e = embeddings.shape
    out = np.empty((t, stage.n_cls * e), dtype=np.float32)
    cls = stage.root["cls_tokens"]
    for rows in chunks(t, stage.chunk_rows(g + stage.n_cls, e)):
        tokens = np.concatenate(
            [np.broadcast_to(cls, (rows.stop - rows.start, *cls.shape)), embeddings[rows]],
            axis=1)
        for i, block in enumerate(stage.blocks):
            start = clock() if layer_ms is not None else 0.0
            kv = block.cache(tokens, stage.rope)
            last = i == len(stage.blocks) - 1
            tokens = block(tokens[:, :stage.n_cls] if last else tokens, kv, stage.rope)
            if layer_ms is not None:
                layer_ms[i] += (clock() - start) * 1e3
        if stage.norm_first:
            tokens = layer_norm(tokens, stage.root["out_ln.weight"], stage.root.get("out_ln.bias"))
        out[rows] = tokens.reshape(tokens.shape[0], -1)
    return out
