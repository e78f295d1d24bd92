"""The decoder, on the query rows' ICL output (M, D).

Classification (``ManyClassDecoder``): attention from the query rows to the context rows,
``decoder_num_heads`` heads of ``decoder_head_dim`` (queries scaled by its softmax scaling
when ``decoder_use_softmax_scaling``), whose values are the context rows' one-hot targets
(width: the highest context class + 1). The heads' average is a probability per class,
zero-padded to ``max_num_classes``; the logits are ``log(max(p, 1e-5) + 3e-5)``. The
context rows' projected keys and their one-hot targets are the decoder's cache (the
package's ``decoder_keys``).

Regression (``output_projection``): ``Linear → GELU → Linear`` to one logit per bucket of
the bar distribution (``num_buckets``).

NaN logits become 0 (the package's ``nan_to_num``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .layers import Block, attend, linear, mlp, split_heads

P_FLOOR = np.float32(1e-5)
P_OFFSET = np.float32(3e-5)


@dataclass(frozen=True)
class DecoderCache:
    """The context rows' decoder keys (heads, N, d) and one-hot targets (N, classes)."""

    keys: np.ndarray
    one_hot: np.ndarray


class Decoder:
    def __init__(self, tensors: dict[str, np.ndarray], config: dict):
        self.classification = config["max_num_classes"] >= 2
        self.n_out = int(config["max_num_classes"] if self.classification
                         else config["num_buckets"])
        if self.classification:
            self.root = Block(tensors, "many_class_decoder.")
            self.heads = int(config["decoder_num_heads"])
            self.scaled = bool(config["decoder_use_softmax_scaling"])
        else:
            self.root = Block(tensors, "output_projection.")


def fit_context(decoder: Decoder, train_out: np.ndarray,
                y_train: np.ndarray) -> DecoderCache | None:
    """The context rows' ICL output (N, D) and class labels (N,) → the decoder's cache
    (``None`` for regression)."""
    if not decoder.classification:
        return None
    r = decoder.root
    keys = split_heads(linear(train_out, r["k_projection.weight"], r["k_projection.bias"]),
                       decoder.heads)
    labels = y_train.astype(np.int64)
    one_hot = np.zeros((len(labels), int(labels.max()) + 1), dtype=np.float32)
    one_hot[np.arange(len(labels)), labels] = 1.0
    return DecoderCache(np.ascontiguousarray(keys), one_hot)


def logits(decoder: Decoder, cache: DecoderCache | None, test_out: np.ndarray) -> np.ndarray:
    """Query rows' ICL output (M, D) → logits (M, max_num_classes or num_buckets)."""
    r = decoder.root
    if not decoder.classification:
        return np.nan_to_num(mlp(r, test_out), nan=0.0)
    q = split_heads(linear(test_out, r["q_projection.weight"], r["q_projection.bias"]),
                    decoder.heads)
    values = np.broadcast_to(cache.one_hot, (decoder.heads, *cache.one_hot.shape))
    scaling = r.sub("softmax_scaling_layer") if decoder.scaled else None
    p = attend(q, cache.keys, values, scaling).mean(axis=0)
    out = np.zeros((p.shape[0], decoder.n_out), dtype=np.float32)
    out[:, :p.shape[1]] = p
    out = np.log(np.maximum(out, P_FLOOR) + P_OFFSET)
    return np.nan_to_num(out, nan=0.0)
