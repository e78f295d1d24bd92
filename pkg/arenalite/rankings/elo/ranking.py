"""The Elo ranking method: ratings with percentile bootstrap intervals, and its Result."""

from __future__ import annotations

import functools
from collections.abc import Callable
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ...params import check_confidence, check_n_bootstrap, check_number, make_rng
from ...results import Result
from ...stats.bootstrap import interval_level, percentile_interval
from .fitting import fit
from .resampling import DEFAULT_RESAMPLING, check_resampling
from .scale import ELO_BASE
from .scorecard import battle_counts, record_table, winrate_table

if TYPE_CHECKING:
    from ...benchmark import Benchmark
    from .battles import BattleSet


def elo_scorecards(benchmark: Benchmark, t: BattleSet, threshold: float,
                   order: tuple[int, ...]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(win-rate matrix, record) of the battle set ``t``, models in ``order``; built once
    per Benchmark, threshold and order (``Benchmark.memo``). A module function, so an
    EloResult holding it (by ``functools.partial``) pickles."""
    return benchmark.memo(("elo scorecards", threshold, order), lambda: (
        winrate_table(benchmark, threshold),
        record_table(battle_counts(t.points, t.pairs, len(t.models)), t.models, list(order))))


def rating_table(models: list[str], elo: np.ndarray, low: np.ndarray,
                 high: np.ndarray) -> pd.DataFrame:
    """``model, ELO, CI_low, CI_high``, best first (ties by name)."""
    names = np.asarray(models, dtype=object)
    order = np.lexsort((names, -elo))
    return pd.DataFrame({"model": names[order], "ELO": elo[order], "CI_low": low[order],
                         "CI_high": high[order]})


class EloResult(Result):
    """Elo ratings with bootstrap intervals, plus win-rate matrix and match record.

    ``scorecards()`` returns (win-rate matrix, record); they are built on first access of
    :attr:`winrate_matrix` or :attr:`record` (at 1000 models a million-row record costs
    more than a third of a second that a ranking alone does not need).
    """

    method = "elo"

    def __init__(self, table: pd.DataFrame, *,
                 scorecards: Callable[[], tuple[pd.DataFrame, pd.DataFrame]],
                 bootstrap: pd.DataFrame, **params: Any) -> None:
        super().__init__(table, **params)
        self._scorecards = scorecards
        self.bootstrap = bootstrap

    @cached_property
    def winrate_matrix(self) -> pd.DataFrame:
        """Share of datasets where the row model beats the column model (ties ½)."""
        return self._scorecards()[0].copy()

    @cached_property
    def record(self) -> pd.DataFrame:
        """Wins, losses and ties of every ordered pair over all match days, and per model."""
        return self._scorecards()[1].copy()

    @property
    def margin(self) -> pd.Series:
        """± margin per model, half the interval ((R₀.₉₇₅ − R₀.₀₂₅) / 2 at 95 %), as the
        tournament methodology reports it."""
        half = (self.table["CI_high"] - self.table["CI_low"]) / 2
        return pd.Series(half.to_numpy(), index=pd.Index(self.table["model"], name="model"),
                         name="margin")

    @property
    def scorecard(self) -> pd.DataFrame:
        """The record as a model × opponent grid of "W–L (share)" strings, with a total column."""
        grid = self.record.pivot(index="model", columns="opponent", values="record")
        order = list(self.table["model"])
        grid = grid.reindex(index=order, columns=order + ["(all)"]).fillna("—")
        grid = grid.rename(columns={"(all)": "total"})
        grid.insert(len(grid.columns), "ELO", self.table.set_index("model")["ELO"].round(1))
        return grid

    def plot(self, ax: Any = None, figsize: tuple[float, float] | None = None,
             title: str | None = None, model_colors: Any = None) -> Any:
        """Ratings as points with interval whiskers; ``model_colors`` in table order or by name."""
        from ...plots.intervals import interval_plot

        scheme = self.params.get("resampling", "")
        level = interval_level(self.params.get("confidence", 0.95))
        anchored = self.params.get("calibration_model") is not None
        line = self.params.get("calibration_elo", ELO_BASE) if anchored else ELO_BASE
        return interval_plot(self.table, "ELO", low="CI_low", high="CI_high", ax=ax,
                             figsize=figsize, reference_line=line, model_colors=model_colors,
                             title=title or f"Bradley-Terry Elo ({level} {scheme} bootstrap "
                                            "interval)",
                             xlabel="Elo rating")

    def plot_winrate(self, ax: Any = None, figsize: tuple[float, float] | None = None,
                     title: str | None = None) -> Any:
        """Heatmap of the share of datasets where the row model beats the column model."""
        from ...plots.heatmap import heatmap

        return heatmap(self.winrate_matrix, ax=ax, figsize=figsize,
                       title=title or "Win rate of row model against column model",
                       colorbar_label="share of datasets won (ties ½)", fmt="{:.2f}",
                       vmin=0.0, vmax=1.0, xlabel="opponent", ylabel="model")


def _check_params(n_bootstrap: Any, tie_threshold: Any) -> tuple[int, float]:
    n_bootstrap = check_n_bootstrap(n_bootstrap, minimum=0)
    if tie_threshold is None:
        return n_bootstrap, 0.0
    return n_bootstrap, check_number(tie_threshold, "tie_threshold", low=0.0)


def check_models(models: list[str], calibration_model: Any) -> None:
    """At least two models, and ``calibration_model`` (if given) among them."""
    if len(models) < 2:
        raise ValueError(f"Elo needs at least two models, got {models!r}")
    if calibration_model is not None and calibration_model not in models:
        raise ValueError(f"calibration_model {calibration_model!r} not found in score matrix; "
                         f"models are {models!r}")


def elo_ranking(
    benchmark: Benchmark,
    n_bootstrap: int = 1000,
    random_state: Any = None,
    tie_threshold: float | None = None,
    calibration_model: str | None = None,
    resampling: str = DEFAULT_RESAMPLING,
    calibration_elo: float = ELO_BASE,
    confidence: float = 0.95,
) -> EloResult:
    """Bradley-Terry Elo ratings (full-data MLE) with percentile bootstrap intervals.

    ``resampling`` chooses the question the interval answers (:mod:`.resampling`): "battle"
    (these exact splits), "split" (match days drawn from the pool), "dataset" (datasets
    like these; the default, the only one that holds its coverage when models are better
    on some datasets than on others). "auto", "multinomial" and "poisson" are ways of
    drawing the battle scheme. ``calibration_model`` shifts all ratings so that it sits at
    ``calibration_elo`` (default 1000), as TabArena anchors its published scale.
    The result's ``params`` record the scheme, the battle draw, and whether the point
    estimate / how many replicates needed the tie prior; ``.margin`` is half the
    interval's width (±(R₀.₉₇₅ − R₀.₀₂₅)/2 at the default 95 %).

    Parameters
    ----------
    n_bootstrap : int
        Bootstrap replicates for the percentile interval; 0 gives the point estimate
        only (the interval columns then equal it).
    random_state : None, int or numpy Generator
        Seed of the bootstrap.
    tie_threshold : float or None
        Normalized score differences at most this large are ties (½ point each); None
        or 0: only equal scores tie.
    calibration_model : str or None
        Shift every rating (after the intervals) so that this model sits at
        ``calibration_elo``; None: ratings centred on 1000.
    resampling : str
        "dataset" (default), "split" or "battle"; or "auto", "multinomial", "poisson"
        (ways of drawing the battle scheme).
    calibration_elo : float
        The rating of ``calibration_model`` (default 1000).
    confidence : float
        Level of the percentile interval, strictly between 0 and 1 (default 0.95).

    Returns
    -------
    EloResult
        ``.table``: model, ELO, CI_low, CI_high (best first); ``.winrate_matrix``,
        ``.record``, ``.margin``; ``.plot()`` (points with interval whiskers) and
        ``.plot_winrate()``.
    """
    n_bootstrap, threshold = _check_params(n_bootstrap, tie_threshold)
    calibration_elo = check_number(calibration_elo, "calibration_elo")
    confidence = check_confidence(confidence)
    check_models(benchmark.models_, calibration_model)
    scheme, draw = check_resampling(resampling)
    rng = make_rng(random_state)

    result = fit(benchmark, threshold, scheme, draw, n_bootstrap, rng)
    t = result.battles
    elo, reps = result.ratings(calibration_model, calibration_elo)
    low, high = percentile_interval(reps, confidence) if n_bootstrap else (elo, elo)
    table = rating_table(t.models, elo, low, high)
    order = [t.models.index(name) for name in table["model"]]

    scorecards = functools.partial(elo_scorecards, benchmark, t, threshold, tuple(order))
    return EloResult(table, scorecards=scorecards,
                     bootstrap=pd.DataFrame(reps, columns=pd.Index(t.models, name="model")),
                     n_bootstrap=n_bootstrap, random_state=random_state,
                     tie_threshold=tie_threshold, calibration_model=calibration_model,
                     calibration_elo=calibration_elo, confidence=confidence,
                     resampling=scheme, draw=result.draw, regularized=result.regularized,
                     regularized_replicates=result.regularized_replicates)
