"""Rank comparison: the ranks of every model under several ranking methods, side by side.

The methods are those the registry marks ``compare`` (:func:`arenalite.methods.compared`:
aggregate, Elo and improvability), each at its point estimate (no bootstrap), since only
the order is used. Rank 1 is best under every method (highest aggregate score, highest
Elo, lowest improvability); equal values share the smallest rank (``method="min"``), after
rounding to 1e-6 so that round-off cannot split a tie. ``rank_spread`` = max − min rank
shows how much the verdict on a model depends on the method.

The companion question of performance profiles, does dropping the best model reorder the
others under each method, is :func:`arenalite.rankings.profiles.stability`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..methods import compared
from ..results import Result

if TYPE_CHECKING:
    from ..benchmark import Benchmark


def ranks(values: np.ndarray, higher_is_better: bool) -> np.ndarray:
    """Competition ranks ("min" ties, 1 = best) of values rounded to 1e-6."""
    rounded = pd.Series(np.round(np.asarray(values, dtype=float), 6))
    return rounded.rank(method="min", ascending=not higher_is_better).to_numpy(dtype=int)


class CompareResult(Result):
    """Ranks per method with their spread; ``.results`` holds each method's own result."""

    method = "compare"

    def __init__(self, table: pd.DataFrame, *, results: dict[str, Result], **params: Any) -> None:
        super().__init__(table, **params)
        self.results = results

    def plot(self, ax: Any = None, figsize: tuple[float, float] | None = None,
             title: str | None = None, order: Any = None) -> Any:
        """Heatmap of the ranks, one row per model (table order, or ``order``, a list of
        models, e.g. the leaderboard's)."""
        from ..plots.heatmap import heatmap

        grid = self.table.set_index("model")[list(self.results)]
        if order is not None:
            first = [m for m in order if m in grid.index]
            grid = grid.loc[first + [m for m in grid.index if m not in set(first)]]
        grid.columns.name = "method"
        return heatmap(grid, ax=ax, figsize=figsize, fmt="{:.0f}", cmap="cividis_r",
                       title=title or "Rank by method (1 = best)", colorbar_label="rank",
                       vmin=1, vmax=max(len(grid), 2))


def compare_rankings(benchmark: Benchmark) -> CompareResult:
    """Aggregate, Elo and improvability ranks per model, with rank_spread = max − min.

    No parameters: the aggregate is the trimmed mean, Elo the point estimate (no
    bootstrap), improvability TabArena's (the registry's compared methods, each at its
    defaults).

    Returns
    -------
    CompareResult
        ``.table``: model, aggregate, elo, improvability (rank 1 = best), rank_spread;
        ``.results``: each method's own result; ``.plot()``.
    """
    specs = compared()
    results = {}
    for spec in specs:
        try:
            results[spec.name] = spec.point(benchmark)
        except ValueError as err:
            raise ValueError(f"compare_rankings needs the {spec.name} ranking: {err}") from err
    models = benchmark.models_
    table = pd.DataFrame({"model": models, **{
        spec.name: ranks(results[spec.name].table.set_index("model")[spec.value]
                         .loc[models].to_numpy(), spec.higher_is_better)
        for spec in specs}})
    rank_matrix = table[list(results)].to_numpy()
    table["rank_spread"] = rank_matrix.max(axis=1) - rank_matrix.min(axis=1)
    table = table.sort_values([specs[0].name, "model"], kind="stable", ignore_index=True)
    return CompareResult(table, results=results)
