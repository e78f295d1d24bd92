"""The leaderboard: TabArena's one-call table of Elo, ranks, win rate, improvability and
normalized error, with TabArena's column names so that its users recognize them.

Columns, one row per model, sorted by ``elo`` (best first):

- ``elo``: the full-data Bradley-Terry MLE of :mod:`.elo` (not a bootstrap median), ties
  ½, shifted so that ``calibration_model`` sits at ``calibration_elo`` (without one the
  ratings are centred on 1000). ``elo+`` / ``elo-``: distance from the point to the
  97.5 % / 2.5 % quantiles of the bootstrap replicates (at ``confidence=0.95``), clipped
  at 0. The default
  bootstrap draws whole datasets ("how sure are we on datasets like these").
- ``rank``: per dataset, on seed-averaged scores, the rank of each model (1 = best, ties
  averaged); then the mean over datasets. ``mrr``: the mean over datasets of 1 / rank.
- ``rank=k_count`` (k = 1, 2, 3): per dataset, a model whose tied group spans positions
  [min rank, max rank] gets 1 / (tie size) for each k in that span; summed over
  datasets. ``rank>3_count`` = number of datasets − the three.
- ``winrate``: the mean over opponents of the share of battles won against that
  opponent, ties ½ (battles and their weights as in Elo: one per pair and match day, so
  every dataset weighs the same).
- ``improvability``: as :func:`.improvability.improvability_ranking`, but as the
  fraction TabArena publishes (0.25, not 25 %; the ranking method keeps percent, as
  evaluma and its golden values do); ``improvability+`` / ``improvability-`` from the
  same dataset draws as the Elo bootstrap (from its own dataset draws when
  ``resampling`` is not "dataset"), clipped at 0 like Elo's.
- ``normalized-error``: as :mod:`.normalized_error`.
- Time columns, when the results carry times (``load_df`` keeps them): per model and
  dataset the mean over seeds (folds) of ``time_train_s``, ``time_infer_s``,
  ``time_train_s_per_1K``, ``time_infer_s_per_1K`` (time × 1000 / rows, per row); the
  column is the mean of those per-dataset values over datasets, its ``median_`` form
  their median — TabArena's aggregation (fold mean per task, then mean and median over
  tasks).

The columns follow TabArena's published table in its order (``model`` for its
``method``); :meth:`LeaderboardResult.to_csv` with ``style="tabarena"`` writes its names.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from scipy.stats import rankdata

from ..params import check_confidence, check_n_bootstrap, check_number, make_rng
from ..results import Result
from ..stats.bootstrap import interval_level, percentile_interval, unit_counts
from ..tables import write_table
from .elo import ELO_BASE, check_models, check_resampling, fit
from .normalized_error import error_matrix, normalized_errors

if TYPE_CHECKING:
    from ..benchmark import Benchmark

COLUMNS = ("model", "elo", "elo+", "elo-", "rank", "winrate", "improvability",
           "improvability+", "improvability-", "mrr", "rank=1_count", "rank=2_count",
           "rank=3_count", "rank>3_count", "normalized-error")
"""The columns every leaderboard has, in order; time columns join when there are times."""
TIME_COLUMNS = ("time_train_s", "time_infer_s", "time_train_s_per_1K", "time_infer_s_per_1K")
TABARENA_ORDER = (*COLUMNS[:-1], *TIME_COLUMNS, "normalized-error",
                  *(f"median_{c}" for c in TIME_COLUMNS))
"""TabArena's leaderboard columns that we compute, in its published order (``model`` first)."""
STYLES = ("arenalite", "tabarena")


def rank_columns(scores: np.ndarray) -> dict[str, np.ndarray]:
    """``rank``, ``mrr`` and the ``rank=k_count`` columns from an M × D score matrix
    (higher is better)."""
    average = rankdata(-scores, method="average", axis=0)
    low = rankdata(-scores, method="min", axis=0)
    high = rankdata(-scores, method="max", axis=0)
    tie_size = high - low + 1
    columns = {"rank": average.mean(axis=1), "mrr": (1.0 / average).mean(axis=1)}
    for k in (1, 2, 3):
        columns[f"rank={k}_count"] = (((low <= k) & (k <= high)) / tie_size).sum(axis=1)
    columns["rank>3_count"] = scores.shape[1] - sum(columns[f"rank={k}_count"] for k in (1, 2, 3))
    return columns


def winrates(win: np.ndarray) -> np.ndarray:
    """Mean over opponents of the share won, W_ij / (W_ij + W_ji), from a win matrix (M × M)."""
    total = win + win.T
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(total > 0, win / np.where(total > 0, total, 1.0), np.nan)
    np.fill_diagonal(share, np.nan)
    return np.nanmean(share, axis=1)


