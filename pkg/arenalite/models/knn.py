"""k nearest neighbours over the context rows (docs/models.md, ``knn``).

The neighbours are defined by the exact difference-based distances rounded to
``TIE_DECIMALS``, ties broken by the lower row index. Ranking all n of them for every
query row would be a sort of n exact distances; instead each block of query rows

1. computes the one-matrix-product :func:`~.distances.shifted_distances` in float32
   (context rows in a fixed pseudo-random order), splits each query row's values into k groups of
   consecutive columns and takes the largest of the k group minima t: k distinct context
   rows are at or below t, so t bounds the k-th smallest from above (one pass, no sort;
   the random order keeps t tight on a table sorted by its target: about k ln k
   candidates a row);
2. keeps as candidates every context row whose shifted distance is at most t plus twice the
   expansion's error bound E, plus the rounding margin (2 · 10^−TIE_DECIMALS and a relative
   allowance for np.round's own roundoff);
3. recomputes the candidates' exact distances (:func:`~.distances.pair_distances`, the same
   bits as the full computation), rounds them and takes the k smallest by (distance, index).

Why the candidates hold the k nearest: the k rows whose shifted distances are at or below
t (the group minima) have exact distances at most t + ‖x‖² + E, so the k-th smallest exact
distance e_k is at most that. A row j among the k nearest has round(d_j) ≤ round(e_k), so
d_j ≤ e_k + 10^−TIE_DECIMALS (plus the rounding's roundoff), and its shifted distance is at
most d_j − ‖x‖² + E ≤ t + 2E + 10^−TIE_DECIMALS + roundoff. So the result is the definition's,
index for index; only the work differs. E is float32's bound (about 5e-5 of
‖x‖² + max_j ‖x_j‖², ~3e-3 on 26 standardized features): it only widens the candidate set
a little. A block with a row whose ‖x‖² + max_j ‖x_j‖² reaches 1e30 (where float32 could
overflow) is ranked by the full exact computation instead. Blocks run on the worker
threads (:mod:`.threads`).
"""

from __future__ import annotations

import numpy as np

from . import threads
from .distances import (
    augmented_context,
    expansion_error,
    pair_distances,
    query_batches,
    row_blocks,
    shifted_distances,
    squared_distances,
    squared_norms,
)

# Squared distances are rounded to this many decimals before ranking, so that rows at
# the same distance in exact arithmetic tie whatever the floating-point summation order.
TIE_DECIMALS = 9

# Margin for rounding to TIE_DECIMALS: two half units, doubled, and a relative allowance
# for the roundoff of np.round's scaling by 10^TIE_DECIMALS.
_ROUND_MARGIN = 2.0 * 10.0 ** -TIE_DECIMALS
_ROUND_RELATIVE = 1e-12

# Squared norms below this keep every float32 shifted distance finite and normal
# (|2 a·b| ≤ ‖a‖² + ‖b‖²); larger ones go to the exact computation.
_MAX_NORMS = 1e30

# The seed of step 1's fixed order of the context rows (the result does not depend on it).
ORDER_SEED = 43


def neighbours(x_query: np.ndarray, x_context: np.ndarray, k: int) -> np.ndarray:
    """Indices (m × k) of the k nearest context rows, ties broken by the lower row index."""
    n = len(x_context)
    k = min(k, n)
    out = np.empty((len(x_query), k), dtype=np.int64)
    if k == 0 or len(x_query) == 0:
        return out
    order = np.random.default_rng(ORDER_SEED).permutation(n)
    context = augmented_context(x_context[order])
    largest = float(context[-1].max())
    if largest < _MAX_NORMS:  # else every block takes the exact path, context unused
        context = context.astype(np.float32)
    query_norms = squared_norms(x_query)
    error = expansion_error(query_norms, largest, x_query.shape[1], np.float32)
    bounded = query_norms + largest < _MAX_NORMS

    def block(rows: slice) -> np.ndarray:
        if not bounded[rows].all():
            return _exact(x_query[rows], x_context, k)
        return _preselected(x_query[rows], x_context, context, order, k, query_norms[rows],
                            error[rows])

    blocks = list(row_blocks(len(x_query), n))
    for rows, found in zip(blocks, threads.map_chunks(block, blocks), strict=True):
        out[rows] = found
    return out


def _preselected(x_query: np.ndarray, x_context: np.ndarray, context: np.ndarray,
                 order: np.ndarray, k: int, query_norms: np.ndarray,
                 error: np.ndarray) -> np.ndarray:
    """Steps 1–3 of the module docstring for one block of query rows; ``context`` holds
    the context rows ``x_context[order]``."""
    shifted = shifted_distances(x_query, context)
    b, n = shifted.shape
    group = n // k
    bound = shifted[:, :group * k].reshape(b, k, group).min(axis=2).max(axis=1)
    bound = bound.astype(np.float64)
    reach = (bound + 2.0 * error + _ROUND_MARGIN
             + _ROUND_RELATIVE * (np.abs(bound + query_norms) + error))
    reach = np.nextafter(reach.astype(shifted.dtype), np.inf)  # rounded up, never down
    rows, place = np.divmod(np.flatnonzero(shifted <= reach[:, None]), n)
    cols = order[place]
    rounded = np.round(pair_distances(x_query, x_context, rows, cols), TIE_DECIMALS)
    order = np.lexsort((cols, rounded, rows))
    counts = np.bincount(rows, minlength=len(x_query))
    starts = np.cumsum(counts) - counts
    return cols[order[starts[:, None] + np.arange(k)]]


def _exact(x_query: np.ndarray, x_context: np.ndarray, k: int) -> np.ndarray:
    """The definition itself: a stable sort of every rounded exact distance."""
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
