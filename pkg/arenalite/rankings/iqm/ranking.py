"""IQM ranking with bootstrap intervals (Agarwal et al. 2021, rliable).

Per model, all per-seed normalized scores are pooled over datasets; the IQM is the
mean of the middle 50 % (``trim_mean(pooled, 0.25)``). The percentile interval (at
``confidence``, 95 % by default) comes from one of two bootstraps, which answer two
questions:

- ``"dataset"`` (default, :mod:`.dataset_bootstrap`): whole datasets drawn with
  replacement, every drawn dataset with all its seeds, the same draws for every model —
  "how sure are we on datasets like these". It is rliable's task bootstrap without its
  second stage (redrawing the runs inside each drawn task, which counts the seed noise a
  second time); on single-seed data the two are the same, and it needs no seeds at all.
  ``bench/bench_coverage.py`` measures its coverage.
- ``"seed"`` (:mod:`.seed_bootstrap`): the stratified bootstrap — within every (model,
  dataset) cell the seeds are resampled with replacement, independently, keeping each
  cell's seed count (cells with different seed counts are fine) — "how sure are we on
  exactly these datasets"; it needs several seeds per cell and under-covers the
  population IQM when datasets differ.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ...params import check_confidence, check_n_bootstrap, make_rng
from ...progress import Progress
from ...results import Result
from ...stats.bootstrap import interval_level, percentile_interval, unit_counts
from ..aggregate import ranking_table, trim_mean
from .dataset_bootstrap import dataset_bootstrap_iqm, sorted_runs
from .seed_bootstrap import (
    SEQUENCE_LIMIT,
    stratified_bootstrap_iqm,
    stratified_bootstrap_iqm_equal,
)

if TYPE_CHECKING:
    from ...benchmark import Benchmark

RESAMPLING = ("dataset", "seed")


def iqm(values: np.ndarray, axis: int = -1) -> np.ndarray:
    """Interquartile mean: ``scipy.stats.trim_mean(values, 0.25)``."""
    return trim_mean(values, 0.25, axis=axis)


def _text_codes(column: pd.Series) -> np.ndarray:
    """Codes of a column's values in the sorted order of their text (``astype(str)``).

    An integer column is factorized as numbers and only its distinct values are written
    as text (equal numbers have equal text, so the codes are the same).
    """
    if pd.api.types.is_integer_dtype(column.dtype):
        codes, uniques = pd.factorize(column)
        return pd.factorize(pd.Series(uniques).astype(str), sort=True)[0][codes]
    return pd.factorize(column.astype(str), sort=True)[0]


class IQMResult(Result):
    """IQM ranking: ``.table`` has columns ``model, IQM, CI_low, CI_high`` (descending)."""

    method = "iqm"

    def plot(self, ax: Any = None, figsize: tuple[float, float] | None = None,
             title: str | None = None,
             model_colors: Sequence[str] | dict[str, str] | None = None) -> Any:
        """One point per model with its interval as whiskers, best model on top."""
        from ...plots.intervals import interval_plot

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
