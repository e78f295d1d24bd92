"""In-context learning (``ICLearning``'s transformer): each row's representation (its CLS
tokens, ``embed_dim · row_num_cls`` wide), the context rows' with their target's encoding
added (a class's column of ``y_encoder.projection`` plus its bias, or the regression target
through a 1 → hidden → D MLP), through ``icl_num_blocks`` blocks (no RoPE) in which every
row attends to the context rows only.

So the context's keys and values per block depend on the context alone: they are the ICL
stage's KV cache (:func:`fit_context`), computed once per split; any block of query rows
then goes through alone (:func:`query`). Where the cache of every block would pass the
model's budget (v1.0.0: 384 KiB per context row), :func:`stream` takes all query blocks
through one transformer block at a time instead, holding one block's keys and values.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import threads
from ..ops import attend_context, context_keys_values
from .layers import AttentionBlock, Block, as_float32, mlp


class ICLStage:
    """The ICL transformer's tensors and settings, read from a checkpoint's config."""

    def __init__(self, tensors: dict[str, np.ndarray], config: dict):
        self.root = Block(tensors, "icl_predictor.")
        self.heads = int(config["icl_nhead"])
        self.is_classifier = bool(config["is_classifier"])
        self.max_classes = int(config["max_classes"])
        self.blocks = [AttentionBlock(self.root.sub(f"tf_icl.blocks.{i}"), self.heads)
                       for i in range(int(config["icl_num_blocks"]))]

    def target_encoding(self, y: np.ndarray) -> np.ndarray:
        """Context targets (N,) → (N, D). A class outside 0 … max_classes − 1 encodes as
        the bias alone (``OneHotAndLinear``'s all-zero one-hot)."""
        if self.is_classifier:
            w = self.root["y_encoder.projection.weight"]
            b = self.root["y_encoder.projection.bias"]
            yi = np.asarray(y).astype(np.int64)
            inside = (yi >= 0) & (yi < self.max_classes)
            out = np.where(inside[:, None], w.T[np.where(inside, yi, 0)], np.float32(0.0))
            return (out + b).astype(np.float32)
        return mlp(self.root.sub("y_encoder"), as_float32(y)[:, None])


@dataclass
class ICLContext:
    """The context's keys and values per block, each (heads, N, d_head); or, where they
    would not fit the budget, the context rows' input to the first block (``h``), from
    which :func:`stream` computes each block's keys and values once per call."""

    kv: list[tuple[np.ndarray, np.ndarray]] | None
    h: np.ndarray | None = None


def shares(stage: ICLStage, rows: int) -> int:
    """Into how many shares of heads (:meth:`AttentionBlock.by_shares`) a block on
    ``rows`` rows is split across the worker threads: all of them below
    ``threads.SMALL_STAGE_ROWS`` rows (a small context, a 64-row query block), where row
    chunks would give each thread a product of a few dozen rows over the block's whole
    weights; else 1 (row chunks)."""
    n = min(threads.count(), stage.heads)
    return n if n > 1 and rows < threads.SMALL_STAGE_ROWS else 1


def _through(stage: ICLStage, block: AttentionBlock, h: np.ndarray,
             kv: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """Rows ``h`` through one block over ``kv``: in shares of heads or in row chunks."""
    n = shares(stage, h.shape[0])
    return block.by_shares(h, kv, n) if n > 1 else attend_context(block, h, kv, stage.heads)


def fit_context(stage: ICLStage, r: np.ndarray, y: np.ndarray,
                layer_ms: list[float] | None = None, clock=None,
                last: bool = False, keep: bool = True) -> tuple[ICLContext, np.ndarray | None]:
    """Context rows' representations (N, D) with targets (N,) → the per-block KV cache,
    and (``last=True``) the context rows' own output of the last block. ``keep=False``
    keeps only the first block's input (:func:`stream` then runs the context)."""
    h = r + stage.target_encoding(y)
    if not keep:
        return ICLContext(None, h), None
    kv_all = []
    for i, block in enumerate(stage.blocks):
        start = clock() if layer_ms is not None else 0.0
        kv = context_keys_values(block, h)
        kv_all.append(kv)
        if last or i < len(stage.blocks) - 1:
            h = _through(stage, block, h, kv)
        if layer_ms is not None:
            layer_ms[i] += (clock() - start) * 1e3
    return ICLContext(kv_all), (h if last else None)


def stream(stage: ICLStage, context: ICLContext, queries: list[np.ndarray],
           layer_ms: list[float] | None = None, clock=None) -> list[np.ndarray]:
    """Query blocks (each (B, D)) → their last block's outputs, one block of the
    transformer at a time: its context keys and values computed once, every query block
    taken through them, then the context rows themselves; only one block's keys and
    values exist at a time. The same arithmetic as :func:`fit_context` and :func:`query`
    (bit for bit: the same products on the same shapes)."""
    h, queries = context.h, list(queries)
    for i, block in enumerate(stage.blocks):
        start = clock() if layer_ms is not None else 0.0
        kv = context_keys_values(block, h)
        queries = [_through(stage, block, q, kv) for q in queries]
        if i < len(stage.blocks) - 1:
            h = _through(stage, block, h, kv)
        del kv
        if layer_ms is not None:
            layer_ms[i] += (clock() - start) * 1e3
    return queries


def query(stage: ICLStage, context: ICLContext, r: np.ndarray,
          layer_ms: list[float] | None = None, clock=None) -> np.ndarray:
    """Query rows' representations (M, D) → the last block's output (M, D)."""
    h = r
    for i, (block, kv) in enumerate(zip(stage.blocks, context.kv, strict=True)):
        start = clock() if layer_ms is not None else 0.0
        h = _through(stage, block, h, kv)
        if layer_ms is not None:
            layer_ms[i] += (clock() - start) * 1e3
    return h
