"""Single-head distance attention over the context rows (docs/models.md, ``attention``)."""

from __future__ import annotations

import numpy as np

from .distances import query_batches, squared_distances


def attention_weights(x_query: np.ndarray, x_context: np.ndarray,
                      temperature: float) -> np.ndarray:
    """Row-wise ``softmax_j(−‖x − x_j‖² / T)`` (m × n), max-subtracted for stability."""
    out = np.empty((len(x_query), len(x_context)))
    for batch in query_batches(len(x_query), len(x_context), x_query.shape[1]):
        logits = -squared_distances(x_query[batch], x_context) / temperature
        logits -= logits.max(axis=1, keepdims=True)
        w = np.exp(logits)
        out[batch] = w / w.sum(axis=1, keepdims=True)
    return out


def attention_output(weights: np.ndarray, y_context: np.ndarray,
                     n_classes: int | None) -> np.ndarray:
    """Smoothed label shares ``(n·s_c + 1) / (n + C)``, or the weighted target mean."""
    if n_classes is None:
        return weights @ y_context
    n = weights.shape[1]
    shares = weights @ (y_context[:, None] == np.arange(n_classes)).astype(np.float64)
    return (n * shares + 1.0) / (n + n_classes)
