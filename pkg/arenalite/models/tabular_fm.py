"""``tabular_fm``: arenalite's tabular foundation model, numpy reference (docs/models.md).

One token per cell plus a target token per row. Every layer runs pre-LayerNorm attention
across the tokens of a row (feature attention), then across the rows of each token column
(row attention: every row attends to context rows only), then a GELU MLP, with residuals.
A head on the query rows' target token gives class logits or a Gaussian (mean, spread) of
the standardized target. Trained on a synthetic prior by ``scripts/train_tfm.py``.

Compute is float32 (weights and activations), as on the GPU. Context rows never see query
rows, so the context is run through the stack once per split and each layer's row-attention
keys/values are kept (the KV cache); query rows then go through in fixed blocks of
:data:`QUERY_BLOCK` rows (the last block zero-padded), so every matrix product has the same
shape whatever the number of query rows: a row's output does not depend on the other
query rows, and is bit-identical however the caller batches its queries where the BLAS
kernel's result for a row does not depend on its place in the block (OpenBLAS 0.3.31 on an
AMD EPYC core gives rows differences of float32 round-off, ≤ 3e-7 here; tests allow 2e-6
of the outputs' scale).
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from os import PathLike
from pathlib import Path
from typing import Any

import numpy as np

from . import safetensors, threads
from .preprocess import Prepared, target_stats
from .weights import Weights, check_tensor_names, check_transformer_config

MODEL = "tabular_fm"
FORMAT = "arenalite-weights"
VERSION = "2"
CONFIG_KEYS = ("d_model", "n_heads", "n_layers", "d_mlp", "max_features", "max_classes",
               "max_context", "ln_eps")
DEFAULT_PATH = Path(__file__).parent / "weights" / "tabular_fm.safetensors"
CLIP = 10.0
"""Standardized features are clipped to ±CLIP (outliers of a test row stay bounded)."""
MIN_SIGMA = 1e-3
"""Regression spread: ``softplus(s) + MIN_SIGMA`` on the standardized target's scale."""
QUERY_BLOCK = 64
SCORE_BUDGET = 1 << 24
"""Row-attention scores held at once (floats); sets how many context rows go per block."""
CONTEXT_SEED = 0


def check_config(config: object) -> dict:
    """Validate a ``tabular_fm`` config; returns a plain dict with typed values."""
    return check_transformer_config(config, CONFIG_KEYS, "tabular_fm config")


def tensor_shapes(config: dict) -> dict[str, tuple[int, ...]]:
    """Every tensor name of a config and its shape."""
    d, m = config["d_model"], config["d_mlp"]
    f, c = config["max_features"], config["max_classes"]
    shapes: dict[str, tuple[int, ...]] = {
        "cell.w": (d,), "cell.b": (d,), "feature.emb": (f, d), "target.cls": (c, d),
        "target.reg.w": (d,), "target.reg.b": (d,), "target.unknown": (d,)}
    for layer in range(config["n_layers"]):
        for part in ("fa", "ra"):
            p = f"layers.{layer}.{part}."
            shapes[p + "ln.g"] = shapes[p + "ln.b"] = (d,)
            for name in "qkvo":
                shapes[p + name + ".w"] = (d, d)
                shapes[p + name + ".b"] = (d,)
        p = f"layers.{layer}.mlp."
        shapes.update({p + "ln.g": (d,), p + "ln.b": (d,), p + "w1.w": (d, m), p + "w1.b": (m,),
                       p + "w2.w": (m, d), p + "w2.b": (d,)})
    shapes.update({"head.ln.g": (d,), "head.ln.b": (d,), "head.cls.w": (d, c),
                   "head.cls.b": (c,), "head.reg.w": (d, 2), "head.reg.b": (2,)})
    return shapes


