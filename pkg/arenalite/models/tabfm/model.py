"""The raw Google TabFM forward of one ensemble member, in numpy float32
(``tabfm.src.pytorch.model.TabFM.forward`` in eval mode, batch of one table).

The interface the predictor calls (stable)::

    model = load(path, task)        # or TabFMModel(checkpoint.config, checkpoint.tensors)
    out, timings = forward(model, x_context, y_context, x_query, d=None, cat_mask=None)

- ``x_context`` (N, H) and ``x_query`` (M, H): float32 cells, already preprocessed as the
  wrappers do (NaN becomes −100 here, as the package's entry does); only the first ``d``
  columns are read (``d``: the member's active feature count, the package's ``d``; default
  H). Columns at and after ``d`` are the batch's padding: they change nothing.
- ``y_context`` (N,): class indices 0 … max_classes − 1 (classification), or the scaled
  regression target (float).
- ``cat_mask`` (H,) bool or None: which columns take the categorical Fourier frequencies.
- ``out``: (M, max_classes) logits for classification (every one of the checkpoint's
  classes: the caller keeps its own n_classes), or (M, 1) for regression; ``timings``:
  milliseconds per stage (:class:`Timings`).

The same in two halves, the warm KV cache: :func:`fit_context` runs the context rows once
per split and keeps what query rows need (both column stages' inducing points' keys and
values, and the ICL stage's context keys and values per block); :func:`predict_queries`
then runs any query rows through them, in blocks of :data:`ops.QUERY_BLOCK` rows
(:func:`ops.query_blocks`, the last zero-padded), so a query row's output does not
depend on how the caller batches the query rows. The context's rows never see the
query rows (the package masks them out of every attention over rows), so this is the
package's arithmetic. Past :data:`ICL_CACHE_BYTES` (v1.0.0: about 2,700 context rows) the
ICL keys and values are not kept: each ``predict_queries`` call computes them one
transformer block at a time, takes every query block through that block and drops them
(the same bits, with one block's keys and values in memory instead of all of them): give
it all query rows at once.

:func:`stages` exposes every stage's output, for the tests against the package.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path

import numpy as np

from .. import checkpoint_cache, threads
from ..ops import query_blocks
from . import cells, column, icl, row
from .checkpoint import WEIGHTS_NAME, read_checkpoint, resolve
from .decoder import Decoder
from .layers import as_float32

ICL_CACHE_BYTES = 1 << 30
"""The most the ICL stage's context keys and values of every block may take (1 GiB);
past it (v1.0.0: 2,731 context rows) they are computed block by block in each
:func:`predict_queries` call instead (:func:`icl.stream`)."""


class TabFMModel:
    """A checkpoint's stages, ready to run: ``TabFMModel(config, tensors)``."""

    def __init__(self, config: dict, tensors: dict[str, np.ndarray]):
        self.config = dict(config)
        self.tensors = {k: as_float32(v) for k, v in tensors.items()}
        t = self.tensors
        self.cells = cells.CellStage(t, self.config)
        self.column = column.ColumnStage(t, self.config, "col_embedder.")
        self.row = row.RowStage(t, self.config, "row_interactor.", full=True)
        self.column_2 = column.ColumnStage(t, self.config, "col_embedder_2.")
        self.row_2 = row.RowStage(t, self.config, "row_interactor_2.", full=False)
        self.icl = icl.ICLStage(t, self.config)
        self.decoder = Decoder(t, self.config)
        self.cls_tokens = t["cls_tokens"]
        self.max_classes = int(self.config["max_classes"])

    @property
    def is_classifier(self) -> bool:
        return bool(self.config["is_classifier"])

    @property
    def task(self) -> str:
        return "classification" if self.is_classifier else "regression"

    @property
    def out_width(self) -> int:
        return self.max_classes if self.is_classifier else 1


def _read_folder(weights: str) -> TabFMModel:
    """The model of the ``save_pretrained`` folder holding ``weights``."""
    checkpoint = read_checkpoint(Path(weights).parent)
    return TabFMModel(checkpoint.config, checkpoint.tensors)


def _read_file(path: str) -> TabFMModel:
    """The model of a converted single file."""
    checkpoint = read_checkpoint(path)
    return TabFMModel(checkpoint.config, checkpoint.tensors)


def load(path: str | PathLike, task: str | None = None) -> TabFMModel:
    """The model of a checkpoint: a ``save_pretrained`` folder, the parent of
    ``classification/`` and ``regression/`` (``task`` picks), or a converted file; read
    once per weights file and modification time (:mod:`arenalite.models.checkpoint_cache`).
    A folder's task must agree with ``task`` when both say."""
    p = resolve(path, task)
    if p.is_file():
        model = checkpoint_cache.load(p, _read_file)
    else:
        weights = p / WEIGHTS_NAME
        if not weights.is_file():
            read_checkpoint(p, task)  # raises the message naming what is missing
        model = checkpoint_cache.load(weights, _read_folder)
    if task is not None and model.task != task:
        raise ValueError(f"Google TabFM checkpoint {str(p)!r} is a {model.task} checkpoint, "
                         f"asked for {task}")
    return model


