"""The raw TabICL forward of one ensemble member, in numpy: column embedding → row
interaction → in-context learning → head (``tabicl._model.tabicl.TabICL``), with both KV
caches.

:func:`fit_context` runs a member's context rows once per split and keeps what query rows
need: the column stage's hidden points and the ICL stage's context keys/values (one set
per node of the class tree above ``max_classes`` classes). :func:`predict_queries` then
runs query rows alone, in blocks of :data:`ops.QUERY_BLOCK` rows
(:func:`ops.query_blocks`, the last zero-padded), so every matrix product has the same
shape whatever the batch and a row's output does not depend on the other query rows:
bit-identical however the caller batches them where the BLAS kernel's result for a row
does not depend on its place in the block (on an AMD EPYC core OpenBLAS 0.3.31 leaves
float32 round-off, ≤ 5e-7 here).
:func:`forward` is the package's ``TabICL.forward`` in eval mode (logits, or
``T · log(p + 1e-6)`` through the class tree; raw quantiles for regression), and
:func:`stages` exposes every stage's output for tests.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from .. import threads
from ..ops import query_blocks
from . import column, icl, row
from .layers import as_float32

SOFTMAX_TEMPERATURE = 0.9
TREE_EPS = 1e-6


class TabICLModel:
    """A checkpoint's stages, ready to run: ``TabICLModel(config, tensors)``."""

    def __init__(self, config: dict, tensors: dict[str, np.ndarray]):
        self.config = dict(config)
        self.tensors = {k: as_float32(v) for k, v in tensors.items()}
        self.column = column.ColumnStage(self.tensors, self.config)
        self.row = row.RowStage(self.tensors, self.config)
        self.icl = icl.ICLStage(self.tensors, self.config)
        self.max_classes = int(self.config["max_classes"])

    @property
    def task(self) -> str:
        return "regression" if self.max_classes == 0 else "classification"


@dataclass
class Timings:
    """Milliseconds per stage: column embedding, each row block, each ICL layer, head."""

    embed: float = 0.0
    row: list[float] = field(default_factory=list)
    icl: list[float] = field(default_factory=list)
    head: float = 0.0

    def as_dict(self) -> dict:
        layers = self.row + self.icl
        return {"embed": self.embed, "layers": layers, "head": self.head,
                "total": self.embed + sum(layers) + self.head}


@dataclass
class MemberContext:
    """What a member's query rows need from its context: both caches (or the tree)."""

    column: column.ColumnCache
    icl: icl.ICLContext | None
    tree: icl.ClassTree | None
    n_classes: int
    timings: Timings
    query_columns: np.ndarray | None = None  # shared column stage: the cells to bring


def _labels(model: TabICLModel, y_train: np.ndarray) -> np.ndarray:
    y = np.asarray(y_train, dtype=np.float32)
    if y.ndim != 1 or not np.isfinite(y).all():
        raise ValueError("TabICL context targets must be a finite 1-D array")
    if model.max_classes > 0 and (np.any(y < 0) or np.any(y != np.round(y))):
        raise ValueError("TabICL class labels must be integers 0 … C−1")
    return y


@dataclass(frozen=True)
class SharedColumns:
    """Another member's column stage, for checkpoints without feature groups: the
    package's classifier embeds the first table of each model call once and gives every
    other table of the call those columns, reordered (``ColEmbedding``'s
    ``feature_shuffles``; the first table's targets included)."""

    embeddings: np.ndarray  # (N, H, E) context rows of the first table
    cache: column.ColumnCache
    permutation: np.ndarray  # the first table's feature permutation

    def reordered(self, permutation: np.ndarray
                  ) -> tuple[np.ndarray, column.ColumnCache, np.ndarray]:
        """The stage as the package hands it to a table whose column j is feature
        ``permutation[j]``: position k gets the first table's column
        ``pos(first[k])``, where pos(f) is f's column in this table (its
        ``map_feature_shuffle``, taken literally). Returns the context embeddings, the
        cache, and the columns of this table whose cells query rows must bring (the
        cells the first table had in those columns)."""
        position = np.argsort(permutation)
        where = position[self.permutation]
        passes = tuple(tuple((k[where], v[where]) for k, v in per_pass)
                       for per_pass in self.cache.passes)
        query_columns = position[self.permutation[where]]
        return (self.embeddings[:, where], column.ColumnCache(passes, len(where)),
                query_columns)


def fit_context(model: TabICLModel, x_train: np.ndarray, y_train: np.ndarray,
                clock: Callable[[], float] = time.perf_counter,
                shared: tuple[SharedColumns, np.ndarray] | None = None) -> MemberContext:
    """Run the context rows (N, H) with targets (N,) once and keep both caches.

    ``shared``: (the call's first member's column stage, this member's feature
    permutation) to reuse that stage, as the package does without feature groups.
    """
    with threads.pooled():
        return _fit_context(model, as_float32(x_train), _labels(model, y_train), clock, shared)


