"""The IQM's dataset bootstrap: whole datasets drawn with replacement, every drawn dataset
with all its seeds (a dataset drawn c times counts c times), the same draws for every model
("how sure are we on datasets like these"; :func:`.ranking.iqm_ranking`'s default).

A replicate's IQM is a trimmed mean over each model's runs sorted once, each run repeated
as often as its dataset was drawn. Two exact ways to it (:func:`dataset_bootstrap_iqm`
chooses by the shape, :func:`cut_block_size`): a running drawn count over every run, or
only the runs at the two cut points, found block by block (docs/rankings.md).
"""

from __future__ import annotations

import numpy as np

from ...progress import Progress

_CHUNK_ELEMENTS = 2_000_000  # running counts (or gathered block runs) held per chunk


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
    model = np.arange(m)
    row = block + model * (k1 - 1)  # (B, M) rows of codes / v_blocks
    flat = np.take(codes, row, axis=0)  # (B, M, size)
    flat += (np.arange(b, dtype=flat.dtype) * weight.shape[1])[:, None, None]
    run_weight = np.take(weight, flat)
    running = np.cumsum(run_weight, axis=2)
    running += start[..., None]
    inside = running < threshold[..., None]
    run_weight *= inside
    w_at = start + run_weight.sum(axis=2)
    sums = np.take(sum_before, block + model * k1, axis=0)  # (B, M, D)
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
