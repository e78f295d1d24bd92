"""The raw TabPFN v3 forward of one model call, in numpy: cells → column stage → row
stage → ICL → decoder (``TabPFNV3.forward`` in eval mode on already-preprocessed inputs),
with every cache.

:func:`fit_context` runs the context rows (N, F) with their targets once per split and
keeps what query rows need (:class:`Context`): the cells' imputation and scaler statistics,
the column stage's hidden points (and their keys/values), the ICL keys/values per layer
(the test rows' KV heads only) and the decoder's keys and one-hot targets, all float32.
:func:`predict_queries` then runs query rows alone, in blocks of :data:`ops.QUERY_BLOCK`
rows (:func:`ops.query_blocks`, the last zero-padded), so every product has the same
shape whatever the batch and a row's output never depends on the other query rows.
:func:`forward` is one call's logits (M, max_num_classes) or bar-distribution logits
(M, num_buckets); :func:`stages` exposes each stage's output for tests.

Memory: the context's column embeddings (N, F, E) are the largest array (512 MB at
10,000 × 100 with E = 128); everything else is chunked (:data:`column.SCRATCH_FLOATS`,
:data:`row.SCRATCH_FLOATS`, :data:`icl.SCRATCH_FLOATS`) or per query block.
"""

from __future__ import annotations

from dataclasses import dataclass
from os import PathLike

import numpy as np

from .. import threads
from ..ops import query_blocks
from . import cells, column, decoder, icl, row
from .checkpoint import Checkpoint, read_checkpoint
from .layers import as_float32


class TabPFNModel:
    """A v3 checkpoint's stages, ready to run: ``TabPFNModel(config, tensors)``
    (``borders``: a regressor's bucket borders, :attr:`.Checkpoint.borders`)."""

    def __init__(self, config: dict, tensors: dict[str, np.ndarray],
                 inference_config: dict | None = None, borders: np.ndarray | None = None):
        self.config = dict(config)
        self.inference_config = dict(inference_config or {})
        self.borders = None if borders is None else np.asarray(borders, dtype=np.float32)
        self.tensors = {k: as_float32(v) for k, v in tensors.items()}
        self.classification = self.config["max_num_classes"] >= 2
        self.column = column.ColumnStage(self.tensors, self.config)
        self.row = row.RowStage(self.tensors, self.config)
        self.icl = icl.ICLStage(self.tensors, self.config)
        self.decoder = decoder.Decoder(self.tensors, self.config)

    @property
    def task(self) -> str:
        return "classification" if self.classification else "regression"

    @property
    def n_out(self) -> int:
        return self.decoder.n_out


def load(path: str | PathLike | Checkpoint) -> TabPFNModel:
    """A model from a checkpoint file (or a read :class:`Checkpoint`)."""
    ck = path if isinstance(path, Checkpoint) else read_checkpoint(path)
    return TabPFNModel(ck.config, ck.tensors, ck.inference_config, ck.borders)


@dataclass(frozen=True)
class Context:
    """What a model call's query rows need from its context rows."""

    scaler: cells.Scaler
    column: column.ColumnCache
    icl: icl.ICLCache
    decoder: decoder.DecoderCache | None
    n_features: int


def _targets(model: TabPFNModel, y_train: np.ndarray, n: int) -> np.ndarray:
    y = np.asarray(y_train, dtype=np.float32)
    if y.shape != (n,):
        raise ValueError(f"TabPFN context targets must be a 1-D array of {n} values, "
                         f"got shape {y.shape}")
    if n == 0:
        raise ValueError("TabPFN needs at least one context row")
    if not np.isfinite(y).all():
        raise ValueError("TabPFN context targets must be finite")
    if model.classification:
        if np.any(y < 0) or np.any(y != np.round(y)):
            raise ValueError("TabPFN class labels must be integers 0 … C−1")
        if y.max() > model.n_out - 1:
            raise ValueError(f"Target is out of range: this checkpoint takes classes 0 … "
                             f"{model.n_out - 1}, got {int(y.max())}")
    return y


