"""Column embedding (``tabicl._model.embedding.ColEmbedding``): each column of a table,
with the context rows' targets added (target-aware), through a set transformer of induced
self-attention blocks, giving one E-vector per cell.

Feature grouping ``"same"`` turns column j into the group (x[(j+1) % H], x[(j+2) % H],
x[(j+4) % H]) (offsets 2^i, i < group size); ``"valid"`` pads with zeros and reshapes into
⌈H / size⌉ groups. An induced block first lets its inducing points attend to the context
rows of the column (QASSMax on this attention), then every row attends to those
hidden points. The hidden points' keys and values depend on the context alone: they are
the column stage's KV cache, computed once per split (:func:`embed_context`) and reused
for any batch of query rows (:func:`embed_queries`). Above ``max_classes`` classes the
target enters as mixed-radix digits, one pass each, and the passes are averaged.

The package reserves ``row_num_cls`` placeholder columns in front that the row stage
overwrites with its CLS tokens; they never influence a real column, so they are not
computed here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .. import threads
from .layers import AttentionBlock, Block, chunks, linear, ssmax_kind

SKIP_VALUE = np.float32(-100.0)
SCRATCH_FLOATS = 1 << 25
"""Floats of intermediate activations one column chunk may hold (128 MiB)."""


@dataclass(frozen=True)
class ColumnCache:
    """Per target pass (one, or one per mixed-radix digit) and per induced block, the
    keys and values of the hidden points: arrays (groups, heads, inducing points, d_head)."""

    passes: tuple[tuple[tuple[np.ndarray, np.ndarray], ...], ...]
    n_groups: int


def group_features(x: np.ndarray, mode: str | bool, size: int) -> np.ndarray:
    """(T, H) → (T, G, in_dim): the cells each column embedding reads."""
    if not mode:
        return x[:, :, None]
    h = x.shape[1]
    if mode is True or mode == "same":
        idx = np.arange(h)
        return np.stack([x[:, (idx + 2 ** i) % h] for i in range(size)], axis=-1)
    pad = (size - h % size) % size
    if pad:
        x = np.concatenate([x, np.zeros((x.shape[0], pad), dtype=x.dtype)], axis=1)
    return x.reshape(x.shape[0], -1, size)


def mixed_radix_bases(n_classes: int, max_classes: int) -> list[int]:
    """The digit bases that write every class below ``n_classes`` (package's rule)."""
    if n_classes <= max_classes:
        return [n_classes]
    digits = math.ceil(math.log(n_classes) / math.log(max_classes))
    k = min(math.ceil(n_classes ** (1.0 / digits)), max_classes)
    bases = [k] * digits
    product, i = k ** digits, 0
    while product < n_classes and i < digits:
        if bases[i] < max_classes:
            product = product // bases[i] * (bases[i] + 1)
            bases[i] += 1
        i += 1
    return bases


def target_passes(y: np.ndarray, max_classes: int) -> list[np.ndarray]:
    """The target codes each pass adds: ``y`` itself, or its mixed-radix digits."""
    if max_classes == 0:
        return [y]
    n_classes = int(y.max()) + 1
    bases = mixed_radix_bases(n_classes, max_classes)
    if len(bases) == 1:
        return [y]
    codes = y.astype(np.int64)
    out = []
    for i, base in enumerate(bases):
        divisor = math.prod(bases[i + 1:])
        out.append(((codes // divisor) % base).astype(np.float32))
    return out


class ColumnStage:
    """The column embedder's tensors and settings, read from a checkpoint's config."""

    def __init__(self, tensors: dict[str, np.ndarray], config: dict):
        self.root = Block(tensors, "col_embedder.")
        self.config = config
        self.group_mode = config["col_feature_group"]
        self.group_size = config["col_feature_group_size"]
        self.max_classes = config["max_classes"]
        ssmax = ssmax_kind(config["col_ssmax"])
        heads, norm_first = config["col_nhead"], config["norm_first"]
        self.blocks = [
            (self.root.sub(f"tf_col.blocks.{i}")["ind_vectors"],
             AttentionBlock(self.root.sub(f"tf_col.blocks.{i}.multihead_attn1"), heads, ssmax,
                            norm_first),
             AttentionBlock(self.root.sub(f"tf_col.blocks.{i}.multihead_attn2"), heads, "none",
                            norm_first))
            for i in range(config["col_num_blocks"])]
        self.embed_dim = config["embed_dim"]

    def cells(self, x: np.ndarray) -> np.ndarray:
        """(T, H) → (G, T, E): the input projection of each group of cells."""
        grouped = group_features(x, self.group_mode, self.group_size)
        src = linear(grouped, self.root["in_linear.weight"], self.root["in_linear.bias"])
        skip = (grouped == SKIP_VALUE).all(axis=-1)
        if skip.any():
            src[skip] = SKIP_VALUE
        return np.ascontiguousarray(src.transpose(1, 0, 2)), grouped

    def target_embedding(self, y: np.ndarray) -> np.ndarray:
        """(N,) → (N, E): ``y_encoder`` of the targets (one-hot linear, or linear in y)."""
        w, b = self.root["y_encoder.weight"], self.root["y_encoder.bias"]
        if self.max_classes > 0:
            return w.T[y.astype(np.int64)] + b
        return y[:, None] * w[:, 0] + b

    def finish(self, src: np.ndarray, grouped: np.ndarray) -> np.ndarray:
        """Optional affine output (``col_affine``): cells × weights + biases."""
        if not self.config["col_affine"]:
            return src
        from .layers import layer_norm

        r = self.root
        weights = linear(src, r["out_w.weight"], r["out_w.bias"])
        biases = linear(src, r["out_b.weight"], r["out_b.bias"])
        if self.config["norm_first"]:
            weights = layer_norm(weights, r["ln_w.weight"], r.get("ln_w.bias"))
            biases = layer_norm(biases, r["ln_b.weight"], r.get("ln_b.bias"))
        return grouped.transpose(1, 0, 2) * weights + biases

    def chunk_columns(self, n_rows: int) -> int:
        per_column = n_rows * (6 * self.embed_dim + self.config["col_nhead"]
                               * self.config["col_num_inds"])
        return max(1, SCRATCH_FLOATS // max(per_column, 1))


def _columns_through(stage: ColumnStage, src_all: np.ndarray, passes: list,
                     cols: slice) -> tuple[np.ndarray, list[list[tuple[np.ndarray, np.ndarray]]]]:
    """One chunk of column groups' context cells → their embeddings (cols, N, E) and, per
    target pass and induced block, the hidden points' keys and values."""
    total = None
    caches: list[list[tuple[np.ndarray, np.ndarray]]] = []
    for codes in passes:
        src = src_all[cols].copy()
        if codes is not None:
            src += stage.target_embedding(codes)
        per_block = []
        for inducing, first, second in stage.blocks:
            hidden = first(inducing, first.cache(src))
            kv = second.cache(hidden)
            per_block.append(kv)
            src = second(src, kv)
        caches.append(per_block)
        total = src if total is None else total + src
    if len(passes) > 1:
        total /= np.float32(len(passes))
    return total, caches


def embed_context(stage: ColumnStage, x_train: np.ndarray,
                  y_train: np.ndarray) -> tuple[np.ndarray, ColumnCache]:
    """Context rows (N, H) with targets (N,) → their embeddings (N, G, E) and the cache.

    Column groups are independent: their chunks run on the worker threads."""
    src_all, grouped = stage.cells(x_train)
    n_groups, n = src_all.shape[0], src_all.shape[1]
    passes = target_passes(y_train, stage.max_classes) if stage.config["col_target_aware"] \
        else [None]
    out = np.zeros((n, n_groups, stage.embed_dim), dtype=np.float32)
    parts = chunks(n_groups, threads.spread(n_groups, stage.chunk_columns(n)))
    done = threads.map_chunks(lambda cols: _columns_through(stage, src_all, passes, cols), parts)
    for cols, (total, _) in zip(parts, done, strict=True):
        out[:, cols] = total.transpose(1, 0, 2)
    cache = ColumnCache(
        tuple(tuple((np.concatenate([c[p][b][0] for _, c in done]),
                     np.concatenate([c[p][b][1] for _, c in done]))
                    for b in range(len(stage.blocks))) for p in range(len(passes))), n_groups)
    if stage.config["col_affine"]:
        out = stage.finish(out.transpose(1, 0, 2), grouped).transpose(1, 0, 2)
    return out, cache


def _queries_through(stage: ColumnStage, cache: ColumnCache, src_all: np.ndarray,
                     cols: slice) -> np.ndarray:
    """One chunk of column groups' query cells → their embeddings (cols, M, E)."""
    total = None
    for per_pass in cache.passes:
        src = src_all[cols]
        for (_, _, second), (k, v) in zip(stage.blocks, per_pass, strict=True):
            src = second(src, (k[cols], v[cols]))
        total = src if total is None else total + src
    if len(cache.passes) > 1:
        total /= np.float32(len(cache.passes))
    return total


def embed_queries(stage: ColumnStage, cache: ColumnCache, x: np.ndarray) -> np.ndarray:
    """Query rows (M, H) → embeddings (M, G, E), attending to the cached hidden points;
    column groups in chunks on the worker threads, as the context's."""
    src_all, grouped = stage.cells(x)
    n_groups = src_all.shape[0]
    parts = chunks(n_groups, threads.spread(n_groups, stage.chunk_columns(src_all.shape[1])))
    total = np.concatenate(threads.map_chunks(
        lambda cols: _queries_through(stage, cache, src_all, cols), parts))
    total = stage.finish(total, grouped)
    return np.ascontiguousarray(total.transpose(1, 0, 2))
