"""What a tournament returns: its tables, and the plots of the scorecard."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..results import Result


class TournamentResult(Result):
    """``.scorecard`` (the methodology's table, also ``.table``), ``.results`` (one row per
    played task), ``.leaderboard`` (TabArena's columns), ``.failures``,
    ``.not_applicable``, ``.out`` (the folder written, or None) and ``.exit_status``
    (0: all ran, 1: a task failed); ``plot()`` draws the Elo ± CI, ``plot_record()`` the
    W–L matrix."""

    method = "tournament"

    def __init__(self, scorecard: pd.DataFrame, *, results: pd.DataFrame,
                 leaderboard: pd.DataFrame | None, failures: pd.DataFrame,
                 not_applicable: pd.DataFrame, out: Path | None, **params: Any) -> None:
        super().__init__(scorecard, **params)
        self.results = results
        self.leaderboard = leaderboard
        self.failures = failures
        self.not_applicable = not_applicable
        self.out = out

    @property
    def scorecard(self) -> pd.DataFrame:
        return self.table

    @property
    def exit_status(self) -> int:
        return 1 if len(self.failures) else 0

    def record_matrix(self) -> pd.DataFrame:
        """Wins of the row model against the column model (scorecard order)."""
        models = list(self.table["model"])
        wins = pd.DataFrame(np.nan, index=pd.Index(models, name="model"),
                            columns=pd.Index(models, name="opponent"))
        for row in self.table.itertuples(index=False):
            for opponent in models:
                if opponent != row.model:
                    text = self.table.loc[self.table["model"] == row.model,
                                          f"vs {opponent}"].iloc[0]
                    wins.loc[row.model, opponent] = int(text.split("W", 1)[0])
        return wins

    def plot(self, ax: Any = None, figsize: tuple[float, float] | None = None,
             title: str | None = None) -> Any:
        """Elo as points with their 95 % split-bootstrap interval, best first (a model that
        met no other has no rating and is left out)."""
        from ..plots.intervals import interval_plot

        return interval_plot(self.table.dropna(subset=["elo"]), "elo", low="elo_low",
                             high="elo_high", ax=ax, figsize=figsize, reference_line=1000.0,
                             title=title or "Tournament Elo (95 % split-bootstrap interval)",
                             xlabel="Elo rating")

    def plot_record(self, ax: Any = None, figsize: tuple[float, float] | None = None,
                    title: str | None = None) -> Any:
        """The W–L matrix: matches the row model won against the column model."""
        from ..plots.heatmap import heatmap

        return heatmap(self.record_matrix(), ax=ax, figsize=figsize,
                       title=title or "Matches won by the row model against the column model",
                       colorbar_label="splits won", fmt="{:.0f}", xlabel="opponent",
                       ylabel="model")

    def __repr__(self) -> str:
        where = f", out={str(self.out)!r}" if self.out is not None else ""
        return (f"TournamentResult({len(self.table)} models, {len(self.results)} played tasks, "
                f"{len(self.failures)} failed{where})")