def read_weights(path: str | PathLike | None = None) -> Weights:
    """Read and validate a ``tabular_fm`` safetensors file (default: the shipped weights).

    The metadata must say format ``arenalite-weights``, version 2, model ``tabular_fm``
    and hold the config as JSON; every tensor of that config must be present (no more)
    with its exact shape.
    """
    p = Path(DEFAULT_PATH if path is None else path)
    metadata, tensors = safetensors.read(p)
    return weights_from(metadata, tensors, p.name)


def weights_from(metadata: dict[str, str], tensors: dict[str, np.ndarray],
                 name: str = "<weights>") -> Weights:
    """Validate parsed safetensors contents as ``tabular_fm`` weights."""
    for key, want in (("format", FORMAT), ("version", VERSION), ("model", MODEL)):
        if metadata.get(key) != want:
            raise ValueError(f"weights file {name!r}: metadata {key!r} must be {want!r}, "
                             f"got {metadata.get(key)!r}")
    try:
        config = json.loads(metadata.get("config", ""))
    except json.JSONDecodeError:
        raise ValueError(f"weights file {name!r}: metadata 'config' is not JSON: "
                         f"{metadata.get('config')!r}") from None
    config = check_config(config)
    shapes = tensor_shapes(config)
    check_tensor_names(shapes, tensors, f"weights file {name!r}")
    for tensor, shape in shapes.items():
        if tensors[tensor].shape != shape:
            raise ValueError(f"weights file {name!r}: tensor {tensor!r} has shape "
                             f"{list(tensors[tensor].shape)}, expected {list(shape)} for "
                             f"config {config}")
    return Weights(config, {t: tensors[t] for t in shapes})


def write_weights(path: str | PathLike, config: dict, tensors: dict[str, np.ndarray],
                  extra_metadata: dict[str, str] | None = None) -> Path:
    """Write ``tabular_fm`` weights as safetensors with the config in the metadata."""
    config = check_config(config)
    metadata = {"format": FORMAT, "version": VERSION, "model": MODEL,
                "config": json.dumps(config), **(extra_metadata or {})}
    weights_from(metadata, {k: np.asarray(v, np.float32) for k, v in tensors.items()})
    return safetensors.write(path, tensors, metadata)


def random_weights(config: dict, seed: int = 0) -> Weights:
    """Randomly initialised weights of any config (tests, and a user's starting point)."""
    config = check_config(config)
    rng = np.random.default_rng(seed)
    tensors = {}
    for tensor, shape in tensor_shapes(config).items():
        if tensor.endswith("ln.g"):
            tensors[tensor] = 1.0 + 0.1 * rng.standard_normal(shape)
        elif len(shape) == 2:
            tensors[tensor] = rng.standard_normal(shape) / math.sqrt(shape[0])
        else:
            tensors[tensor] = 0.3 * rng.standard_normal(shape)
    return Weights(config, {k: v.astype(np.float32) for k, v in tensors.items()})


def check_limits(config: dict, n_features: int, n_classes: int | None) -> None:
    """More features or classes than the weights' manifest allows is a ValueError."""
    if n_features > config["max_features"]:
        raise ValueError(f"tabular_fm weights take at most max_features="
                         f"{config['max_features']} features, got {n_features}")
    if n_classes is not None and n_classes > config["max_classes"]:
        raise ValueError(f"tabular_fm weights take at most max_classes="
                         f"{config['max_classes']} classes, got n_classes={n_classes}")


def row_hash(rows: np.ndarray, seed: int = CONTEXT_SEED) -> np.ndarray:
    """A 32-bit integer hash of row indices (Wellons' lowbias32 of ``row + seed·0x9E3779B9``).

    Integer-exact, so JavaScript (``Math.imul``) computes the same values bit for bit.
    """
    x = (rows.astype(np.uint64) + np.uint64(seed) * np.uint64(0x9E3779B9)) & np.uint64(0xFFFFFFFF)
    x = x.astype(np.uint32)
    x ^= x >> np.uint32(16)
    x *= np.uint32(0x7FEB352D)
    x ^= x >> np.uint32(15)
    x *= np.uint32(0x846CA68B)
    x ^= x >> np.uint32(16)
    return x


