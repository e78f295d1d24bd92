"""IQM ranking with stratified-bootstrap intervals (Agarwal et al. 2021, rliable).

Per model, all per-seed normalized scores are pooled over datasets; the IQM is the
mean of the middle 50 % (``trim_mean(pooled, 0.25)``). The 95 % percentile interval
comes from a stratified bootstrap: within every (model, dataset) cell the seeds are
resampled with replacement, independently, keeping each cell's seed count, so cells
with different seed counts are fine. Replicates are drawn as one index array per
chunk of replicates (no loop over replicates).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ..params import check_n_bootstrap, make_rng
from ..progress import Progress
from ..results import Result
from .aggregate import ranking_table, trim_mean

if TYPE_CHECKING:
    from ..benchmark import Benchmark

_CHUNK_ELEMENTS = 2_000_000


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


class IQMResult(Result):
    """IQM ranking: ``.table`` has columns ``model, IQM, CI_low, CI_high`` (descending)."""

    method = "iqm"

    def plot(self, ax: Any = None, figsize: tuple[float, float] | None = None,
             title: str | None = None,
             model_colors: Sequence[str] | dict[str, str] | None = None) -> Any:
        """Horizontal bars with 95 % interval whiskers, best model on top."""
        from ..plots.bars import ranking_bars

        return ranking_bars(self.table, "IQM", ci=("CI_low", "CI_high"), ax=ax, figsize=figsize,
                            title=title or "IQM with 95 % stratified-bootstrap intervals",
                            xlabel="IQM of normalized scores (1 = best)",
                            model_colors=model_colors)


def iqm_ranking(benchmark: Benchmark, n_bootstrap: int = 1000,
                random_state: Any = None) -> IQMResult:
    """Rank models by IQM of pooled per-seed normalized scores, with 95 % bootstrap CIs."""
    n_bootstrap = check_n_bootstrap(n_bootstrap)
    rng = make_rng(random_state)
    long = benchmark.long_
    if not benchmark.has_seeds:
        raise ValueError("iqm_ranking() needs multiple seeds per dataset: load with "
                         "seed=<column>; for single-run data use aggregate_ranking() instead")
    counts = long.groupby(["model", "dataset"]).size()
    if counts.max() < 2:
        raise ValueError("iqm_ranking() needs multiple seeds per dataset, but every (model, "
                         "dataset) cell has a single seed; use aggregate_ranking() instead")
    order = long.assign(_seed=long["seed"].astype(str))  # deterministic, whatever the row order
    runs = order.sort_values(["model", "dataset", "_seed"], kind="stable")
    models = runs["model"].to_numpy()
    cells = (runs["model"] + "\x00" + runs["dataset"]).to_numpy()
    values = runs["norm"].to_numpy(dtype=float)
    first = np.flatnonzero(np.r_[True, models[1:] != models[:-1]])
    names = models[first]
    point = np.array([iqm(run) for run in np.split(values, first[1:])])
    enabled = None if n_bootstrap * values.size > 20_000_000 else False
    with Progress(n_bootstrap, "IQM bootstrap", enabled=enabled) as progress:
        boot = stratified_bootstrap_iqm(values, cells, models, n_bootstrap, rng, progress)
    low, high = np.percentile(boot, [2.5, 97.5], axis=0)
    table = ranking_table(names, point, "IQM", {"CI_low": low, "CI_high": high})
    return IQMResult(table, n_bootstrap=n_bootstrap, random_state=random_state)
