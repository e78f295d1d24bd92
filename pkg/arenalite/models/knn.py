"""k nearest neighbours over the context rows (docs/models.md, ``knn``)."""

from __future__ import annotations

import numpy as np

from .distances import query_batches, squared_distances

# Squared distances are rounded to this many decimals before ranking, so that rows at
# the same distance in exact arithmetic tie whatever the floating-point summation order.
TIE_DECIMALS = 9


def neighbours(x_query: np.ndarray, x_context: np.ndarray, k: int) -> np.ndarray:
    """Indices (m × k) of the k nearest context rows, ties broken by the lower row index."""
    k = min(k, len(x_context))
    out = np.empty((len(x_query), k), dtype=np.int64)
    for batch in query_batches(len(x_query), len(x_context), x_query.shape[1]):
        d = np.round(squared_distances(x_query[batch], x_context), TIE_DECIMALS)
        out[batch] = np.argsort(d, axis=1, kind="stable")[:, :k]
    return out


def knn_output(idx: np.ndarray, y_context: np.ndarray, n_classes: int | None) -> np.ndarray:
    """Laplace-smoothed class shares ``(count_c + 1) / (k + C)``, or the neighbours' mean."""
    labels = y_context[idx]
    if n_classes is None:
        return labels.mean(axis=1)
    counts = (labels[:, :, None] == np.arange(n_classes)).sum(axis=1)
    return (counts + 1.0) / (idx.shape[1] + n_classes)