def time_table(benchmark: Benchmark) -> dict[str, np.ndarray]:
    """Time columns per model (``models_`` order) as TabArena aggregates them: per dataset
    the mean over seeds, then the mean (``time_*``) and median (``median_time_*``) over
    datasets. Empty when the results carry no times."""
    present = [c for c in TIME_COLUMNS if c in benchmark.long_.columns]
    if not present:
        return {}
    per_dataset = benchmark.long_.groupby(["model", "dataset"], sort=True)[present].mean()
    models = benchmark.models_
    mean = per_dataset.groupby(level="model").mean().loc[models]
    median = per_dataset.groupby(level="model").median().loc[models]
    return {**{c: mean[c].to_numpy(dtype=float) for c in present},
            **{f"median_{c}": median[c].to_numpy(dtype=float) for c in present}}


def pareto_front(elo: np.ndarray, seconds: np.ndarray) -> np.ndarray:
    """Mask of the Pareto-optimal models: no other model is at least as fast and at least as
    highly rated, and strictly better in one of the two."""
    faster_or_equal = seconds[None, :] <= seconds[:, None]
    better_or_equal = elo[None, :] >= elo[:, None]
    strictly = (seconds[None, :] < seconds[:, None]) | (elo[None, :] > elo[:, None])
    return ~(faster_or_equal & better_or_equal & strictly).any(axis=1)


