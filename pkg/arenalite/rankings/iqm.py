"""IQM ranking with bootstrap intervals (Agarwal et al. 2021, rliable).

Per model, all per-seed normalized scores are pooled over datasets; the IQM is the
mean of the middle 50 % (``trim_mean(pooled, 0.25)``). The percentile interval (at
``confidence``, 95 % by default) comes from one of two bootstraps, which answer two
questions:

- ``"dataset"`` (default): whole datasets drawn with replacement, every drawn dataset
  with all its seeds (a dataset drawn c times counts c times), the same draws for
  every model — "how sure are we on datasets like these". It is rliable's task
  bootstrap without its second stage (redrawing the runs inside each drawn task, which
  counts the seed noise a second time); on single-seed data the two are the same, and
  it needs no seeds at all. A replicate's IQM is a weighted trimmed mean over each
  model's runs sorted once (weights = the draw counts of their datasets), for all
  replicates of a chunk at once. ``bench/bench_coverage.py`` measures its coverage.
- ``"seed"``: the stratified bootstrap — within every (model, dataset) cell the seeds
  are resampled with replacement, independently, keeping each cell's seed count (cells
  with different seed counts are fine) — "how sure are we on exactly these datasets";
  it needs several seeds per cell and under-covers the population IQM when datasets
  differ.

The seed scheme's fast path:
when every cell has the same small number of seeds S (S^S ≤ ``SEQUENCE_LIMIT``, i.e.
S ≤ 7), a replicate is drawn as one integer per cell: a uniform draw among the S^S
equally likely sequences of S draws, mapped to its count pattern (how often each run is
drawn), an exact multinomial draw. Sorting each model's runs once, a replicate's IQM is
a weighted trimmed mean over the sorted runs with those counts; only runs near the two
cut points need their own counts (the windows), the rest enter through per-cell sums
looked up by pattern. A replicate whose cut points fall outside the windows (checked,
about 1e-9 per model) is recomputed over all runs. Otherwise each replicate redraws every
run (one index array per chunk of replicates). The two paths draw different random
streams from the same distribution.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..params import check_confidence, check_n_bootstrap, make_rng
from ..progress import Progress
from ..results import Result
from ..stats.bootstrap import interval_level, percentile_interval, unit_counts
from .aggregate import ranking_table, trim_mean

if TYPE_CHECKING:
    from ..benchmark import Benchmark

_CHUNK_ELEMENTS = 2_000_000
SEQUENCE_LIMIT = 1_000_000  # S**S draw sequences of a cell: up to 7 seeds per cell
_TABLE_ELEMENTS = 250_000  # cells × patterns × 3 looked up per block (stays in cache)
_GUARD_SDS = 6.0  # window half-width, in standard deviations of the cut point's position


def iqm(values: np.ndarray, axis: int = -1) -> np.ndarray:
    """Interquartile mean: ``scipy.stats.trim_mean(values, 0.25)``."""
    return trim_mean(values, 0.25, axis=axis)


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


def _text_codes(column: pd.Series) -> np.ndarray:
    """Codes of a column's values in the sorted order of their text (``astype(str)``).

    An integer column is factorized as numbers and only its distinct values are written
    as text (equal numbers have equal text, so the codes are the same).
    """
    if pd.api.types.is_integer_dtype(column.dtype):
        codes, uniques = pd.factorize(column)
        return pd.factorize(pd.Series(uniques).astype(str), sort=True)[0][codes]
    return pd.factorize(column.astype(str), sort=True)[0]


RESAMPLING = ("dataset", "seed")


def dataset_bootstrap_iqm(values: np.ndarray, datasets: np.ndarray, counts: np.ndarray,
                          progress: Progress | None = None, block: int | None = None
                          ) -> np.ndarray:
    """IQM of every model on every replicate of a dataset bootstrap; shape (B, M).

    ``values`` (M, n) holds each model's runs sorted ascending and ``datasets`` (M, n)
    their dataset codes; a code equal to ``counts.shape[1]`` marks padding (a run that
    weighs nothing, for models with fewer runs). ``counts`` (B, D): how often each
    dataset is drawn. With N the replicate's weighted run count, the IQM cuts
    ⌊N / 4⌋ from each end (``scipy.stats.trim_mean(…, 0.25)``) of the runs repeated as
    drawn. Exact, and vectorized over replicates and models.

    Two ways to the same numbers (up to round-off): a running drawn count over every run
    (:func:`_iqm_all_runs`), or only the runs at the two cut points, found block by block
    (:func:`_iqm_cut_blocks`). ``block``: runs per block, 0 for every run, None to let
    :func:`cut_block_size` choose by the shape.
    """
    b_total, d = counts.shape
    m, n = values.shape
    if counts.dtype.kind not in "iu":
        raise TypeError(f"dataset draw counts must be integers, got dtype {counts.dtype}")
    size = cut_block_size(n, d) if block is None else int(block)
    if size == 0:
        return _iqm_all_runs(values, datasets, counts, progress)
    return _iqm_cut_blocks(values, datasets, counts, min(size, n), progress)


def cut_block_size(n_runs: int, n_datasets: int) -> int:
    """Runs per block of :func:`_iqm_cut_blocks` for models of ``n_runs`` runs on
    ``n_datasets`` datasets, or 0 where the running count over every run costs less.

    Per replicate and model, in the units of one multiply-add of a matrix product
    (measured on wasm32 at B = 1000, CPython agrees on the choice): the running count
    costs about 43 a run; the block search about 4,800, plus 120 a run of the two blocks
    it reads, one product over the datasets at each of the n / size + 1 block boundaries
    and 60 a dataset for the sums at the two cuts. The size of least cost is a power of
    two from 8.
    """
    best, best_cost = 0, 43 * n_runs
    size = 8
    while size < n_runs:
        cost = 4800 + 120 * size + n_datasets * (-(-n_runs // size) + 1 + 60)
        if cost < best_cost:
            best, best_cost = size, cost
        size *= 2
    return best


def _iqm_all_runs(values: np.ndarray, datasets: np.ndarray, counts: np.ndarray,
                  progress: Progress | None) -> np.ndarray:
    """:func:`dataset_bootstrap_iqm` by a running drawn count over every sorted run: each
    run's copies inside the sorted positions [cut, N − cut) weigh its value."""
    b_total, d = counts.shape
    m, n = values.shape
    # integer counts: the running sums and their clipping are exact in integers and several
    # times faster than in float64 (an integer add has no latency chain); int32 while a
    # model's total (at most its n runs times the largest count) fits, else int64. The
    # clipped counts are then cast, so the weighted sum is the float64 one of before.
    largest = int(counts.max(initial=0)) * n
    kind = np.int32 if largest < 2**31 else np.int64
    padded = np.concatenate([counts, np.zeros((b_total, 1), dtype=counts.dtype)],
                            axis=1).astype(kind)
    flat = datasets.ravel()
    # summation by parts: Σ_j (C_j − C_{j−1}) v_j = Σ_j C_j (v_j − v_{j+1}) − C_{−1} v_0, with
    # C_j the clipped running count, C_{−1} = cut and v_n = 0 (one pass over the running counts)
    step = values - np.concatenate([values[:, 1:], np.zeros((m, 1))], axis=1)
    out = np.empty((b_total, m))
    chunk = max(1, _CHUNK_ELEMENTS // max(1, m * n))
    clipped = np.empty((min(chunk, b_total), m, n))
    for first in range(0, b_total, chunk):
        block = padded[first:first + chunk]
        running = np.take(block, flat, axis=1).reshape(len(block), m, n)
        np.cumsum(running, axis=2, out=running)
        total = running[..., -1:].copy()
        cut = total // 4
        np.clip(running, cut, total - cut, out=running)
        weights = clipped[:len(block)]
        weights[...] = running
        trimmed = np.einsum("bmn,mn->bm", weights, step) - cut[..., 0] * values[:, 0]
        out[first:first + chunk] = trimmed / (total - 2 * cut)[..., 0]
        if progress is not None:
            progress.update(len(block))
    return out


def _iqm_cut_blocks(values: np.ndarray, datasets: np.ndarray, counts: np.ndarray,
                    size: int, progress: Progress | None) -> np.ndarray:
    """:func:`dataset_bootstrap_iqm` from the runs at the two cut points alone.

    With W(J) and S(J) the drawn count and the drawn sum of a model's first J sorted runs,
    J1 the runs wholly below the lower cut and J2 the runs not past the upper one, the
    trimmed sum is ``S(J2) − S(J1) + (W(J1) − cut) v[J1] + (N − cut − W(J2)) v[J2]``: the
    runs between, the two runs at the cuts counted only for their copies inside. The runs
    are cut into blocks of ``size``; W at every block boundary is one matrix product of
    the draw counts with per-block dataset tables, which finds each cut's block; only that
    block is read run by run.
    """
    b_total, d = counts.shape
    m, n = values.shape
    n_blocks = -(-n // size)
    width = n_blocks * size
    # runs padded to whole blocks (value 0, the weightless code d), plus v[width] = 0
    v = np.zeros((m, width + 1))
    v[:, :n] = values
    codes = np.full((m, width), d, dtype=np.intp)
    codes[:, :n] = datasets
    # per model, block and dataset: its runs and their sum, before each block (prefix)
    slot = (np.arange(m * n_blocks, dtype=np.intp).repeat(size) * (d + 1)
            + codes.ravel())
    in_block = [np.bincount(slot, weights=w, minlength=m * n_blocks * (d + 1))
                .reshape(m, n_blocks, d + 1)[..., :d] for w in (None, v[:, :width].ravel())]
    before = [np.concatenate([np.zeros((m, 1, d)), np.cumsum(t, axis=1)], axis=1)
              for t in in_block]  # (M, K + 1, D) each
    del in_block  # the tables are M·K·D floats: hold one copy of each
    runs_before = before[0].reshape(-1, d).T  # (D, M·(K + 1))
    sum_before = before[1].reshape(-1, d)  # (M·(K + 1), D)
    codes = codes.reshape(m * n_blocks, size)
    v_blocks = v[:, :width].reshape(m * n_blocks, size)
    model = np.arange(m)[None, :]
    out = np.empty((b_total, m))
    chunk = max(1, _CHUNK_ELEMENTS // max(1, m * max(size, d)))
    for first in range(0, b_total, chunk):
        drawn = counts[first:first + chunk]
        weight = np.concatenate([drawn, np.zeros((len(drawn), 1), dtype=drawn.dtype)],
                                axis=1).astype(float)
        w_before = (weight[:, :d] @ runs_before).reshape(len(drawn), m, n_blocks + 1)
        total = w_before[..., -1]
        cut = np.floor(total / 4.0)
        (w1, s1, at1), (w2, s2, at2) = (
            _cut_point(w_before, sum_before, weight, codes, v_blocks, threshold)
            for threshold in (cut, total - cut + 1.0))
        trimmed = s2 - s1 + (w1 - cut) * v[model, at1] + (total - cut - w2) * v[model, at2]
        out[first:first + chunk] = trimmed / (total - 2.0 * cut)
        if progress is not None:
            progress.update(len(drawn))
    return out


def _cut_point(w_before: np.ndarray, sum_before: np.ndarray, weight: np.ndarray,
               codes: np.ndarray, v_blocks: np.ndarray, threshold: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(W(J), S(J), J) per replicate and model for J the number of leading sorted runs
    whose running drawn count stays below ``threshold`` (B, M); see
    :func:`_iqm_cut_blocks`. ``w_before`` (B, M, K + 1): drawn runs before each block
    boundary; ``sum_before`` (M·(K + 1), D): each model's per-dataset sums before each
    boundary; ``weight`` (B, D + 1): the draw counts, padding last; ``codes`` and
    ``v_blocks`` (M·K, size): each block's dataset codes and values."""
    b, m, k1 = w_before.shape
    size = codes.shape[1]
    block = np.minimum((w_before[..., 1:] < threshold[..., None]).sum(axis=2), k1 - 2)
    at_block = block[..., None]
    start = np.take_along_axis(w_before, at_block, axis=2)[..., 0]
    row = block + np.arange(m) * (k1 - 1)  # (B, M) rows of codes / v_blocks
    flat = np.take(codes, row, axis=0)  # (B, M, size)
    flat += (np.arange(b, dtype=flat.dtype) * weight.shape[1])[:, None, None]
    run_weight = np.take(weight, flat)
    running = np.cumsum(run_weight, axis=2)
    running += start[..., None]
    inside = running < threshold[..., None]
    run_weight *= inside
    w_at = start + run_weight.sum(axis=2)
    sums = np.take(sum_before, block + np.arange(m) * k1, axis=0)  # (B, M, D)
    s_at = (np.einsum("bmd,bd->bm", sums, weight[:, :-1])
            + np.einsum("bms,bms->bm", run_weight, np.take(v_blocks, row, axis=0)))
    return w_at, s_at, block * size + inside.sum(axis=2)


def sorted_runs(values: np.ndarray, models: np.ndarray, datasets: np.ndarray,
                n_models: int, n_datasets: int) -> tuple[np.ndarray, np.ndarray]:
    """Per model its runs sorted ascending, with their dataset codes, as (M, n_max) arrays
    padded with value 0 and code ``n_datasets`` (the weightless padding of
    :func:`dataset_bootstrap_iqm`)."""
    order = np.lexsort((values, models))
    values, models, datasets = values[order], models[order], datasets[order]
    sizes = np.bincount(models, minlength=n_models)
    position = np.arange(models.size) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    grid = np.zeros((n_models, int(sizes.max())))
    codes = np.full((n_models, int(sizes.max())), n_datasets, dtype=np.intp)
    grid[models, position] = values
    codes[models, position] = datasets
    return grid, codes


class IQMResult(Result):
    """IQM ranking: ``.table`` has columns ``model, IQM, CI_low, CI_high`` (descending)."""

    method = "iqm"

    def plot(self, ax: Any = None, figsize: tuple[float, float] | None = None,
             title: str | None = None,
             model_colors: Sequence[str] | dict[str, str] | None = None) -> Any:
        """One point per model with its interval as whiskers, best model on top."""
        from ..plots.intervals import interval_plot

        scheme = self.params.get("resampling", "seed")
        level = interval_level(self.params.get("confidence", 0.95))
        return interval_plot(self.table, "IQM", low="CI_low", high="CI_high", ax=ax,
                             figsize=figsize,
                             title=title or f"IQM with {level} {scheme}-bootstrap intervals",
                             xlabel="IQM of normalized scores (1 = best)",
                             model_colors=model_colors)


def iqm_ranking(benchmark: Benchmark, n_bootstrap: int = 1000,
                random_state: Any = None, resampling: str = "dataset",
                confidence: float = 0.95) -> IQMResult:
    """Rank models by IQM of pooled per-seed normalized scores, with bootstrap intervals.

    The default dataset bootstrap works on single-seed data too; ``resampling="seed"``
    (the stratified bootstrap) needs a seed column (``load_df(..., seed=...)``) with
    several seeds per dataset.

    Parameters
    ----------
    n_bootstrap : int
        Bootstrap replicates for the percentile interval; at least 1.
    random_state : None, int or numpy Generator
        Seed of the bootstrap; None draws a fresh one.
    resampling : str
        "dataset" (default): whole datasets drawn with replacement, all their seeds
        together — datasets like these; "seed": seeds resampled within each model and
        dataset (stratified) — exactly these datasets. See the module doc.
    confidence : float
        Level of the percentile interval, strictly between 0 and 1 (default 0.95).

    Returns
    -------
    IQMResult
        ``.table``: model, IQM, CI_low, CI_high (best first); ``.plot()``.
    """
    n_bootstrap = check_n_bootstrap(n_bootstrap)
    confidence = check_confidence(confidence)
    if not isinstance(resampling, str) or resampling not in RESAMPLING:
        raise ValueError(f"resampling must be one of {RESAMPLING!r}, got {resampling!r}")
    rng = make_rng(random_state)
    long = benchmark.long_
    if resampling == "dataset":
        return _dataset_iqm(benchmark, n_bootstrap, rng, random_state, confidence)
    if not benchmark.has_seeds:
        raise ValueError("iqm_ranking(resampling='seed') needs multiple seeds per dataset: "
                         "load with seed=<column>; for single-run data use the default "
                         "resampling='dataset' or aggregate_ranking() instead")
    # Rows by (model, dataset, seed as text): deterministic, whatever the row order; sorted
    # integer codes of each key (hashing) instead of a three-column string sort.
    model, names = pd.factorize(long["model"], sort=True)
    dataset = pd.factorize(long["dataset"], sort=True)[0]
    cell = model * (dataset.max() + 1) + dataset  # every model has every dataset (load)
    counts = np.bincount(cell)
    if counts.max() < 2:
        raise ValueError("iqm_ranking(resampling='seed') needs multiple seeds per dataset, but "
                         "every (model, dataset) cell has a single seed; use the default "
                         "resampling='dataset' or aggregate_ranking() instead")
    order = np.lexsort((_text_codes(long["seed"]), cell))
    values = long["norm"].to_numpy(dtype=float)[order]
    models = model[order]
    names = np.asarray(names, dtype=object)
    n_seeds = int(counts.max())
    equal = counts.min() == n_seeds and n_seeds**n_seeds <= SEQUENCE_LIMIT
    enabled = None if n_bootstrap * values.size > 20_000_000 else False
    if equal:  # every model has every dataset (load checks it), each with n_seeds runs
        cube = values.reshape(names.size, -1, n_seeds)
        point = iqm(cube.reshape(names.size, -1))
        with Progress(names.size, "IQM bootstrap (models)", enabled=enabled) as progress:
            boot = stratified_bootstrap_iqm_equal(cube, n_bootstrap, rng, progress)
    else:
        first = np.cumsum(np.bincount(models))[:-1]
        point = np.array([iqm(run) for run in np.split(values, first)])
        with Progress(n_bootstrap, "IQM bootstrap", enabled=enabled) as progress:
            boot = stratified_bootstrap_iqm(values, cell[order], models, n_bootstrap, rng,
                                            progress)
    low, high = percentile_interval(boot, confidence)
    table = ranking_table(names, point, "IQM", {"CI_low": low, "CI_high": high})
    return IQMResult(table, n_bootstrap=n_bootstrap, random_state=random_state,
                     confidence=confidence, resampling="seed")


def _dataset_iqm(benchmark: Benchmark, n_bootstrap: int, rng: np.random.Generator,
                 random_state: Any, confidence: float) -> IQMResult:
    """The dataset bootstrap of :func:`iqm_ranking` (module doc)."""
    long = benchmark.long_
    model, names = pd.factorize(long["model"], sort=True)
    dataset, datasets = pd.factorize(long["dataset"], sort=True)
    values = long["norm"].to_numpy(dtype=float)
    grid, codes = sorted_runs(values, model, dataset, len(names), len(datasets))
    point = dataset_bootstrap_iqm(grid, codes, np.ones((1, len(datasets)), dtype=np.int64))[0]
    counts = unit_counts(len(datasets), n_bootstrap, rng)
    enabled = None if n_bootstrap * values.size > 20_000_000 else False
    with Progress(n_bootstrap, "IQM bootstrap", enabled=enabled) as progress:
        boot = dataset_bootstrap_iqm(grid, codes, counts, progress)
    low, high = percentile_interval(boot, confidence)
    table = ranking_table(np.asarray(names, dtype=object), point, "IQM",
                          {"CI_low": low, "CI_high": high})
    return IQMResult(table, n_bootstrap=n_bootstrap, random_state=random_state,
                     confidence=confidence, resampling="dataset")
