"""Rank comparison: the aggregate, Elo and improvability ranks of every model side by side.

Rank 1 is best under every method (highest aggregate score, highest Elo, lowest
improvability); equal values share the smallest rank (``method="min"``), after rounding
to 1e-6 so that round-off cannot split a tie. ``rank_spread`` = max − min rank shows
how much the verdict on a model depends on the method. Elo is the point estimate
(no bootstrap), since only the order is used.

:func:`stability` asks the companion question of performance profiles: does dropping
the best model (by AUP) reorder the others under each method?
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..results import Result

if TYPE_CHECKING:
    from ..benchmark import Benchmark

METHODS = ("aggregate", "elo", "improvability")
STABILITY_METHODS = ("aup", *METHODS)


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

        grid = self.table.set_index("model")[list(METHODS)]
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
    bootstrap), improvability TabArena's.

    Returns
    -------
    CompareResult
        ``.table``: model, aggregate, elo, improvability (rank 1 = best), rank_spread;
        ``.results``: each method's own result; ``.plot()``.
    """
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


def stability(benchmark: Benchmark, methods: Any = None) -> pd.DataFrame:
    """Drop the top model by AUP; per method, did the order of the others change?

    ``methods`` defaults to aup, aggregate, elo (point estimate) and improvability,
    the last only when every dataset's metric has a known optimum. Returns one row
    per method: method, dropped, changed, order_before, order_after ("A > B > C").
    """
    from .profiles import performance_profiles

    if len(benchmark.models_) < 3:
        raise ValueError(f"stability needs at least three models (two left after dropping "
                         f"the top one), got {benchmark.models_!r}")
    if methods is None:
        methods = [m for m in STABILITY_METHODS
                   if m != "improvability" or _improvability_defined(benchmark)]
    methods = [methods] if isinstance(methods, str) else list(methods)
    unknown = [m for m in methods if m not in STABILITY_METHODS]
    if unknown:
        raise ValueError(f"methods {unknown!r} unknown; choose from {STABILITY_METHODS!r}")
    by_aup = [str(m) for m in performance_profiles(benchmark).aup.index]  # profiled once
    top = by_aup[0]
    reduced = benchmark.drop_models(top)
    rows = []
    for method in methods:
        full = by_aup if method == "aup" else _order(benchmark, method)
        before = [m for m in full if m != top]
        after = _order(reduced, method)
        rows.append({"method": method, "dropped": top, "changed": before != after,
                     "order_before": " > ".join(before), "order_after": " > ".join(after)})
    return pd.DataFrame(rows)


def _improvability_defined(benchmark: Benchmark) -> bool:
    from .improvability import optima

    try:
        optima(benchmark.metrics_, benchmark.directions_)
    except ValueError:
        return False
    return True


def _order(benchmark: Benchmark, method: str) -> list[str]:
    """Models best first under ``method`` (each ranking's table is already sorted)."""
    if method == "aup":
        from .profiles import performance_profiles

        return [str(m) for m in performance_profiles(benchmark).aup.index]
    if method == "aggregate":
        table = benchmark.aggregate_ranking().table
    elif method == "elo":
        table = benchmark.elo_ranking(n_bootstrap=0).table
    else:
        table = benchmark.improvability_ranking().table
    return [str(m) for m in table["model"]]
