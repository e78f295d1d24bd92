"""Squared Euclidean distances between query rows and context rows, in query batches."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

# Upper bound on the elements of one (batch × context × features) difference array.
MAX_ELEMENTS = 2_000_000


def query_batches(n_query: int, n_context: int, n_features: int) -> Iterator[slice]:
    """Slices of query rows small enough that a batch's difference array stays bounded."""
    size = max(1, MAX_ELEMENTS // max(1, n_context * n_features))
    for start in range(0, n_query, size):
        yield slice(start, min(start + size, n_query))


def squared_distances(x_query: np.ndarray, x_context: np.ndarray) -> np.ndarray:
    """``d[i, j] = Σ_f (x_query[i, f] − x_context[j, f])²`` computed from exact differences.

    Differences rather than the ``‖a‖² + ‖b‖² − 2a·b`` expansion keep duplicate rows at
    distance exactly 0, so ties (broken by row index) are real ties.
    """
    diff = x_query[:, None, :] - x_context[None, :, :]
    return np.einsum("qnf,qnf->qn", diff, diff)