def _train_stages(model: TabPFNModel, x: np.ndarray, y: np.ndarray) -> dict:
    scaler = cells.fit_scaler(x)
    grouped = model.column.cells.grouped(scaler, x)
    emb, col_cache = column.embed_context(model.column, grouped, y)
    r = row.aggregate(model.row, emb)
    layers: list[np.ndarray] = []
    out, icl_cache = icl.fit_context(model.icl, r, y, layers)
    dec_cache = decoder.fit_context(model.decoder, out, y)
    context = Context(scaler, col_cache, icl_cache, dec_cache, x.shape[1])
    return {"context": context, "grouped": grouped, "column": emb, "row": r, "icl": out,
            **{f"icl_{i}": h for i, h in enumerate(layers)}}


def fit_context(model: TabPFNModel, x_train: np.ndarray, y_train: np.ndarray) -> Context:
    """Run the context rows (N, F) with targets (N,) once and keep every cache."""
    x = as_float32(x_train)
    if x.ndim != 2:
        raise ValueError(f"TabPFN context rows must be 2-D (rows, features), got {x.shape}")
    with threads.pooled():
        return _train_stages(model, x, _targets(model, y_train, x.shape[0]))["context"]


def _query_stages(model: TabPFNModel, context: Context, x: np.ndarray,
                  record: bool = False) -> dict:
    grouped = model.column.cells.grouped(context.scaler, x)
    emb = column.embed_queries(model.column, context.column, grouped)
    r = row.aggregate(model.row, emb)
    layers: list[np.ndarray] | None = [] if record else None
    out = icl.query(model.icl, context.icl, r, layers)
    return {"grouped": grouped, "column": emb, "row": r, "icl": out,
            **{f"icl_{i}": h for i, h in enumerate(layers or [])},
            "logits": decoder.logits(model.decoder, context.decoder, out)}


def predict_queries(model: TabPFNModel, context: Context, x_test: np.ndarray) -> np.ndarray:
    """Query rows (M, F) → logits (M, n_out), from the caches."""
    x = as_float32(x_test)
    if x.ndim != 2 or x.shape[1] != context.n_features:
        raise ValueError(f"TabPFN query rows must be (rows, {context.n_features}), "
                         f"got {x.shape}")
    outs = []
    with threads.pooled():
        for block, n in query_blocks(x):
            outs.append(_query_stages(model, context, block)["logits"][:n])
    return np.concatenate(outs) if outs else np.zeros((0, model.n_out), np.float32)


def forward(model: TabPFNModel, x_train: np.ndarray, y_train: np.ndarray,
            x_test: np.ndarray) -> np.ndarray:
    """One model call's raw output for ``x_test``: (M, max_num_classes) class logits or
    (M, num_buckets) bar-distribution logits."""
    return predict_queries(model, fit_context(model, x_train, y_train), x_test)


def stages(model: TabPFNModel, x_train: np.ndarray, y_train: np.ndarray,
           x_test: np.ndarray) -> dict[str, np.ndarray]:
    """Every stage's output for context then query rows (R = N + M), for tests against the
    package: ``grouped`` (R, F, G'), ``column`` (R, F, E), ``hidden_<i>`` (F, I, E),
    ``row`` (R, Cl · E), ``icl_<i>`` (R, D) each ICL layer's output, ``icl`` (R, D) after
    ``output_norm``, ``logits`` (M, n_out)."""
    x_train, x_test = as_float32(x_train), as_float32(x_test)
    y = _targets(model, y_train, x_train.shape[0])
    train = _train_stages(model, x_train, y)
    test = _query_stages(model, train["context"], x_test, record=True)
    names = ["grouped", "column", "row", *(f"icl_{i}" for i in range(len(model.icl.layers))),
             "icl"]
    out = {k: np.concatenate([train[k], test[k]]) for k in names}
    for i, h in enumerate(train["context"].column.hidden):
        out[f"hidden_{i}"] = h
    out["logits"] = test["logits"]
    return out