def context_rows(n_rows: int, max_context: int) -> np.ndarray | None:
    """The context rows kept when there are more than ``max_context``; None keeps all.

    The ``max_context`` rows of smallest :func:`row_hash` (ties: lower row index), in row
    order: a seeded uniform sample that the WebGPU bridge reproduces exactly.
    """
    if n_rows <= max_context:
        return None
    order = np.lexsort((np.arange(n_rows), row_hash(np.arange(n_rows))))
    return np.sort(order[:max_context])


# --------------------------------------------------------------------------------------------
# Stages (float32)
# --------------------------------------------------------------------------------------------

def layer_norm(x: np.ndarray, g: np.ndarray, b: np.ndarray, eps: float) -> np.ndarray:
    """``(x − mean) / sqrt(var + eps) · g + b`` over the last axis (population variance)."""
    mean = x.mean(axis=-1, keepdims=True)
    centred = x - mean
    var = (centred * centred).mean(axis=-1, keepdims=True)
    return centred / np.sqrt(var + np.float32(eps)) * g + b


def gelu(x: np.ndarray) -> np.ndarray:
    """GELU in the tanh form ``0.5 x (1 + tanh(√(2/π) (x + 0.044715 x³)))``."""
    c = np.float32(math.sqrt(2.0 / math.pi))
    return np.float32(0.5) * x * (np.float32(1.0) + np.tanh(c * (x + np.float32(0.044715)
                                                                  * x * x * x)))


def softmax(z: np.ndarray) -> np.ndarray:
    """Max-subtracted softmax over the last axis."""
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def softplus(x: np.ndarray) -> np.ndarray:
    """``log(1 + e^x)``, computed stably."""
    return np.logaddexp(np.float32(0.0), x)


class Model:
    """Float32 weights of one ``tabular_fm`` and its config, looked up by tensor name."""

    def __init__(self, weights: Weights) -> None:
        self.config = weights.config
        self.t = {k: np.ascontiguousarray(v, dtype=np.float32) for k, v in weights.tensors.items()}
        self.heads = self.config["n_heads"]
        self.eps = self.config["ln_eps"]

    def linear(self, x: np.ndarray, prefix: str) -> np.ndarray:
        return x @ self.t[prefix + ".w"] + self.t[prefix + ".b"]

    def ln(self, x: np.ndarray, prefix: str) -> np.ndarray:
        return layer_norm(x, self.t[prefix + ".g"], self.t[prefix + ".b"], self.eps)


