"""Rank comparison: the aggregate, Elo and improvability ranks of every model side by side.

Rank 1 is best under every method (highest aggregate score, highest Elo, lowest
improvability); equal values share the smallest rank (``method="min"``), after rounding
to 1e-6 so that round-off cannot split a tie. ``rank_spread`` = max − min rank shows
how much the verdict on a model depends on the method. Elo is the point estimate
(no bootstrap), since only the order is used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..results import Result

if TYPE_CHECKING:
    from ..benchmark import Benchmark

METHODS = ("aggregate", "elo", "improvability")


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
             title: str | None = None) -> Any:
        from ..plots.heatmap import heatmap

        grid = self.table.set_index("model")[list(METHODS)]
        grid.columns.name = "method"
        return heatmap(grid, ax=ax, figsize=figsize, fmt="{:.0f}", cmap="cividis_r",
                       title=title or "Rank by method (1 = best)", colorbar_label="rank",
                       vmin=1, vmax=max(len(grid), 2))


def compare_rankings(benchmark: Benchmark) -> CompareResult:
    """Aggregate, Elo and improvability ranks per model, with rank_spread = max − min."""
    results = {
        "aggregate": benchmark.aggregate_ranking(),
        "elo": benchmark.elo_ranking(n_bootstrap=0),
    }
    try:
        results["improvability"] = benchmark.improvability_ranking()
    except ValueError as err:
        raise ValueError(f"compare_rankings needs the improvability ranking: {err}") from err
    models = benchmark.models_
    columns = {}
    for method, value, higher in (("aggregate", "score", True), ("elo", "ELO", True),
                                  ("improvability", "improvability", False)):
        values = results[method].table.set_index("model")[value].loc[models].to_numpy()
        columns[method] = ranks(values, higher)
    table = pd.DataFrame({"model": models, **columns})
    rank_matrix = table[list(METHODS)].to_numpy()
    table["rank_spread"] = rank_matrix.max(axis=1) - rank_matrix.min(axis=1)
    table = table.sort_values(["aggregate", "model"], kind="stable", ignore_index=True)
    return CompareResult(table, results=results)
