"""The bootstrap over units (datasets, match days) shared by Elo, IQM and rank sensitivity.

A replicate draws U units with replacement from the U units: as multinomial counts
(:func:`unit_counts`, how often each unit is drawn), which the methods turn into weighted
sums (a unit drawn c times counts c times) or, for order statistics over rows, into the
drawn rows themselves (:func:`unit_rows`). One draw per replicate from one stream, so
every method bootstraps datasets the same way. Intervals are percentile intervals at a
given ``confidence`` (:func:`percentile_interval`).

Counts are ``intp``, numpy's index type: 32-bit on wasm32, where ``np.repeat`` refuses
int64 counts.
"""

from __future__ import annotations

import numpy as np


def unit_counts(n_units: int, n_bootstrap: int, rng: np.random.Generator) -> np.ndarray:
    """(B, U) intp counts: per replicate, U units drawn with replacement from U (multinomial)."""
    counts = rng.multinomial(n_units, np.full(n_units, 1.0 / n_units), size=n_bootstrap)
    return counts.astype(np.intp, copy=False)


def unit_rows(counts: np.ndarray) -> np.ndarray:
    """(B, U) row indices of the drawn units, each unit repeated as often as drawn (sorted):
    the rows ``values[unit_rows(counts)]`` of a replicate for statistics over rows."""
    b, u = counts.shape
    units = np.broadcast_to(np.arange(u, dtype=np.intp), (b, u)).ravel()
    return np.repeat(units, counts.astype(np.intp, copy=False).ravel()).reshape(b, u)


def tail_percent(confidence: float) -> float:
    """The lower tail of a two-sided interval in percent, 50 (1 − confidence), rounded to 12
    digits so that 0.95 gives exactly 2.5 (and the upper end exactly 97.5)."""
    return round(50.0 * (1.0 - confidence), 12)


def percentile_interval(replicates: np.ndarray, confidence: float = 0.95,
                        axis: int = 0) -> np.ndarray:
    """(low, high) along ``axis``: the (1 − c)/2 and (1 + c)/2 quantiles of the replicates."""
    tail = tail_percent(confidence)
    return np.percentile(replicates, [tail, 100.0 - tail], axis=axis)


def interval_level(confidence: float) -> str:
    """The interval's level as figure titles write it: 0.95 → "95 %"."""
    return f"{100.0 * confidence:.12g} %"
