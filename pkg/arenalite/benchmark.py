"""The Benchmark: a validated, normalized model × dataset score table.

A Benchmark is built by :func:`arenalite.load_df`; it holds the data and hands it
to the pure functions in :mod:`arenalite.rankings` and :mod:`arenalite.stats`,
which return result objects. Selection methods return new Benchmarks.

Internal data (read by the method modules, never mutated):

``_long``
    one row per (model, dataset[, seed]) with columns ``model``, ``dataset``,
    ``seed`` (only when seeds were given), ``metric``, ``score`` (raw) and
    ``norm`` (normalized to [0, 1]-ish, 1 = best, direction already applied).
``scores_``
    normalized model × dataset DataFrame (mean over seeds).
``_raw``
    raw model × dataset DataFrame (mean over seeds).
``metrics_`` / ``directions_``
    Series indexed by dataset: the metric name as given and ``"max"``/``"min"``.
``has_seeds``
    whether per-seed rows exist.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pandas as pd

if TYPE_CHECKING:
    from .results import Result


class Benchmark:
    """Normalized scores of models on datasets, with every ranking method."""

    def __init__(
        self,
        long: pd.DataFrame,
        *,
        directions: pd.Series,
        metrics: pd.Series,
        has_seeds: bool,
        norm_low: pd.Series,
        norm_high: pd.Series,
    ) -> None:
        self._long = long.reset_index(drop=True)
        self.directions_ = directions
        self.metrics_ = metrics
        self.has_seeds = has_seeds
        self._norm_low = norm_low
        self._norm_high = norm_high
        means = self._long.groupby(["model", "dataset"], sort=True)[["norm", "score"]].mean()
        self.scores_ = means["norm"].unstack("dataset")
        self._raw = means["score"].unstack("dataset")

    @property
    def long_(self) -> pd.DataFrame:
        """One row per (model, dataset[, seed]): model, dataset, [seed,] metric, score, norm.

        Read-only for method modules (documented in docs/ARCHITECTURE.md); never mutate it.
        """
        return self._long

    @property
    def raw_(self) -> pd.DataFrame:
        """Raw (not normalized) model × dataset scores, mean over seeds."""
        return self._raw

    @property
    def norm_low_(self) -> pd.Series:
        """Per-dataset raw score that normalizes to 0."""
        return self._norm_low

    @property
    def norm_high_(self) -> pd.Series:
        """Per-dataset raw score that normalizes to 1."""
        return self._norm_high

    @property
    def models_(self) -> list[str]:
        return list(self.scores_.index)

    @property
    def datasets_(self) -> list[str]:
        return list(self.scores_.columns)

    def __repr__(self) -> str:
        seeds = ", with seeds" if self.has_seeds else ""
        return f"Benchmark({len(self.models_)} models × {len(self.datasets_)} datasets{seeds})"

    # ---- selection -------------------------------------------------------------
    def _subset(self, models: list[str], datasets: list[str]) -> Benchmark:
        """Same normalization (bounds frozen), fewer cells."""
        if not models:
            raise ValueError("the selection leaves no models; keep at least one")
        if not datasets:
            raise ValueError("the selection leaves no datasets; keep at least one")
        keep = self._long["model"].isin(models) & self._long["dataset"].isin(datasets)
        return Benchmark(
            self._long[keep],
            directions=self.directions_.loc[datasets],
            metrics=self.metrics_.loc[datasets],
            has_seeds=self.has_seeds,
            norm_low=self._norm_low.loc[datasets],
            norm_high=self._norm_high.loc[datasets],
        )

    def _check_names(self, names: Any, known: list[str], what: str) -> list[str]:
        if isinstance(names, str):
            names = [names]
        names = list(names)
        unknown = [n for n in names if n not in known]
        if unknown:
            raise ValueError(f"{what} {unknown!r} not found in score matrix; "
                             f"known {what}s: {known!r}")
        return names

    def select_models(self, models: Any) -> Benchmark:
        """A new Benchmark with only ``models`` (in the stored order)."""
        chosen = set(self._check_names(models, self.models_, "model"))
        return self._subset([m for m in self.models_ if m in chosen], self.datasets_)

    def drop_models(self, models: Any) -> Benchmark:
        """A new Benchmark without ``models``."""
        dropped = set(self._check_names(models, self.models_, "model"))
        return self._subset([m for m in self.models_ if m not in dropped], self.datasets_)

    def select_datasets(self, datasets: Any) -> Benchmark:
        """A new Benchmark with only ``datasets``."""
        chosen = set(self._check_names(datasets, self.datasets_, "dataset"))
        return self._subset(self.models_, [d for d in self.datasets_ if d in chosen])

    def drop_datasets(self, datasets: Any) -> Benchmark:
        """A new Benchmark without ``datasets``."""
        dropped = set(self._check_names(datasets, self.datasets_, "dataset"))
        return self._subset(self.models_, [d for d in self.datasets_ if d not in dropped])

    def drop_incomplete(self) -> Benchmark:
        """A new Benchmark without the models that miss any dataset."""
        complete = self.scores_.notna().all(axis=1)
        return self._subset([m for m in self.models_ if complete[m]], self.datasets_)

    # ---- rankings (arenalite.rankings) -------------------------------------------
    def aggregate_ranking(self, agg: str = "trimmed_mean") -> Result:
        from .rankings.aggregate import aggregate_ranking

        return aggregate_ranking(self, agg=agg)

    def iqm_ranking(self, n_bootstrap: int = 1000, random_state: Any = None) -> Result:
        from .rankings.iqm import iqm_ranking

        return iqm_ranking(self, n_bootstrap=n_bootstrap, random_state=random_state)

    def elo_ranking(
        self,
        n_bootstrap: int = 1000,
        random_state: Any = None,
        tie_threshold: float | None = None,
        calibration_model: str | None = None,
        resampling: str = "dataset",
    ) -> Result:
        from .rankings.elo import elo_ranking

        return elo_ranking(self, n_bootstrap=n_bootstrap, random_state=random_state,
                           tie_threshold=tie_threshold, calibration_model=calibration_model,
                           resampling=resampling)

    def leaderboard(
        self,
        *,
        calibration_model: str | None = None,
        calibration_elo: float = 1000.0,
        n_bootstrap: int = 200,
        random_state: Any = None,
        resampling: str = "dataset",
    ) -> Result:
        from .rankings.leaderboard import leaderboard

        return leaderboard(self, calibration_model=calibration_model,
                           calibration_elo=calibration_elo, n_bootstrap=n_bootstrap,
                           random_state=random_state, resampling=resampling)

    def normalized_error_ranking(self) -> Result:
        from .rankings.normalized_error import normalized_error_ranking

        return normalized_error_ranking(self)

    def improvability_ranking(self, normalized: bool = False, dummy: Any = None) -> Result:
        from .rankings.improvability import improvability_ranking

        return improvability_ranking(self, normalized=normalized, dummy=dummy)

    def performance_profiles(self) -> Result:
        from .rankings.profiles import performance_profiles

        return performance_profiles(self)

    def compare_rankings(self) -> Result:
        from .rankings.compare import compare_rankings

        return compare_rankings(self)

    # ---- statistics (arenalite.stats) --------------------------------------------
    def frequentist_comparison(self, reference: str | None = None, alpha: float = 0.05) -> Result:
        from .stats.frequentist import frequentist_comparison

        return frequentist_comparison(self, reference=reference, alpha=alpha)

    def bayesian_comparison(
        self,
        rope: float = 0.01,
        reference: str | None = None,
        pairs: Any = None,
        random_state: Any = None,
    ) -> Result:
        from .stats.bayesian import bayesian_comparison

        return bayesian_comparison(self, rope=rope, reference=reference, pairs=pairs,
                                   random_state=random_state)

    def rank_sensitivity(self, other: Benchmark, label: Any = "a", other_label: Any = "b",
                         **kwargs: Any) -> Result:
        """Kendall τ-b between this Benchmark's ranking and ``other``'s (see BenchmarkGroup)."""
        if not isinstance(other, Benchmark):
            raise TypeError(f"other must be a Benchmark, got {type(other).__name__}")
        group = BenchmarkGroup({label: self, other_label: other}, "condition")
        return group.rank_sensitivity(label, other_label, **kwargs)

    def gate(self, candidate: Any, reference: str, margin: float | None = None,
             alpha: float = 0.05) -> Result:
        from .stats.gate import gate

        return gate(self, candidate, reference, margin=margin, alpha=alpha)


class BenchmarkGroup:
    """Independently normalized Benchmarks, one per condition label (at least two).

    ``group[label]`` is that condition's Benchmark; iterating yields
    ``(label, Benchmark)`` pairs (like ``dict.items()``); ``keys()``, ``values()``,
    ``items()`` and ``in`` work as on a dict. Selection methods apply to every
    condition and return a new group; normalization bounds stay frozen.
    """

    def __init__(self, benchmarks: dict[Any, Benchmark], condition_col: str) -> None:
        if len(benchmarks) < 2:
            raise ValueError(f"a BenchmarkGroup needs at least two conditions of "
                             f"{condition_col!r}, got {list(benchmarks)!r}")
        for label, bench in benchmarks.items():
            if not isinstance(bench, Benchmark):
                raise TypeError(f"condition {label!r} must map to a Benchmark, got "
                                f"{type(bench).__name__}")
        self.benchmarks = dict(benchmarks)
        self.condition_col = condition_col

    def keys(self) -> list[Any]:
        return list(self.benchmarks)

    def values(self) -> list[Benchmark]:
        return list(self.benchmarks.values())

    def items(self) -> list[tuple[Any, Benchmark]]:
        return list(self.benchmarks.items())

    def __contains__(self, condition: Any) -> bool:
        return condition in self.benchmarks

    def _map(self, method: str, names: Any, what: str) -> BenchmarkGroup:
        names = [names] if isinstance(names, str) else list(names)
        known = {n for b in self.benchmarks.values() for n in getattr(b, what + "s_")}
        unknown = [n for n in names if n not in known]
        if unknown:
            raise ValueError(f"{what} {unknown!r} not found in score matrix of any condition; "
                             f"known {what}s: {sorted(known)!r}")
        out = {}
        for label, bench in self.benchmarks.items():
            present = [n for n in names if n in getattr(bench, what + "s_")]
            if method.startswith("drop"):
                out[label] = getattr(bench, method)(present) if present else bench
            else:
                if not present:
                    raise ValueError(f"condition {label!r} has none of the {what}s {names!r}")
                out[label] = getattr(bench, method)(present)
        return BenchmarkGroup(out, self.condition_col)

    def select_models(self, models: Any) -> BenchmarkGroup:
        """Keep only ``models`` in every condition."""
        return self._map("select_models", models, "model")

    def drop_models(self, models: Any) -> BenchmarkGroup:
        """Remove ``models`` from every condition that has them."""
        return self._map("drop_models", models, "model")

    def select_datasets(self, datasets: Any) -> BenchmarkGroup:
        """Keep only ``datasets`` in every condition."""
        return self._map("select_datasets", datasets, "dataset")

    def drop_datasets(self, datasets: Any) -> BenchmarkGroup:
        """Remove ``datasets`` from every condition that has them."""
        return self._map("drop_datasets", datasets, "dataset")

    @property
    def conditions_(self) -> list[Any]:
        return list(self.benchmarks)

    def __getitem__(self, condition: Any) -> Benchmark:
        if condition not in self.benchmarks:
            raise KeyError(f"condition {condition!r} not found; "
                           f"known conditions: {self.conditions_!r}")
        return self.benchmarks[condition]

    def __iter__(self):
        return iter(self.benchmarks.items())

    def __len__(self) -> int:
        return len(self.benchmarks)

    def __repr__(self) -> str:
        return f"BenchmarkGroup({self.condition_col}: {self.conditions_!r})"

    def rank_sensitivity(self, *args: Any, **kwargs: Any) -> Result:
        from .stats.sensitivity import rank_sensitivity

        return rank_sensitivity(self, *args, **kwargs)
