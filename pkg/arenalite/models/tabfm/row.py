"""A row stage (``RowInteraction``): each row's tokens (the ``row_num_cls`` CLS tokens,
then its d active columns) attend to each other through ``row_num_blocks`` blocks with
interleaved RoPE over the token positions (frequencies read from the checkpoint's
``tf_row.rope.freqs``), then an RMSNorm.

The package pads every table of a batch to one width and masks the padded columns out of
the keys; arenalite runs the d active columns alone, which is the same arithmetic (a
masked key has weight exactly 0, and no active token ever reads a padded one).

The first stage (``row_interactor``) returns every token; the second
(``row_interactor_2``) only the CLS tokens, flattened into a row of
``embed_dim · row_num_cls`` (so its last block runs the CLS queries alone). Rows are
independent: they go in chunks on the worker threads.
"""

from __future__ import annotations

import numpy as np

from .. import threads
from .layers import AttentionBlock, Block, chunks, rms_norm

SCRATCH_FLOATS = 1 << 24
"""Scores and feed-forward activations one chunk of rows may hold (64 MiB)."""


class RowStage:
    """One row stage's tensors (``prefix`` ``row_interactor.`` or ``row_interactor_2.``)."""

    def __init__(self, tensors: dict[str, np.ndarray], config: dict, prefix: str,
                 full: bool):
        self.root = Block(tensors, prefix)
        self.heads = int(config["row_nhead"])
        self.n_cls = int(config["row_num_cls"])
        self.ff = int(config["embed_dim"]) * int(config["ff_factor"])
        self.full = full
        freqs = self.root["tf_row.rope.freqs"]
        self.blocks = [AttentionBlock(self.root.sub(f"tf_row.blocks.{i}"), self.heads, freqs)
                       for i in range(int(config["row_num_blocks"]))]

    def chunk_rows(self, n_tokens: int, embed_dim: int) -> int:
        per_row = n_tokens * max(self.heads * n_tokens, 2 * self.ff + 4 * embed_dim)
        return max(1, SCRATCH_FLOATS // max(per_row, 1))


def _rows(stage: RowStage, h: np.ndarray) -> np.ndarray:
    for i, block in enumerate(stage.blocks):
        kv = block.cache(h)
        if not stage.full and i == len(stage.blocks) - 1:
            h = np.ascontiguousarray(h[:, :stage.n_cls])
        h = block(h, kv)
    if not stage.full:
        h = h[:, :stage.n_cls]
    out = rms_norm(h, stage.root["out_ln.weight"])
    return out if stage.full else out.reshape(out.shape[0], -1)


def interact(stage: RowStage, x: np.ndarray, in_place: bool = False) -> np.ndarray:
    """Rows' tokens (R, tokens, E) → (R, tokens, E), or (R, row_num_cls · E) for the
    second stage. Each chunk of rows writes its part of the output when done with its
    rows (``in_place``, first stage only: into ``x`` itself)."""
    r, t, e = x.shape
    if in_place and stage.full:
        out = x
    else:
        out = np.empty((r, t, e) if stage.full else (r, stage.n_cls * e), np.float32)

    def run(rows: slice) -> None:
        out[rows] = _rows(stage, x[rows])

    threads.map_chunks(run, chunks(r, threads.spread(r, stage.chunk_rows(t, e))))
    return out
