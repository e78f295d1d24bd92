"""In-context learning (``tabicl._model.learning.ICLearning``): row representations, the
context rows' with their target embedded, through a transformer whose every row attends
to the context rows only (QASSMax on every layer). The context's keys and values per
layer are the ICL stage's KV cache (:func:`fit_context`): computed once per split, then
any batch of query rows goes through alone (:func:`query`).

Above ``max_classes`` classes the package builds a class tree: a node with more classes
than ``max_classes`` splits them into at most ``max_classes`` contiguous groups of
near-equal size and predicts the group; a leaf predicts its classes; a class's
probability is the product along its path (:class:`ClassTree`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .. import threads
from ..ops import attend_context, context_keys_values
from .head import Head, decode
from .layers import AttentionBlock, Block, softmax, ssmax_kind


class ICLStage:
    """The ICL transformer's tensors and settings, read from a checkpoint's config."""

    def __init__(self, tensors: dict[str, np.ndarray], config: dict):
        self.root = Block(tensors, "icl_predictor.")
        ssmax = ssmax_kind(config["icl_ssmax"])
        self.heads = config["icl_nhead"]
        self.blocks = [AttentionBlock(self.root.sub(f"tf_icl.blocks.{i}"), self.heads, ssmax,
                                      config["norm_first"])
                       for i in range(config["icl_num_blocks"])]
        self.max_classes = config["max_classes"]
        self.head = Head(tensors, config)

    def target_embedding(self, y: np.ndarray) -> np.ndarray:
        w, b = self.root["y_encoder.weight"], self.root["y_encoder.bias"]
        if self.max_classes > 0:
            return w.T[y.astype(np.int64)] + b
        return y[:, None] * w[:, 0] + b


@dataclass
class ICLContext:
    """The context's keys and values per layer, each (heads, N, d_head)."""

    kv: list[tuple[np.ndarray, np.ndarray]]
    n_classes: int


def shares(stage: ICLStage, rows: int) -> int:
    """Into how many shares of heads (:meth:`AttentionBlock.by_shares`) a layer on
    ``rows`` rows is split across the worker threads: all of them below
    ``threads.SMALL_STAGE_ROWS`` rows, where chunks of rows would make each thread's
    products too small (measured on 2 AVX-512 cores, the ICL on 128 context + 64 query
    rows: 130 ms in row chunks, 118 ms in shares); else 1 (row chunks)."""
    n = min(threads.count(), stage.heads)
    small = rows < threads.SMALL_STAGE_ROWS and all(b.can_share() for b in stage.blocks)
    return n if n > 1 and small else 1


def fit_context(stage: ICLStage, r_train: np.ndarray, y_train: np.ndarray,
                layer_ms: list[float] | None = None, clock=None) -> ICLContext:
    """Context rows' representations (N, D) with targets (N,) → the per-layer KV cache."""
    h = r_train + stage.target_embedding(y_train)
    n_shares = shares(stage, h.shape[0])
    kv_all = []
    for i, block in enumerate(stage.blocks):
        start = clock() if layer_ms is not None else 0.0
        if n_shares > 1 and i < len(stage.blocks) - 1:
            h, kv = block.by_shares(h, None, n_shares)
        else:
            kv = context_keys_values(block, h)
            if i < len(stage.blocks) - 1:
                h = attend_context(block, h, kv, stage.heads)
        kv_all.append(kv)
        if layer_ms is not None:
            layer_ms[i] += (clock() - start) * 1e3
    n_classes = len(np.unique(y_train)) if stage.max_classes > 0 else 0
    return ICLContext(kv_all, n_classes)


def query(stage: ICLStage, context: ICLContext, r: np.ndarray,
          layer_ms: list[float] | None = None, clock=None) -> np.ndarray:
    """Query rows' representations (M, D) → the last layer's output (M, D)."""
    h = r
    n_shares = shares(stage, h.shape[0])
    for i, (block, kv) in enumerate(zip(stage.blocks, context.kv, strict=True)):
        start = clock() if layer_ms is not None else 0.0
        if n_shares > 1:
            h = block.by_shares(h, kv, n_shares)[0]
        else:
            h = attend_context(block, h, kv, stage.heads)
        if layer_ms is not None:
            layer_ms[i] += (clock() - start) * 1e3
    return h


def logits(stage: ICLStage, context: ICLContext, hidden: np.ndarray) -> np.ndarray:
    """The head on the last layer's output: class logits (M, C) or quantiles (M, Q)."""
    out = decode(stage.head, hidden)
    return out[:, :context.n_classes] if stage.max_classes > 0 else out


def class_groups(n_classes: int, max_classes: int) -> np.ndarray:
    """The group of each of a node's classes (contiguous, near-equal sizes)."""
    n_groups = min(math.ceil(n_classes / max_classes), max_classes)
    groups = np.zeros(n_classes, dtype=np.int64)
    pos, remaining, left = 0, n_classes, n_groups
    for g in range(n_groups):
        size = math.ceil(remaining / left)
        groups[pos:pos + size] = g
        pos, remaining, left = pos + size, remaining - size, left - 1
    return groups


@dataclass
class ClassTree:
    """A node of the many-class tree: its classes (global codes), the context it predicts
    from, and its children (none for a leaf)."""

    classes: np.ndarray
    context: ICLContext
    children: list[ClassTree] = field(default_factory=list)


def fit_tree(stage: ICLStage, r_train: np.ndarray, y_train: np.ndarray) -> ClassTree:
    """The class tree of a context (``ICLearning._fit_hierarchical``), each node's ICL
    cache computed once."""
    classes = np.unique(y_train)
    if len(classes) <= stage.max_classes:
        local = np.searchsorted(classes, y_train).astype(np.float32)
        return ClassTree(classes, fit_context(stage, r_train, local))
    groups = class_groups(len(classes), stage.max_classes)
    row_group = groups[np.searchsorted(classes, y_train)]
    node = ClassTree(classes, fit_context(stage, r_train, row_group.astype(np.float32)))
    for g in range(groups.max() + 1):
        mask = row_group == g
        node.children.append(fit_tree(stage, r_train[mask], y_train[mask]))
    return node


def tree_probabilities(stage: ICLStage, tree: ClassTree, r: np.ndarray, n_classes: int,
                       temperature: float) -> np.ndarray:
    """Query rows (M, D) → class probabilities (M, n_classes) down the tree; each node's
    distribution is softmax(logits / temperature)."""
    def node_probs(node: ClassTree) -> np.ndarray:
        z = logits(stage, node.context, query(stage, node.context, r))
        return softmax(z / np.float32(temperature))

    def walk(node: ClassTree) -> np.ndarray:
        probs = node_probs(node)
        out = np.zeros((r.shape[0], n_classes), dtype=np.float32)
        if not node.children:
            out[:, node.classes.astype(np.int64)] = probs
            return out
        for g, child in enumerate(node.children):
            out += walk(child) * probs[:, g:g + 1]
        return out

    return walk(tree)
