"""Single-head distance attention over the context rows (docs/models.md, ``attention``).

The logits ``−‖x − x_j‖² / T`` less their row maximum are computed from the one-product
:func:`~.distances.shifted_distances` (the row constant ``‖x‖²`` cancels in the softmax),
in blocks of query rows on the worker threads. They differ from the difference-based
distances by rounding only (:func:`~.distances.expansion_error`, about 1e-14 of the
squared norms), so the weights agree with the definition to about 1e-14 relative.
:func:`attention_predict` aggregates each block's weights at once, so the m × n weight
matrix never exists whole; :func:`attention_weights` returns it for callers that want it.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from . import threads
from .distances import augmented_context, row_blocks, shifted_distances


def _logit_context(x_context: np.ndarray, temperature: float) -> np.ndarray:
    """:func:`~.distances.augmented_context` times ``−1/T``: the product with it gives the
    logits ``−(‖x_j‖² − 2 x·x_j) / T`` directly."""
    return augmented_context(x_context) * (-1.0 / temperature)


def _block_weights(x_query: np.ndarray, context: np.ndarray) -> np.ndarray:
    """A block's unnormalized weights ``exp(−(d_j − min_j d_j) / T)`` (``context`` from
    :func:`_logit_context`)."""
    w = shifted_distances(x_query, context)
    w -= w.max(axis=1, keepdims=True)
    return np.exp(w, out=w)


def attention_weights(x_query: np.ndarray, x_context: np.ndarray,
                      temperature: float) -> np.ndarray:
    """Row-wise ``softmax_j(−‖x − x_j‖² / T)`` (m × n), max-subtracted for stability."""
    context = _logit_context(x_context, temperature)
    out = np.empty((len(x_query), len(x_context)))

    def block(rows: slice) -> None:
        w = _block_weights(x_query[rows], context)
        np.divide(w, w.sum(axis=1, keepdims=True), out=out[rows])

    threads.map_chunks(block, list(row_blocks(len(x_query), len(x_context))))
    return out


def attention_output(weights: np.ndarray, y_context: np.ndarray,
                     n_classes: int | None) -> np.ndarray:
    """Smoothed label shares ``(n·s_c + 1) / (n + C)``, or the weighted target mean."""
    if n_classes is None:
        return weights @ y_context
    n = weights.shape[1]
    shares = weights @ (y_context[:, None] == np.arange(n_classes)).astype(np.float64)
    return (n * shares + 1.0) / (n + n_classes)


def attention_predict(x_query: np.ndarray, x_context: np.ndarray, y_context: np.ndarray,
                      n_classes: int | None, temperature: float,
                      clock: Callable[[], float] = time.perf_counter
                      ) -> tuple[np.ndarray, float, float]:
    """:func:`attention_output` of :func:`attention_weights`, block by block: the output
    and the ms spent on the weights and on the aggregation (the call's wall time shared
    out in proportion to the two stages' summed block times)."""
    start = clock()
    context = _logit_context(x_context, temperature)
    n = len(x_context)
    labels = (y_context[:, None] if n_classes is None
              else (y_context[:, None] == np.arange(n_classes)).astype(np.float64))
    values = np.column_stack([labels, np.ones(n)])

    def block(rows: slice) -> tuple[np.ndarray, float, float]:
        t0 = clock()
        w = _block_weights(x_query[rows], context)
        t1 = clock()
        sums = w @ values
        return sums[:, :-1] / sums[:, -1:], t1 - t0, clock() - t1

    parts = threads.map_chunks(block, list(row_blocks(len(x_query), n)))
    shares = np.concatenate([p[0] for p in parts])
    weights_s, head_s = sum(p[1] for p in parts), sum(p[2] for p in parts)
    output = shares[:, 0] if n_classes is None else (n * shares + 1.0) / (n + n_classes)
    wall = (clock() - start) * 1e3
    share = weights_s / (weights_s + head_s) if weights_s + head_s > 0 else 1.0
    return output, wall * share, wall * (1.0 - share)
