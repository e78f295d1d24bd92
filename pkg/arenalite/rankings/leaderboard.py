"""The leaderboard: TabArena's one-call table of Elo, ranks, win rate, improvability and
normalized error, with TabArena's column names so that its users recognize them.

Columns, one row per model, sorted by ``elo`` (best first):

- ``elo``: the full-data Bradley-Terry MLE of :mod:`.elo` (not a bootstrap median), ties
  ½, shifted so that ``calibration_model`` sits at ``calibration_elo`` (without one the
  ratings are centred on 1000). ``elo+`` / ``elo-``: distance from the point to the
  97.5 % / 2.5 % quantiles of the bootstrap replicates, clipped at 0. The default
  bootstrap draws whole datasets ("how sure are we on datasets like these").
- ``rank``: per dataset, on seed-averaged scores, the rank of each model (1 = best, ties
  averaged); then the mean over datasets. ``mrr``: the mean over datasets of 1 / rank.
- ``rank=k_count`` (k = 1, 2, 3): per dataset, a model whose tied group spans positions
  [min rank, max rank] gets 1 / (tie size) for each k in that span; summed over
  datasets. ``rank>3_count`` = number of datasets − the three.
- ``winrate``: the mean over opponents of the share of battles won against that
  opponent, ties ½ (battles and their weights as in Elo: one per pair and match day, so
  every dataset weighs the same).
- ``improvability`` (%): as :func:`.improvability.improvability_ranking`;
  ``improvability+`` / ``improvability-`` from the same dataset draws as the Elo
  bootstrap (from its own dataset draws when ``resampling`` is not "dataset"), clipped
  at 0 like Elo's.
- ``normalized-error``: as :mod:`.normalized_error`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from scipy.stats import rankdata

from ..params import check_n_bootstrap, check_number, make_rng
from ..results import Result
from . import elo as E
from .normalized_error import error_matrix, normalized_errors

if TYPE_CHECKING:
    from ..benchmark import Benchmark

COLUMNS = ("model", "elo", "elo+", "elo-", "rank", "winrate", "improvability",
           "improvability+", "improvability-", "mrr", "rank=1_count", "rank=2_count",
           "rank=3_count", "rank>3_count", "normalized-error")


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


def plus_minus(point: np.ndarray, replicates: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distances from ``point`` up to the 97.5 % and down to the 2.5 % quantile, clipped at 0."""
    if not len(replicates):
        return np.zeros_like(point), np.zeros_like(point)
    low, high = np.percentile(replicates, [2.5, 97.5], axis=0)
    return np.maximum(high - point, 0.0), np.maximum(point - low, 0.0)


class LeaderboardResult(Result):
    """TabArena's leaderboard (columns in the module doc), with the bootstrap replicates."""

    method = "leaderboard"

    def __init__(self, table: pd.DataFrame, *, bootstrap: pd.DataFrame,
                 improvability_bootstrap: pd.DataFrame, **params: Any) -> None:
        super().__init__(table, **params)
        self.bootstrap = bootstrap
        self.improvability_bootstrap = improvability_bootstrap

    def plot(self, ax: Any = None, figsize: tuple[float, float] | None = None,
             title: str | None = None, model_colors: Any = None) -> Any:
        """Elo as points with 95 % interval whiskers, best on top."""
        from ..plots.intervals import interval_plot

        ends = self.table.assign(low=self.table["elo"] - self.table["elo-"],
                                 high=self.table["elo"] + self.table["elo+"])
        reference = self.params["calibration_elo"] if self.params["calibration_model"] else None
        return interval_plot(ends, "elo", low="low", high="high", ax=ax, figsize=figsize,
                             reference_line=E.ELO_BASE if reference is None else reference,
                             model_colors=model_colors, xlabel="Elo rating",
                             title=title or f"Leaderboard: Elo with 95 % "
                                            f"{self.params['resampling']} bootstrap interval")


def _improvability_matrix(benchmark: Benchmark) -> np.ndarray:
    """Per-dataset improvability (%) as an M × D matrix in ``models_`` × ``datasets_`` order."""
    per = benchmark.improvability_ranking().per_dataset
    grid = per.pivot(index="model", columns="dataset", values="improvability")
    return grid.loc[benchmark.models_, benchmark.datasets_].to_numpy(dtype=float)


def leaderboard(
    benchmark: Benchmark,
    *,
    calibration_model: str | None = None,
    calibration_elo: float = 1000.0,
    n_bootstrap: int = 200,
    random_state: Any = None,
    resampling: str = "dataset",
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

    Returns
    -------
    LeaderboardResult
        ``.table``: model, elo, elo+, elo-, rank, winrate, improvability,
        improvability+, improvability-, mrr, rank=1_count … rank>3_count,
        normalized-error (best Elo first); ``.plot()``.
    """
    n_bootstrap = check_n_bootstrap(n_bootstrap, minimum=0)
    calibration_elo = check_number(calibration_elo, "calibration_elo")
    models, datasets = benchmark.models_, benchmark.datasets_
    E.check_models(models, calibration_model)
    scheme, draw = E.check_resampling(resampling)
    rng = make_rng(random_state)
    scores = benchmark.scores_.loc[models, datasets].to_numpy(dtype=float)
    improvability = _improvability_matrix(benchmark)

    t = E.tournament(benchmark, 0.0)
    theta, regularized = E.point_abilities(benchmark, t, 0.0)
    counts = E.resample_counts(len(datasets), n_bootstrap, rng)
    if scheme == "battle":
        draw = E.battle_draw(draw, int((~np.isnan(t.points)).sum()), n_bootstrap)
    reps, n_reg = E.replicate_abilities(t, theta, scheme, draw, n_bootstrap, rng,
                                        counts=counts if scheme == "dataset" else None)
    elo, reps = E.to_elo(theta), E.to_elo(reps)
    if calibration_model is not None:
        shift = calibration_elo - elo[models.index(calibration_model)]
        elo, reps = elo + shift, reps + shift
    elo_plus, elo_minus = plus_minus(elo, reps)

    imp = improvability.mean(axis=1)
    imp_reps = counts @ improvability.T / len(datasets)
    imp_plus, imp_minus = plus_minus(imp, imp_reps)

    columns = {"model": np.asarray(models, dtype=object), "elo": elo, "elo+": elo_plus,
               "elo-": elo_minus, "winrate": winrates(t.win_matrix()), "improvability": imp,
               "improvability+": imp_plus, "improvability-": imp_minus,
               **rank_columns(scores),
               "normalized-error": normalized_errors(error_matrix(benchmark)).mean(axis=1)}
    order = np.lexsort((columns["model"], -elo))
    table = pd.DataFrame({name: columns[name][order] for name in COLUMNS})
    index = pd.Index(models, name="model")
    return LeaderboardResult(table, bootstrap=pd.DataFrame(reps, columns=index),
                             improvability_bootstrap=pd.DataFrame(imp_reps, columns=index),
                             calibration_model=calibration_model,
                             calibration_elo=calibration_elo, n_bootstrap=n_bootstrap,
                             random_state=random_state, resampling=scheme, draw=draw,
                             regularized=regularized, regularized_replicates=n_reg)