def plus_minus(point: np.ndarray, replicates: np.ndarray,
               confidence: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Distances from ``point`` up to the (1 + c)/2 and down to the (1 − c)/2 quantile of
    the replicates (97.5 % and 2.5 % at the default 95 %), clipped at 0."""
    if not len(replicates):
        return np.zeros_like(point), np.zeros_like(point)
    low, high = percentile_interval(replicates, confidence)
    return np.maximum(high - point, 0.0), np.maximum(point - low, 0.0)


class LeaderboardResult(Result):
    """TabArena's leaderboard (columns in the module doc), with the bootstrap replicates."""

    method = "leaderboard"

    def __init__(self, table: pd.DataFrame, *, bootstrap: pd.DataFrame,
                 improvability_bootstrap: pd.DataFrame, variants: pd.DataFrame | None = None,
                 **params: Any) -> None:
        super().__init__(table, **params)
        self.bootstrap = bootstrap
        self.improvability_bootstrap = improvability_bootstrap
        self.variants = variants

    def to_csv(self, path: Any, style: str = "arenalite") -> Any:
        """Write the table as CSV (no index); ``style="tabarena"`` writes TabArena's column
        names in its order (``method`` first), for every column this leaderboard has."""
        if style not in STYLES:
            raise ValueError(f"style must be one of {STYLES!r}, got {style!r}")
        table = self.table
        if style == "tabarena":
            table = table[[c for c in TABARENA_ORDER if c in table.columns]]
            table = table.rename(columns={"model": "method"})
        return write_table(table, path)

    def plot_pareto(self, ax: Any = None, figsize: tuple[float, float] | None = None,
                    title: str | None = None, time: str | None = None) -> Any:
        """Elo (interval whiskers) against inference time per 1K rows on a log axis; the
        Pareto-optimal models joined and labelled (TabArena's figure). ``time`` picks the
        column (default ``median_time_infer_s_per_1K``, else the best inference column
        there is); with runner variants each model's runners share a colour."""
        from ..plots.pareto import pareto_plot

        column = time or next((c for c in PARETO_TIMES if c in self.table.columns), None)
        if column is None or column not in self.table.columns:
            have = [c for c in self.table.columns if c.startswith(("time_", "median_time_"))]
            wanted = time or "e.g. median_time_infer_s_per_1K"
            raise ValueError(f"plot_pareto needs an inference-time column ({wanted}); this "
                             "leaderboard has "
                             f"{have or 'no time columns: the results carry no times'}")
        front = pareto_front(self.table["elo"].to_numpy(dtype=float),
                             self.table[column].to_numpy(dtype=float))
        return pareto_plot(self.table, column, front, variants=self.variants, ax=ax,
                           figsize=figsize, title=title,
                           anchor=self.params.get("calibration_model"),
                           level=interval_level(self.params.get("confidence", 0.95)))

    def plot(self, ax: Any = None, figsize: tuple[float, float] | None = None,
             title: str | None = None, model_colors: Any = None) -> Any:
        """Elo as points with interval whiskers, best on top."""
        from ..plots.intervals import interval_plot

        ends = self.table.assign(low=self.table["elo"] - self.table["elo-"],
                                 high=self.table["elo"] + self.table["elo+"])
        reference = self.params["calibration_elo"] if self.params["calibration_model"] else None
        level = interval_level(self.params.get("confidence", 0.95))
        return interval_plot(ends, "elo", low="low", high="high", ax=ax, figsize=figsize,
                             reference_line=ELO_BASE if reference is None else reference,
                             model_colors=model_colors, xlabel="Elo rating",
                             title=title or f"Leaderboard: Elo with {level} "
                                            f"{self.params['resampling']} bootstrap interval")


PARETO_TIMES = ("median_time_infer_s_per_1K", "time_infer_s_per_1K", "median_time_infer_s",
                "time_infer_s")
"""Inference-time columns the Pareto figure uses, in order of preference (TabArena's first)."""


def _improvability_matrix(benchmark: Benchmark) -> np.ndarray:
    """Per-dataset improvability as a fraction (TabArena's unit), an M × D matrix in
    ``models_`` × ``datasets_`` order."""
    per = benchmark.improvability_ranking().per_dataset
    grid = per.pivot(index="model", columns="dataset", values="improvability")
    return grid.loc[benchmark.models_, benchmark.datasets_].to_numpy(dtype=float) / 100.0


def leaderboard(
    benchmark: Benchmark,
    *,
    calibration_model: str | None = None,
    calibration_elo: float = 1000.0,
    n_bootstrap: int = 200,
    random_state: Any = None,
    resampling: str = "dataset",
    confidence: float = 0.95,
) -> LeaderboardResult:
    """TabArena's leaderboard in one call (columns and conventions in the module doc).

    ``resampling`` is the Elo bootstrap scheme ("dataset", "split" or "battle", see
    :func:`.elo.elo_ranking`); ``n_bootstrap=0`` gives the points with zero-width bars.

    Parameters
    ----------
    calibration_model : str or None
        Shift the Elo column so that this model sits at ``calibration_elo``.
    calibration_elo : float
        The rating of ``calibration_model`` (default 1000).
    n_bootstrap : int
        Dataset-bootstrap replicates for elo± and improvability± (default 200; 0: none).
    random_state : None, int or numpy Generator
        Seed of the bootstrap.
    resampling : str
        The Elo bootstrap scheme: "dataset" (default), "split" or "battle".
    confidence : float
        Level of the intervals behind elo± and improvability±, strictly between 0 and 1
        (default 0.95).

    Returns
    -------
    LeaderboardResult
        ``.table``: model, elo, elo+, elo-, rank, winrate, improvability (a fraction),
        improvability+, improvability-, mrr, rank=1_count … rank>3_count, [time_train_s,
        time_infer_s, time_train_s_per_1K, time_infer_s_per_1K,] normalized-error,
        [median_time_…] (best Elo first; time columns when the results carry times);
        ``.plot()``, ``.plot_pareto()``, ``.to_csv(path, style="tabarena")``.
    """
    n_bootstrap = check_n_bootstrap(n_bootstrap, minimum=0)
    calibration_elo = check_number(calibration_elo, "calibration_elo")
    confidence = check_confidence(confidence)
    models, datasets = benchmark.models_, benchmark.datasets_
    check_models(models, calibration_model)
    scheme, draw = check_resampling(resampling)
    rng = make_rng(random_state)
    scores = benchmark.scores_.loc[models, datasets].to_numpy(dtype=float)
    improvability = _improvability_matrix(benchmark)

    counts = unit_counts(len(datasets), n_bootstrap, rng)
    result = fit(benchmark, 0.0, scheme, draw, n_bootstrap, rng,
                 counts=counts if scheme == "dataset" else None)
    elo, reps = result.ratings(calibration_model, calibration_elo)
    elo_plus, elo_minus = plus_minus(elo, reps, confidence)

    imp = improvability.mean(axis=1)
    imp_reps = counts @ improvability.T / len(datasets)
    imp_plus, imp_minus = plus_minus(imp, imp_reps, confidence)

    columns = {"model": np.asarray(models, dtype=object), "elo": elo, "elo+": elo_plus,
               "elo-": elo_minus, "winrate": winrates(result.battles.win_matrix()),
               "improvability": imp,
               "improvability+": imp_plus, "improvability-": imp_minus,
               **rank_columns(scores),
               "normalized-error": normalized_errors(error_matrix(benchmark)).mean(axis=1),
               **time_table(benchmark)}
    order = np.lexsort((columns["model"], -elo))
    table = pd.DataFrame({name: columns[name][order] for name in TABARENA_ORDER
                          if name in columns})
    index = pd.Index(models, name="model")
    return LeaderboardResult(table, bootstrap=pd.DataFrame(reps, columns=index),
                             improvability_bootstrap=pd.DataFrame(imp_reps, columns=index),
                             variants=benchmark.variants_,
                             calibration_model=calibration_model,
                             calibration_elo=calibration_elo, n_bootstrap=n_bootstrap,
                             random_state=random_state, confidence=confidence,
                             resampling=scheme, draw=result.draw,
                             regularized=result.regularized,
                             regularized_replicates=result.regularized_replicates)
