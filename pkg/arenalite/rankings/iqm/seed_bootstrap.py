"""The IQM's seed bootstrap: within every (model, dataset) cell the seeds are resampled with
replacement, independently, keeping each cell's seed count ("how sure are we on exactly
these datasets"; :func:`.ranking.iqm_ranking` with ``resampling="seed"``).

The general way (:func:`stratified_bootstrap_iqm`) redraws every run of every replicate (one
index array per chunk of replicates). The fast path (:func:`stratified_bootstrap_iqm_equal`):
when every cell has the same small number of seeds S (S^S ≤ ``SEQUENCE_LIMIT``, i.e.
S ≤ 7), a replicate is drawn as one integer per cell: a uniform draw among the S^S
equally likely sequences of S draws, mapped to its count pattern (how often each run is
drawn), an exact multinomial draw. Sorting each model's runs once, a replicate's IQM is
a weighted trimmed mean over the sorted runs with those counts; only runs near the two
cut points need their own counts (the windows), the rest enter through per-cell sums
looked up by pattern. A replicate whose cut points fall outside the windows (checked,
about 1e-9 per model) is recomputed over all runs. The two ways draw different random
streams from the same distribution.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ...progress import Progress

_CHUNK_ELEMENTS = 2_000_000  # resampled runs held per chunk of replicates
SEQUENCE_LIMIT = 1_000_000  # S**S draw sequences of a cell: up to 7 seeds per cell
_TABLE_ELEMENTS = 250_000  # cells × patterns × 3 looked up per block (stays in cache)
_GUARD_SDS = 6.0  # window half-width, in standard deviations of the cut point's position


def iqm_unordered(values: np.ndarray) -> np.ndarray:
    """IQM along the last axis by partial ordering: the same value as :func:`iqm` up to
    round-off, in O(n) instead of a full sort (used for the many bootstrap replicates)."""
    n = values.shape[-1]
    cut = int(0.25 * n)
    if cut == 0:
        return values.mean(axis=-1)
    middle = np.partition(values, [cut, n - cut - 1], axis=-1)[..., cut:n - cut]
    return middle.mean(axis=-1)


def cell_layout(cells: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For rows grouped by cell (equal labels adjacent): each row's cell start and size."""
    cells = np.asarray(cells)
    if cells.size == 0:
        raise ValueError("no rows")
    change = np.flatnonzero(cells[1:] != cells[:-1]) + 1
    starts = np.concatenate([[0], change])
    sizes = np.diff(np.concatenate([starts, [cells.size]]))
    return np.repeat(starts, sizes), np.repeat(sizes, sizes)


