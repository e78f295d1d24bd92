"""Cell embedding (``CellEmbedder``): each cell with the cells 1, 3, 7, … columns after it
(2^i − 1, wrapping around the d active columns) forms a group of ``feature_group_size``
values; each value's Fourier features ``[sin(v·f), cos(v·f)]`` over the group position's
``num_freq`` frequencies go through a linear map, and the group's maps are summed. A group
member whose column is categorical takes the categorical frequencies and map
(``fourier_frequencies_cat``, ``in_linear_cat``). Context rows add their target's
embedding (a class's row of ``y_embedder_lookup``, or the regression target through a
1 → 6 → E MLP). NaN cells are −100 first, as the package's entry does.

The sum over a group is taken over the Fourier features before the linear map (each map
is linear, so Σ_g (W·φ_g + b) = W·Σ_g φ_g + n·b): one product instead of one per group.
"""

from __future__ import annotations

import numpy as np

from .. import threads
from .layers import Block, as_float32, chunks, linear, mlp

NAN_CELL = -100.0
SCRATCH_FLOATS = 1 << 23
"""Fourier features one chunk of rows may hold at once (32 MiB)."""


class CellStage:
    """The cell embedder's tensors, read from a checkpoint's config."""

    def __init__(self, tensors: dict[str, np.ndarray], config: dict):
        self.root = Block(tensors, "cell_embedder.")
        self.group = int(config["feature_group_size"])
        self.is_classifier = bool(config["is_classifier"])
        self.max_classes = int(config["max_classes"])
        self.freqs = self.root["fourier_frequencies"]
        self.freqs_cat = self.root["fourier_frequencies_cat"]

    def target_embedding(self, y: np.ndarray) -> np.ndarray:
        """Context targets (N,) → (N, E)."""
        if self.is_classifier:
            table = self.root["y_embedder_lookup.weight"]
            return table[np.clip(y.astype(np.int64), 0, self.max_classes - 1)]
        return mlp(self.root.sub("y_embedder_lookup"), as_float32(y)[:, None])


def group_columns(d: int, size: int) -> np.ndarray:
    """(size, d): row g holds, for each column j, the column ``(j + 2^g − 1) mod d``."""
    offsets = (1 << np.arange(size)) - 1
    return (np.arange(d)[None, :] + offsets[:, None]) % d


def _fourier(values: np.ndarray, freqs: np.ndarray) -> np.ndarray:
    """(R, C) values, (C, F) frequencies per column → (R, C, 2F) ``[sin, cos]``."""
    arg = values[:, :, None] * freqs[None, :, :]
    return np.concatenate([np.sin(arg), np.cos(arg)], axis=-1)


def _embed_rows(stage: CellStage, x: np.ndarray, cat: np.ndarray | None) -> np.ndarray:
    """Cells (R, d) → (R, d, E), no target."""
    d = x.shape[1]
    idx = group_columns(d, stage.group)
    num = np.zeros((x.shape[0], d, 2 * stage.freqs.shape[1]), np.float32)
    n_num = np.zeros(d, np.float32)
    cat_sum = np.zeros_like(num) if cat is not None and cat.any() else None
    n_cat = np.zeros(d, np.float32)
    for g in range(stage.group):
        values = x[:, idx[g]]
        is_cat = cat[idx[g]] if cat_sum is not None else np.zeros(d, bool)
        freqs = np.where(is_cat[:, None], stage.freqs_cat[g][None, :], stage.freqs[g][None, :])
        phi = _fourier(values, freqs.astype(np.float32))
        if cat_sum is None:
            num += phi
        else:
            num += np.where(is_cat[None, :, None], np.float32(0.0), phi)
            cat_sum += np.where(is_cat[None, :, None], phi, np.float32(0.0))
        n_num += ~is_cat
        n_cat += is_cat
    r = stage.root
    out = linear(num, r["in_linear.weight"])
    out += n_num[:, None] * r["in_linear.bias"]
    if cat_sum is not None:
        out += linear(cat_sum, r["in_linear_cat.weight"])
        out += n_cat[:, None] * r["in_linear_cat.bias"]
    return out


def embed(stage: CellStage, x: np.ndarray, cat_mask: np.ndarray | None = None,
          y_context: np.ndarray | None = None) -> np.ndarray:
    """Cells (R, d) of the d active columns → (R, d, E); the first ``len(y_context)`` rows
    (the context) get their target's embedding added. Row chunks on the worker threads."""
    x = np.nan_to_num(as_float32(x), nan=NAN_CELL)
    cat = None if cat_mask is None else np.asarray(cat_mask, dtype=bool)
    per_row = x.shape[1] * 2 * stage.freqs.shape[1] * 3
    out = np.empty((*x.shape, stage.root["in_linear.weight"].shape[0]), np.float32)

    def run(rows: slice) -> None:
        out[rows] = _embed_rows(stage, x[rows], cat)

    threads.map_chunks(run, chunks(x.shape[0], threads.spread(x.shape[0],
                                                              SCRATCH_FLOATS // max(per_row, 1))))
    if y_context is not None and len(y_context):
        out[:len(y_context)] += stage.target_embedding(np.asarray(y_context))[:, None, :]
    return out