def _fit_context(model: TabICLModel, x: np.ndarray, y: np.ndarray, clock,
                 shared: tuple[SharedColumns, np.ndarray] | None) -> MemberContext:
    timings = Timings(row=[0.0] * len(model.row.blocks), icl=[0.0] * len(model.icl.blocks))
    t0 = clock()
    query_columns = None
    if shared is None:
        emb, col_cache = column.embed_context(model.column, x, y)
    else:
        emb, col_cache, query_columns = shared[0].reordered(shared[1])
    timings.embed += (clock() - t0) * 1e3
    r_train = row.interact(model.row, emb, timings.row, clock)
    del emb
    n_classes = len(np.unique(y)) if model.max_classes > 0 else 0
    if model.max_classes > 0 and n_classes > model.max_classes:
        t0 = clock()
        tree = icl.fit_tree(model.icl, r_train, y)
        timings.icl[0] += (clock() - t0) * 1e3
        return MemberContext(col_cache, None, tree, n_classes, timings, query_columns)
    context = icl.fit_context(model.icl, r_train, y, timings.icl, clock)
    return MemberContext(col_cache, context, None, n_classes, timings, query_columns)


def _query_block(model: TabICLModel, context: MemberContext, x: np.ndarray,
                 timings: Timings, clock, temperature: float) -> np.ndarray:
    t0 = clock()
    emb = column.embed_queries(model.column, context.column, x)
    timings.embed += (clock() - t0) * 1e3
    r = row.interact(model.row, emb, timings.row, clock)
    if context.tree is not None:
        t0 = clock()
        probs = icl.tree_probabilities(model.icl, context.tree, r, context.n_classes,
                                       SOFTMAX_TEMPERATURE)
        out = np.float32(temperature) * np.log(probs + np.float32(TREE_EPS))
        timings.icl[-1] += (clock() - t0) * 1e3
        return out
    hidden = icl.query(model.icl, context.icl, r, timings.icl, clock)
    t0 = clock()
    out = icl.logits(model.icl, context.icl, hidden)
    timings.head += (clock() - t0) * 1e3
    return out


def predict_queries(model: TabICLModel, context: MemberContext, x_test: np.ndarray,
                    clock: Callable[[], float] = time.perf_counter,
                    timings: Timings | None = None,
                    temperature: float = SOFTMAX_TEMPERATURE) -> np.ndarray:
    """Query rows (M, H) → logits (M, C) or raw quantiles (M, Q), from the caches.

    Above ``max_classes`` classes the tree's probabilities p become the logits
    ``temperature · log(p + 1e-6)`` (the nodes' own softmax stays at 0.9, as the package's).
    """
    x = as_float32(x_test)
    if context.query_columns is not None:
        x = x[:, context.query_columns]
    timings = timings if timings is not None else Timings(
        row=[0.0] * len(model.row.blocks), icl=[0.0] * len(model.icl.blocks))
    outs = []
    with threads.pooled():
        for block, n in query_blocks(x):
            outs.append(_query_block(model, context, block, timings, clock, temperature)[:n])
    width = context.n_classes if model.max_classes > 0 else model.config["num_quantiles"]
    return np.concatenate(outs) if outs else np.zeros((0, width), np.float32)


def forward(model: TabICLModel, x_train: np.ndarray, y_train: np.ndarray, x_test: np.ndarray,
            clock: Callable[[], float] = time.perf_counter) -> tuple[np.ndarray, dict]:
    """One member's raw output for ``x_test`` and its timings (ms, T_fold's parts)."""
    context = fit_context(model, x_train, y_train, clock)
    out = predict_queries(model, context, x_test, clock, context.timings)
    return out, context.timings.as_dict()


def stages(model: TabICLModel, x_train: np.ndarray, y_train: np.ndarray,
           x_test: np.ndarray) -> dict[str, np.ndarray]:
    """Every stage's output for context and query rows together (T = N + M rows), for
    tests against the package: ``column`` (T, G, E), ``row`` (T, C · E), ``icl`` (M, D)
    (the last ICL layer before the head; absent above ``max_classes``) and ``output``."""
    x_train, x_test = as_float32(x_train), as_float32(x_test)
    y = _labels(model, y_train)
    emb_train, cache = column.embed_context(model.column, x_train, y)
    emb_test = column.embed_queries(model.column, cache, x_test)
    r_train = row.interact(model.row, emb_train)
    r_test = row.interact(model.row, emb_test)
    out = {"column": np.concatenate([emb_train, emb_test]),
           "row": np.concatenate([r_train, r_test])}
    n_classes = len(np.unique(y)) if model.max_classes > 0 else 0
    if model.max_classes == 0 or n_classes <= model.max_classes:
        context = icl.fit_context(model.icl, r_train, y)
        out["icl"] = icl.query(model.icl, context, r_test)
        out["output"] = icl.logits(model.icl, context, out["icl"])
    else:
        tree = icl.fit_tree(model.icl, r_train, y)
        probs = icl.tree_probabilities(model.icl, tree, r_test, n_classes, SOFTMAX_TEMPERATURE)
        out["output"] = np.float32(SOFTMAX_TEMPERATURE) * np.log(probs + np.float32(TREE_EPS))
    return out