def stratified_bootstrap_iqm(
    values: np.ndarray,
    cells: np.ndarray,
    groups: np.ndarray,
    n_bootstrap: int,
    rng: np.random.Generator,
    progress: Progress | None = None,
) -> np.ndarray:
    """IQM of every group on ``n_bootstrap`` stratified resamples; shape (n_bootstrap, G).

    ``values`` are per-run scores sorted so that each cell (stratum) and each group
    (model) is contiguous, cells nested in groups; ``cells``/``groups`` label the rows.
    A resample redraws every cell's rows with replacement from that cell.
    """
    values = np.asarray(values, dtype=float)
    start, size = cell_layout(cells)
    group_start, group_size = cell_layout(groups)
    bounds = np.unique(np.stack([group_start, group_start + group_size]), axis=1).T
    chunk = max(1, _CHUNK_ELEMENTS // values.size)
    out = np.empty((n_bootstrap, len(bounds)))
    widths = bounds[:, 1] - bounds[:, 0]
    equal = bool(np.all(widths == widths[0]))
    for first in range(0, n_bootstrap, chunk):
        b = min(chunk, n_bootstrap - first)
        idx = start + (rng.random((b, values.size)) * size).astype(np.int64)
        sample = values[idx]
        if equal:  # every model has as many runs: one call over a (b, G, runs) block
            out[first:first + b] = iqm_unordered(sample.reshape(b, len(bounds), widths[0]))
        else:
            for g, (lo, hi) in enumerate(bounds):
                out[first:first + b, g] = iqm_unordered(sample[:, lo:hi])
        if progress is not None:
            progress.update(b)
    return out


@lru_cache(maxsize=8)
def resampling_patterns(n_seeds: int) -> tuple[np.ndarray, np.ndarray]:
    """Count patterns of S draws with replacement among S runs, and each sequence's pattern.

    ``counts`` (P, S): how often each run is drawn under pattern p; ``pattern`` (S**S,):
    the pattern of each of the S**S equally likely draw sequences (read as base-S
    digits). A uniform integer below S**S mapped through ``pattern`` is an exact draw of
    a cell's multinomial(S; 1/S, …, 1/S) counts. Pattern ids are ``intp``, numpy's index
    type (int32 on wasm32), so that they index tables without a conversion.
    """
    s = int(n_seeds)
    if not 1 <= s**s <= SEQUENCE_LIMIT:
        raise ValueError(f"{s} seeds per cell give {s**s} draw sequences, more than "
                         f"{SEQUENCE_LIMIT}")
    digits = (np.arange(s**s, dtype=np.int64)[:, None] // s ** np.arange(s)) % s
    per_sequence = (digits[:, :, None] == np.arange(s)).sum(axis=1)
    counts, pattern = np.unique(per_sequence, axis=0, return_inverse=True)
    return counts.astype(np.int64), pattern.reshape(-1).astype(np.intp)


def draw_patterns(rng: np.random.Generator, n_bootstrap: int, n_cells: int,
                  n_seeds: int) -> np.ndarray:
    """(n_bootstrap, n_cells) pattern ids of :func:`resampling_patterns`: one draw per cell."""
    _, pattern = resampling_patterns(n_seeds)
    dtype = np.uint16 if pattern.size <= 2**16 else np.uint32
    return pattern[rng.integers(0, pattern.size, size=(n_bootstrap, n_cells), dtype=dtype)]


def _weights(end: np.ndarray, start: np.ndarray, origin: np.ndarray, low: int,
             high: int) -> np.ndarray:
    """Each run's weight in a trimmed sum: its part of the sorted positions [low, high).

    ``end`` (R, W) counts, per row, the drawn runs up to each run (a running sum that
    restarts at the columns ``start``, where it continues from ``origin`` (R, len(start))).
    A run's drawn positions are [previous end, end); their length inside [low, high) is
    the step of the clipped running sum.
    """
    clipped = np.clip(end, low, high)
    weight = np.empty_like(clipped)
    np.subtract(clipped[:, 1:], clipped[:, :-1], out=weight[:, 1:])
    weight[:, start] = clipped[:, start] - np.clip(origin, low, high)
    return weight


def _windows(rank: np.ndarray, cut: int) -> np.ndarray:
    """Per model, sorted positions (a, b, c, d) bounding the windows [a, b) and [c, d).

    ``rank`` (M, D, S) holds each run's position in its model's sorted runs. The number
    of drawn runs among the first k sorted ones has variance Σ_cells r (1 − r/S) (r: the
    cell's runs among them); each window spans ``_GUARD_SDS`` deviations around a cut.
    """
    m, d, s = rank.shape
    n = d * s
    bounds = []
    for k in (cut, n - cut):
        r = (rank < k).sum(axis=2)
        half = np.ceil(_GUARD_SDS * np.sqrt((r * (1.0 - r / s)).sum(axis=1))).astype(np.int64) + 1
        bounds.append((np.clip(k - half, 0, n), np.clip(k + half, 0, n)))
    (a, b), (c, d_) = bounds
    c = np.maximum(c, b)
    return np.stack([a, b, c, np.maximum(d_, c)], axis=1)


def iqm_from_patterns(cube: np.ndarray, patterns: np.ndarray) -> np.ndarray:
    """IQM of every model on every replicate given per-cell count patterns; (B, M).

    ``cube`` (M, D, S) holds the runs of each (model, dataset) cell, ``patterns``
    (B, M·D) a pattern id of :func:`resampling_patterns` per replicate and cell, cells
    in model-major order. Exact: equal to ``trim_mean(np.repeat(runs, counts), 0.25)``
    up to round-off.
    """
    m, d, s = cube.shape
    n = d * s
    cut = int(0.25 * n)
    counts, _ = resampling_patterns(s)
    b_count = patterns.shape[0]
    values = cube.reshape(m, n)
    order = np.argsort(values, axis=1, kind="stable")
    rank = np.empty_like(order)
    np.put_along_axis(rank, order, np.arange(n)[None, :], axis=1)
    rank = rank.reshape(m, d, s)
    edges = _windows(rank, cut)
    lo, w1, w2, hi = (edges[:, i, None, None] for i in range(4))
    below = rank < lo
    middle = (rank >= w1) & (rank < w2)
    # Per cell and pattern: the drawn runs below the first window and in the middle, packed
    # into one float as below + (n + 1) · middle (integers: a model's sums stay exact far
    # beyond any feasible n), and their sum; each table is read once per replicate and cell.
    index = patterns + np.arange(m * d, dtype=np.intp) * counts.shape[0]
    per_pattern = counts.T.astype(float)  # float matmuls: int64 ones are slow on wasm32
    packed, trimmed = (
        (table.reshape(-1, s) @ per_pattern).ravel()[index].reshape(b_count, m, d).sum(axis=2)
        for table in (below + (n + 1.0) * middle, np.where(middle, cube, 0.0)))
    middle_count, below_count = np.divmod(packed.astype(np.int64), n + 1)
    in_window = np.stack([(rank >= lo) & (rank < w1), (rank >= w2) & (rank < hi)])
    (at_w1, at_w2, at_hi), (trim_1, trim_2) = _window_sums(cube, rank, patterns, in_window,
                                                           below_count, middle_count, cut)
    trimmed = trimmed + trim_1 + trim_2
    has_middle = (edges[:, 2] > edges[:, 1])[None, :]
    ok = ((below_count <= cut) & (((at_w1 >= cut) & (at_w2 <= n - cut)) | ~has_middle)
          & (at_hi >= n - cut))
    if not ok.all():  # a cut point outside its window: this (replicate, model) over all runs
        rep, mod = np.nonzero(~ok)
        drawn = counts[patterns.reshape(b_count, m, d)[rep, mod]].reshape(rep.size, n)
        trimmed[rep, mod] = _trimmed_sums(values[mod], order[mod], drawn, cut)
    return trimmed / (n - 2 * cut)


def _window_sums(cube: np.ndarray, rank: np.ndarray, patterns: np.ndarray,
                 in_window: np.ndarray, below_count: np.ndarray, middle_count: np.ndarray,
                 cut: int) -> tuple[tuple[np.ndarray, ...], tuple[np.ndarray, np.ndarray]]:
    """Drawn runs up to each window's edges, and each window's part of the trimmed sum.

    ``in_window`` (2, M, D, S) marks each model's runs in its first and second window;
    ``below_count`` (B, M) counts the drawn runs sorted before the first window,
    ``middle_count`` those between the windows. Returns the drawn runs up to the end of
    the first window, the start and the end of the second ((B, M) each) and the two
    windows' parts of the trimmed sum. Both windows are read in one pass: every run is a
    position in a (window, model) segment sorted by rank.
    """
    m, d, s = cube.shape
    n = d * s
    counts, _ = resampling_patterns(s)
    window, model, cell, seed = np.nonzero(in_window)
    by_rank = np.lexsort((rank[model, cell, seed], model, window))
    window, model, cell, seed = window[by_rank], model[by_rank], cell[by_rank], seed[by_rank]
    per_seed = counts.T.ravel()  # counts[p, seed] at seed · P + p
    drawn = per_seed[patterns[:, model * d + cell] + seed * counts.shape[0]]
    _, start, length = np.unique(window * m + model, return_index=True, return_counts=True)
    first, owner = window[start] == 0, model[start]
    totals = np.add.reduceat(drawn, start, axis=1)
    in_first, in_second = np.zeros((2, *below_count.shape), dtype=totals.dtype)
    in_first[:, owner[first]] = totals[:, first]
    in_second[:, owner[~first]] = totals[:, ~first]
    at_w1 = below_count + in_first
    at_w2 = at_w1 + middle_count
    origin = np.where(first, below_count[:, owner], at_w2[:, owner])  # drawn before a segment
    # One running sum over all segments: each segment's first run also carries the jump
    # from the previous segment's end to its own origin.
    previous_end = np.zeros_like(origin)
    previous_end[:, 1:] = (origin + totals)[:, :-1]
    drawn[:, start] += origin - previous_end
    weight = _weights(np.cumsum(drawn, axis=1), start, origin, cut, n - cut)
    values = cube[model, cell, seed]
    of_model = np.zeros((model.size, m))
    of_model[np.arange(model.size), model] = 1.0
    split = int(np.count_nonzero(window == 0))
    parts = tuple((weight[:, part] * values[part]) @ of_model[part]
                  for part in (slice(None, split), slice(split, None)))
    return (at_w1, at_w2, at_w2 + in_second), parts


def _trimmed_sums(values: np.ndarray, order: np.ndarray, drawn: np.ndarray,
                  cut: int) -> np.ndarray:
    """Trimmed sum of each row of ``values`` with runs drawn ``drawn`` times, over all runs."""
    n = values.shape[1]
    end = np.cumsum(np.take_along_axis(drawn, order, axis=1), axis=1)
    weight = _weights(end, np.zeros(1, dtype=np.intp), np.zeros((len(end), 1), dtype=end.dtype),
                      cut, n - cut)
    return (weight * np.take_along_axis(values, order, axis=1)).sum(axis=1)


def stratified_bootstrap_iqm_equal(cube: np.ndarray, n_bootstrap: int, rng: np.random.Generator,
                                   progress: Progress | None = None) -> np.ndarray:
    """Stratified-bootstrap IQM of every model for equal cells (M, D, S); shape (B, M).

    Draws one pattern per cell and replicate (model by model, so the stream does not
    depend on the blocking) and evaluates blocks of models with :func:`iqm_from_patterns`.
    """
    m, d, s = cube.shape
    n_patterns = resampling_patterns(s)[0].shape[0]
    per_block = max(1, min(_TABLE_ELEMENTS // (3 * d * n_patterns),
                           _CHUNK_ELEMENTS // (3 * d * n_bootstrap)))
    out = np.empty((n_bootstrap, m))
    for first in range(0, m, per_block):
        block = slice(first, min(first + per_block, m))
        patterns = np.concatenate([draw_patterns(rng, n_bootstrap, d, s)
                                   for _ in range(block.stop - block.start)], axis=1)
        out[:, block] = iqm_from_patterns(cube[block], patterns)
        if progress is not None:
            progress.update(block.stop - block.start)
    return out
