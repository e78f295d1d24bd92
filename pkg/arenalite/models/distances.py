"""Squared Euclidean distances between query rows and context rows.

Two ways, with different jobs:

- :func:`squared_distances` / :func:`pair_distances`: the exact definition, from the
  differences ``x − x_j``, summed by ``np.einsum`` in a fixed order per element. Duplicate
  rows are at distance exactly 0, so knn's ties are real ties. These are the distances knn
  ranks by.
- :func:`shifted_distances`: ``‖x_j‖² − 2 x·x_j``, one matrix product (BLAS), equal to
  ``‖x − x_j‖² − ‖x‖²`` up to rounding. Within a query row the dropped ``‖x‖²`` is a
  constant, so it ranks the context rows (knn's preselection) and gives the softmax
  logits (attention) at a fraction of the cost; :func:`expansion_error` bounds how far it
  can be from the exact distances.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

# Upper bound on the elements of one (batch × context × features) difference array.
MAX_ELEMENTS = 2_000_000

# Upper bound on the elements of one (query batch × context) block of distances: 2 MiB of
# float64, about one core's L2 cache (measured 0.15 s against 0.23 s for 1M elements, knn at
# 12,000 × 6,000 × 26 on 2 cores).
BLOCK_ELEMENTS = 262_144

# At least this many query rows a block: a matrix product with a handful of rows runs far
# below BLAS's speed (measured at 36,000 context rows: knn 0.42 → 0.23 s, attention
# 0.81 → 0.68 s for 3,000 query rows with 32 rows instead of 7).
MIN_BLOCK_ROWS = 32

def query_batches(n_query: int, n_context: int, n_features: int) -> Iterator[slice]:
    """Slices of query rows small enough that a batch's difference array stays bounded."""
    size = max(1, MAX_ELEMENTS // max(1, n_context * n_features))
    for start in range(0, n_query, size):
        yield slice(start, min(start + size, n_query))


def row_blocks(n_query: int, n_context: int) -> Iterator[slice]:
    """Slices of query rows whose (rows × context) distance block stays bounded (at least
    ``MIN_BLOCK_ROWS`` rows)."""
    size = max(MIN_BLOCK_ROWS, BLOCK_ELEMENTS // max(1, n_context))
    for start in range(0, n_query, size):
        yield slice(start, min(start + size, n_query))


def squared_distances(x_query: np.ndarray, x_context: np.ndarray) -> np.ndarray:
    """``d[i, j] = Σ_f (x_query[i, f] − x_context[j, f])²`` computed from exact differences.

    Differences rather than the ``‖a‖² + ‖b‖² − 2a·b`` expansion keep duplicate rows at
    distance exactly 0, so ties (broken by row index) are real ties.
    """
    diff = x_query[:, None, :] - x_context[None, :, :]
    return np.einsum("qnf,qnf->qn", diff, diff)


def pair_distances(x_query: np.ndarray, x_context: np.ndarray, rows: np.ndarray,
                   cols: np.ndarray) -> np.ndarray:
    """``d[p] = Σ_f (x_query[rows[p], f] − x_context[cols[p], f])²``, the same arithmetic
    (and so the same bits) as :func:`squared_distances`'s element ``[rows[p], cols[p]]``,
    for selected pairs only, in chunks that keep the difference array bounded."""
    out = np.empty(len(rows))
    size = max(1, MAX_ELEMENTS // max(1, x_query.shape[1]))
    for start in range(0, len(rows), size):
        part = slice(start, start + size)
        diff = x_query[rows[part]] - x_context[cols[part]]
        out[part] = np.einsum("pf,pf->p", diff, diff)
    return out


def squared_norms(x: np.ndarray) -> np.ndarray:
    """``‖x_i‖²`` for every row."""
    return np.einsum("nf,nf->n", x, x)


def augmented_context(x_context: np.ndarray) -> np.ndarray:
    """``[x_j, ‖x_j‖²]`` as an (F + 1) × n matrix, the right operand of
    :func:`shifted_distances` (made once per call, shared by every query block)."""
    return np.ascontiguousarray(np.column_stack([x_context, squared_norms(x_context)]).T)


def shifted_distances(x_query: np.ndarray, context: np.ndarray) -> np.ndarray:
    """``s[i, j] = ‖x_context[j]‖² − 2 x_query[i]·x_context[j]`` as one matrix product
    ``[−2 x_query, 1] @ context`` in ``context``'s dtype (``context`` from
    :func:`augmented_context`, float64 or cast to float32; the factor −2 is exact): the
    squared distance less the row constant ``‖x_query[i]‖²``, within
    :func:`expansion_error` of the exact one."""
    return (np.column_stack([-2.0 * x_query, np.ones(len(x_query))]).astype(context.dtype)
            @ context)


def expansion_error(query_norms: np.ndarray, max_context_norm: float, n_features: int,
                    dtype: type = np.float64) -> np.ndarray:
    """Per query row, a bound on ``|s[i, j] + ‖x_query[i]‖² − d[i, j]|`` over every j, with
    ``s`` from :func:`shifted_distances` in ``dtype`` and ``d`` from
    :func:`squared_distances` (float64).

    With u the unit roundoff of ``dtype`` and ``γ_n = n u / (1 − n u)``: each of the
    product's F + 1 terms is within ``3u`` of its true value (its two operands rounded to
    ``dtype``, the product rounded), and their sum within ``γ_{F+3} (2 Σ|a_f b_f| + ‖b‖²)
    ≤ 2 γ_{F+3} (‖a‖² + ‖b‖²)`` (as ``2|a_f b_f| ≤ a_f² + b_f²``); the float64 norm
    ``‖b‖²`` is within ``γ_F ‖b‖²``, and the exact difference sum within
    ``γ_{F+2} d ≤ 2 γ_{F+2} (‖a‖² + ‖b‖²)`` (float64 u, no larger). In all below
    ``6 (F + 4) u (‖a‖² + ‖b‖²)``, bounded here by ``16 (F + 4) u (‖a‖² + max ‖b‖²)``
    for safety (the norms used are computed ones, within ``γ_F`` of the true ones).
    Underflow adds at most F times the smallest subnormal, far below knn's rounding margin.
    """
    unit = np.finfo(dtype).eps / 2
    return 16.0 * (n_features + 4) * unit * (query_norms + max_context_norm)