@dataclass
class Timings:
    """Milliseconds per stage: cells, the two column and two row stages, each ICL block,
    the decoder."""

    cells: float = 0.0
    column: list[float] = field(default_factory=lambda: [0.0, 0.0])
    row: list[float] = field(default_factory=lambda: [0.0, 0.0])
    icl: list[float] = field(default_factory=list)
    decoder: float = 0.0

    def as_dict(self) -> dict:
        total = self.cells + sum(self.column) + sum(self.row) + sum(self.icl) + self.decoder
        return {"cells": self.cells, "column": list(self.column), "row": list(self.row),
                "icl": list(self.icl), "decoder": self.decoder, "total": total}


@dataclass
class MemberContext:
    """What a member's query rows need from its context (the warm KV cache)."""

    column: column.ColumnCache
    column_2: column.ColumnCache
    icl: icl.ICLContext
    d: int
    cat_mask: np.ndarray | None
    timings: Timings


def _inputs(model: TabFMModel, x: np.ndarray, d: int | None,
            cat_mask: np.ndarray | None, what: str) -> tuple[np.ndarray, int, np.ndarray | None]:
    x = as_float32(x)
    if x.ndim != 2:
        raise ValueError(f"Google TabFM {what} must be a 2-D array (rows × features), got "
                         f"shape {x.shape}")
    h = x.shape[1]
    d = h if d is None else d
    if isinstance(d, bool) or not isinstance(d, int | np.integer) or not 1 <= d <= h:
        raise ValueError(f"Google TabFM: d (active features) must be an integer 1 … {h}, "
                         f"got {d!r}")
    mask = None
    if cat_mask is not None:
        mask = np.asarray(cat_mask)
        if mask.dtype != bool or mask.shape != (h,):
            raise ValueError(f"Google TabFM: cat_mask must be {h} booleans, got "
                             f"{mask.dtype} of shape {mask.shape}")
        mask = mask[:d]
    return x[:, :int(d)], int(d), mask


def _targets(model: TabFMModel, y: np.ndarray, n: int) -> np.ndarray:
    y = np.asarray(y, dtype=np.float64)
    if y.shape != (n,):
        raise ValueError(f"Google TabFM: y_context must hold one target per context row "
                         f"({n}), got shape {y.shape}")
    if not np.isfinite(y).all():
        raise ValueError("Google TabFM: y_context holds a missing or infinite target")
    if model.is_classifier:
        bad = (y < 0) | (y >= model.max_classes) | (y != np.round(y))
        if bad.any():
            raise ValueError(f"Google TabFM: class target {y[bad][0]:g} is not an index "
                             f"0 … {model.max_classes - 1} (row {int(np.argmax(bad))})")
        return y.astype(np.int64)
    return y.astype(np.float32)


def _with_cls(model: TabFMModel, emb: np.ndarray) -> np.ndarray:
    cls = np.broadcast_to(model.cls_tokens, (emb.shape[0], *model.cls_tokens.shape))
    return np.concatenate([cls, emb], axis=1)


def fit_context(model: TabFMModel, x_context: np.ndarray, y_context: np.ndarray,
                d: int | None = None, cat_mask: np.ndarray | None = None,
                clock: Callable[[], float] = time.perf_counter) -> MemberContext:
    """Run the context rows (N, H) with targets (N,) once and keep every cache."""
    x, d, mask = _inputs(model, x_context, d, cat_mask, "x_context")
    y = _targets(model, y_context, x.shape[0])
    with threads.pooled():
        return _fit(model, x, y, d, mask, clock)


def _fit(model: TabFMModel, x: np.ndarray, y: np.ndarray, d: int,
         mask: np.ndarray | None, clock) -> MemberContext:
    timings = Timings(icl=[0.0] * len(model.icl.blocks))
    t0 = clock()
    emb = cells.embed(model.cells, x, mask, y)
    t1 = clock()
    emb, cache = column.fit_context(model.column, emb, in_place=True)
    t2 = clock()
    tokens = _with_cls(model, emb)
    del emb  # one stage's array alive at a time: every stage below writes in place
    tokens = row.interact(model.row, tokens, in_place=True)
    t3 = clock()
    tokens, cache_2 = column.fit_context(model.column_2, tokens, in_place=True)
    t4 = clock()
    reps = row.interact(model.row_2, tokens)
    t5 = clock()
    del tokens
    cache_bytes = 2 * reps.size * 4 * len(model.icl.blocks)
    context, _ = icl.fit_context(model.icl, reps, y, timings.icl, clock,
                                 keep=cache_bytes <= ICL_CACHE_BYTES)
    timings.cells += (t1 - t0) * 1e3
    timings.column[0] += (t2 - t1) * 1e3
    timings.row[0] += (t3 - t2) * 1e3
    timings.column[1] += (t4 - t3) * 1e3
    timings.row[1] += (t5 - t4) * 1e3
    return MemberContext(cache, cache_2, context, d, mask, timings)