def _heads(x: np.ndarray, heads: int) -> np.ndarray:
    """(..., L, d) → (..., heads, L, d_h)."""
    *lead, length, d = x.shape
    return np.swapaxes(x.reshape(*lead, length, heads, d // heads), -2, -3)


def _merge(x: np.ndarray) -> np.ndarray:
    """(..., heads, L, d_h) → (..., L, d)."""
    x = np.swapaxes(x, -2, -3)
    return x.reshape(*x.shape[:-2], x.shape[-2] * x.shape[-1])


def _attend(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> np.ndarray:
    scale = np.float32(1.0 / math.sqrt(q.shape[-1]))
    return softmax((q * scale) @ np.swapaxes(k, -1, -2)) @ v


def embed(model: Model, x: np.ndarray, target: np.ndarray) -> np.ndarray:
    """Cell tokens ``x·cell.w + cell.b + feature.emb[j]`` and the target token: (rows, F+1, d)."""
    t = model.t
    cells = x[..., None] * t["cell.w"] + t["cell.b"] + t["feature.emb"][:x.shape[1]]
    return np.concatenate([cells, target[:, None, :]], axis=1)


def target_tokens(model: Model, prep: Prepared, n_query: int) -> tuple[np.ndarray, np.ndarray]:
    """Context target tokens (label embedding or scaled regression vector); query: unknown."""
    t = model.t
    if prep.n_classes is None:
        mean, std = target_stats(prep.y_train)
        z = ((prep.y_train - mean) / std).astype(np.float32)
        ctx = z[:, None] * t["target.reg.w"] + t["target.reg.b"]
    else:
        ctx = t["target.cls"][prep.y_train]
    return ctx, np.broadcast_to(t["target.unknown"], (n_query, len(t["target.unknown"])))


def feature_attention(model: Model, layer: int, h: np.ndarray) -> np.ndarray:
    """Residual attention among the F+1 tokens of each row."""
    p = f"layers.{layer}.fa"
    a = model.ln(h, p + ".ln")
    q, k, v = (_heads(model.linear(a, f"{p}.{n}"), model.heads) for n in "qkv")
    return h + model.linear(_merge(_attend(q, k, v)), p + ".o")


def row_kv(model: Model, layer: int, h_ctx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Row-attention keys and values of the context rows: (F+1, heads, n, d_h) each."""
    p = f"layers.{layer}.ra"
    a = np.swapaxes(model.ln(h_ctx, p + ".ln"), 0, 1)
    return (_heads(model.linear(a, p + ".k"), model.heads),
            _heads(model.linear(a, p + ".v"), model.heads))


def row_attention(model: Model, layer: int, h: np.ndarray, k: np.ndarray,
                  v: np.ndarray) -> np.ndarray:
    """Residual attention of rows ``h`` over the context rows of the same token column."""
    p = f"layers.{layer}.ra"
    a = np.swapaxes(model.ln(h, p + ".ln"), 0, 1)
    q = _heads(model.linear(a, p + ".q"), model.heads)
    o = np.swapaxes(_merge(_attend(q, k, v)), 0, 1)
    return h + model.linear(o, p + ".o")


def mlp(model: Model, layer: int, h: np.ndarray) -> np.ndarray:
    p = f"layers.{layer}.mlp"
    return h + model.linear(gelu(model.linear(model.ln(h, p + ".ln"), p + ".w1")), p + ".w2")


def head(model: Model, h_q: np.ndarray, prep: Prepared) -> np.ndarray:
    """Probabilities (m × C), or (m × 2) Gaussian mean and spread in the target's units."""
    z = model.ln(h_q[:, -1], "head.ln")
    if prep.n_classes is None:
        out = model.linear(z, "head.reg").astype(np.float64)
        mean, std = target_stats(prep.y_train)
        sigma = softplus(out[:, 1]) + MIN_SIGMA
        return np.stack([out[:, 0] * std + mean, sigma * std], axis=1)
    logits = model.linear(z, "head.cls")[:, :prep.n_classes].astype(np.float64)
    return softmax(logits)


def _blocks(n: int, size: int):
    return [(s, min(n, s + size)) for s in range(0, n, size)]


def _row_block(model: Model, n_tokens: int, n_ctx: int) -> int:
    """Rows per row-attention block, from the score budget (depends on shapes only)."""
    return max(1, min(QUERY_BLOCK, SCORE_BUDGET // max(1, n_tokens * model.heads * n_ctx)))


def _rows_and_mlp(model: Model, layer: int, h: np.ndarray, k: np.ndarray, v: np.ndarray,
                  block: int) -> np.ndarray:
    """Row attention then the MLP, for feature-attended ``h``: rows are independent given
    the keys and values, so their blocks (at most ``block`` rows, the score budget shared
    between the threads) run on the worker threads."""
    parts = threads.map_chunks(lambda se: row_attention(model, layer, h[se[0]:se[1]], k, v),
                               _blocks(len(h), threads.spread(len(h), block)))
    return mlp(model, layer, np.concatenate(parts))


def _queries_through(model: Model, layer: int, h_q: np.ndarray, k: np.ndarray, v: np.ndarray,
                     block: int) -> np.ndarray:
    """Layer ``layer`` on the query rows, in blocks of QUERY_BLOCK rows on the worker threads
    (the blocks are independent given the context's keys and values)."""
    def through(se: tuple[int, int]) -> np.ndarray:
        attended = feature_attention(model, layer, h_q[se[0]:se[1]])
        return _rows_and_mlp(model, layer, attended, k, v, block)

    return np.concatenate(threads.map_chunks(through, _blocks(len(h_q), QUERY_BLOCK)))


def forward(model: Model, prep: Prepared,
            clock: Callable[[], float] = time.perf_counter) -> tuple[np.ndarray, dict]:
    """Output and stage times (ms): context once per split with its KV cache, then queries.

    Layer-major: per layer, the context rows pass feature attention and their row-attention
    keys/values are computed once; every block of query rows attends to them; then the
    context rows finish the layer (row attention, MLP).
    """
    check_limits(model.config, prep.x_train.shape[1], prep.n_classes)
    t0 = clock()
    x_ctx = np.clip(prep.x_train, -CLIP, CLIP).astype(np.float32)
    x_q = np.clip(prep.x_test, -CLIP, CLIP).astype(np.float32)
    tgt_ctx, tgt_q = target_tokens(model, prep, len(x_q))
    h_ctx = embed(model, x_ctx, tgt_ctx)
    n_q, n_ctx, n_tokens = len(x_q), len(x_ctx), x_ctx.shape[1] + 1
    block = _row_block(model, n_tokens, n_ctx)
    pad = -n_q % QUERY_BLOCK
    h_q = embed(model, np.pad(x_q, ((0, pad), (0, 0))),
                np.pad(tgt_q, ((0, pad), (0, 0))))
    t1 = clock()
    layers = []
    with threads.pooled():
        for layer in range(model.config["n_layers"]):
            start = clock()
            h_ctx = feature_attention(model, layer, h_ctx)
            k, v = row_kv(model, layer, h_ctx)
            h_q = _queries_through(model, layer, h_q, k, v, block)
            if layer + 1 < model.config["n_layers"]:
                h_ctx = _rows_and_mlp(model, layer, h_ctx, k, v, block)
            layers.append((clock() - start) * 1e3)
    t2 = clock()
    output = np.concatenate([head(model, h_q[s:e], prep)
                             for s, e in _blocks(len(h_q), QUERY_BLOCK)])[:n_q]
    t3 = clock()
    return output, {"embed": (t1 - t0) * 1e3, "layers": layers, "head": (t3 - t2) * 1e3}


def forward_uncached(model: Model, prep: Prepared) -> np.ndarray:
    """Reference: the whole stack on context + all query rows at once, keys/values
    recomputed from the stacked states at every layer (only context rows attended to)."""
    x = np.clip(np.concatenate([prep.x_train, prep.x_test]), -CLIP, CLIP).astype(np.float32)
    tgt_ctx, tgt_q = target_tokens(model, prep, len(prep.x_test))
    h = embed(model, x, np.concatenate([tgt_ctx, tgt_q]))
    n = len(prep.x_train)
    for layer in range(model.config["n_layers"]):
        h = feature_attention(model, layer, h)
        k, v = row_kv(model, layer, h[:n])
        h = mlp(model, layer, row_attention(model, layer, h, k, v))
    return head(model, h[n:], prep)


def subsample(x_train: Any, y_train: np.ndarray, max_context: int) -> tuple[Any, np.ndarray]:
    """Keep :func:`context_rows` of the context when it has more than ``max_context`` rows
    (``x_train`` an array, or a table's DataFrame, whose rows are taken by position)."""
    keep = context_rows(len(x_train), max_context)
    if keep is None:
        return x_train, y_train
    rows = x_train.iloc[keep] if hasattr(x_train, "iloc") else x_train[keep]
    return rows, y_train[keep]


__all__ = ["CONFIG_KEYS", "DEFAULT_PATH", "Model", "check_config", "check_limits",
           "context_rows", "forward", "forward_uncached", "random_weights", "read_weights",
           "subsample", "tensor_shapes", "weights_from", "write_weights"]