def _query_reps(model: TabFMModel, context: MemberContext, x: np.ndarray,
                timings: Timings, clock) -> np.ndarray:
    """A block of query rows through the cells, column and row stages: (B, D)."""
    t0 = clock()
    emb = cells.embed(model.cells, x, context.cat_mask)
    t1 = clock()
    emb = column.queries(model.column, context.column, emb)
    t2 = clock()
    emb = row.interact(model.row, _with_cls(model, emb), in_place=True)
    t3 = clock()
    emb = column.queries(model.column_2, context.column_2, emb)
    t4 = clock()
    reps = row.interact(model.row_2, emb)
    timings.cells += (t1 - t0) * 1e3
    timings.column[0] += (t2 - t1) * 1e3
    timings.row[0] += (t3 - t2) * 1e3
    timings.column[1] += (t4 - t3) * 1e3
    timings.row[1] += (clock() - t4) * 1e3
    return reps


def predict_queries(model: TabFMModel, context: MemberContext, x_query: np.ndarray,
                    clock: Callable[[], float] = time.perf_counter,
                    timings: Timings | None = None) -> np.ndarray:
    """Query rows (M, H) → (M, max_classes) logits or (M, 1) values, from the caches.

    Past :data:`ICL_CACHE_BYTES` the context's ICL keys and values are computed here, one
    transformer block at a time, once per call: give all query rows in one call."""
    x = as_float32(x_query)
    if x.ndim != 2 or x.shape[1] < context.d:
        raise ValueError(f"Google TabFM x_query must be rows × at least {context.d} "
                         f"features, got shape {x.shape}")
    x = x[:, :context.d]
    timings = timings if timings is not None else Timings(icl=[0.0] * len(model.icl.blocks))
    if x.shape[0] == 0:
        return np.zeros((0, model.out_width), np.float32)
    with threads.pooled():
        reps = []
        for block, _ in query_blocks(x):
            reps.append(_query_reps(model, context, block, timings, clock))
        if context.icl.kv is not None:
            hidden = [icl.query(model.icl, context.icl, r, timings.icl, clock) for r in reps]
        else:
            hidden = icl.stream(model.icl, context.icl, reps, timings.icl, clock)
        t0 = clock()
        out = np.concatenate([model.decoder(h) for h in hidden])[:x.shape[0]]
        timings.decoder += (clock() - t0) * 1e3
    return out


def forward(model: TabFMModel, x_context: np.ndarray, y_context: np.ndarray,
            x_query: np.ndarray, d: int | None = None, cat_mask: np.ndarray | None = None,
            clock: Callable[[], float] = time.perf_counter) -> tuple[np.ndarray, dict]:
    """One member's output for ``x_query`` and its timings (ms per stage)."""
    context = fit_context(model, x_context, y_context, d, cat_mask, clock)
    out = predict_queries(model, context, x_query, clock, context.timings)
    return out, context.timings.as_dict()


def stages(model: TabFMModel, x_context: np.ndarray, y_context: np.ndarray,
           x_query: np.ndarray, d: int | None = None,
           cat_mask: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """Every stage's output for context and query rows together (T = N + M rows, the d
    active columns), for tests against the package: ``cells`` (T, d, E), ``column``
    (T, d, E), ``row`` (T, C + d, E), ``column_2`` (T, C + d, E), ``row_2`` (T, C·E),
    ``icl`` (T, D) (the ICL transformer's output) and ``output`` (T, out)."""
    xc, d, mask = _inputs(model, x_context, d, cat_mask, "x_context")
    xq, _, _ = _inputs(model, x_query, d, cat_mask, "x_query")
    y = _targets(model, y_context, xc.shape[0])
    out: dict[str, list[np.ndarray]] = {}
    c_cells = cells.embed(model.cells, xc, mask, y)
    q_cells = cells.embed(model.cells, xq, mask)
    c_col, cache = column.fit_context(model.column, c_cells)
    q_col = column.queries(model.column, cache, q_cells)
    c_row = row.interact(model.row, _with_cls(model, c_col))
    q_row = row.interact(model.row, _with_cls(model, q_col))
    c_col2, cache_2 = column.fit_context(model.column_2, c_row)
    q_col2 = column.queries(model.column_2, cache_2, q_row)
    c_reps = row.interact(model.row_2, c_col2)
    q_reps = row.interact(model.row_2, q_col2)
    context, c_icl = icl.fit_context(model.icl, c_reps, y, last=True)
    q_icl = icl.query(model.icl, context, q_reps)
    out = {"cells": (c_cells, q_cells), "column": (c_col, q_col), "row": (c_row, q_row),
           "column_2": (c_col2, q_col2), "row_2": (c_reps, q_reps), "icl": (c_icl, q_icl)}
    result = {k: np.concatenate(v) for k, v in out.items()}
    result["output"] = model.decoder(result["icl"])
    return result
