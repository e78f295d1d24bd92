"""The Benchmark: a validated, normalized model × dataset score table.

A Benchmark is built by :func:`arenalite.load_df`; it holds the data and hands it
to the pure functions in :mod:`arenalite.rankings` and :mod:`arenalite.stats`,
which return result objects. Each method is one of those functions, one per entry of
:data:`arenalite.methods.METHODS` (:class:`method_of`: same signature and docstring).
Selection methods return new Benchmarks.

Data, read by the method modules through these read-only properties, never mutated:

``long_``
    one row per (model, dataset[, seed]) with columns ``model``, ``dataset``,
    ``seed`` (only when seeds were given), ``metric``, ``score`` (raw) and
    ``norm`` (normalized to [0, 1]-ish, 1 = best, direction already applied).
``scores_``
    normalized model × dataset DataFrame (mean over seeds).
``raw_``
    raw model × dataset DataFrame (mean over seeds).
``norm_low_`` / ``norm_high_``
    per-dataset raw scores that normalize to 0 and to 1.
``metrics_`` / ``directions_``
    Series indexed by dataset: the metric name as given and ``"max"``/``"min"``.
``has_seeds``
    whether per-seed rows exist.
``variants_``
    None, or per model the model it runs and its runner, when the results hold rows
    of several runners (models named ``"<model> @ <runner>"``).

``long_`` also holds the results' time columns (``time_train_s``, ``time_infer_s``,
``time_train_s_per_1K``, ``time_infer_s_per_1K``) when they carry times, and ``runner``
with several runners.
"""

from __future__ import annotations

import importlib
import inspect
import types
from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Any

import pandas as pd

from .methods import METHODS

if TYPE_CHECKING:
    from .results import Result


class method_of:
    """A method that calls ``function(self, ...)`` from a method module, documented by it.

    ``aggregate_ranking = method_of(".rankings.aggregate")`` in a class body gives the
    class a method ``aggregate_ranking`` that runs
    ``arenalite.rankings.aggregate.aggregate_ranking(self, ...)``. The method shows that
    function's own signature and docstring (``help()``, ``inspect.signature``, IDEs), so
    each method's parameters, defaults and docs have one source. The module is imported
    at the method's first look-up, which keeps ``import arenalite`` light.
    """

    def __init__(self, module: str, function: str | None = None) -> None:
        self.module, self.function = module, function
        self.target: Callable[..., Any] | None = None

    def __set_name__(self, owner: type, name: str) -> None:
        self.function = self.function or name

        def method(obj: Any, /, *args: Any, **kwargs: Any) -> Any:
            return self.target(obj, *args, **kwargs)  # type: ignore[misc]

        method.__name__, method.__qualname__ = name, f"{owner.__qualname__}.{name}"
        method.__module__ = owner.__module__
        self.method = method

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        if self.target is None:  # first look-up: import, then copy the documentation
            self.target = getattr(importlib.import_module(self.module, __package__),
                                  self.function)
            signature = inspect.signature(self.target)
            first, *rest = signature.parameters.values()
            self.method.__doc__ = self.target.__doc__
            self.method.__signature__ = signature.replace(  # type: ignore[attr-defined]
                parameters=[first.replace(name="self", annotation=inspect.Parameter.empty),
                            *rest])
        return self.method if instance is None else types.MethodType(self.method, instance)


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
        self._memo: dict[Hashable, Any] = {}

    def memo(self, key: Hashable, compute: Callable[[], Any]) -> Any:
        """``compute()``, kept on this Benchmark under ``key`` and returned again later.

        For a quantity that several methods derive from the same data, e.g. Elo's
        full-data point fit (elo_ranking, leaderboard, compare_rankings). The data never
        change, so a value stays valid when ``key`` names the quantity and every parameter
        it depends on; callers must not mutate what it returns. Selections are new
        Benchmarks with their own (empty) memo.
        """
        if key not in self._memo:
            self._memo[key] = compute()
        return self._memo[key]

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
    def variants_(self) -> pd.DataFrame | None:
        """Per model (index): ``base``, the model it runs, and its ``runner``; None unless
        the results hold rows of several runners."""
        if "runner" not in self._long.columns:
            return None
        first = self._long.drop_duplicates("model").set_index("model")["runner"]
        first = first.loc[self.models_]
        suffix = " @ " + first
        base = [m[:-len(s)] if m.endswith(s) else m
                for m, s in zip(first.index, suffix, strict=True)]
        return pd.DataFrame({"base": base, "runner": first.to_numpy()},
                            index=pd.Index(first.index, name="model"))

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

    # ---- rankings (arenalite.rankings) and statistics (arenalite.stats) ------------
    # One method per entry of arenalite.methods.METHODS (added below the class), each its
    # module's function; help(bench.elo_ranking) shows its docs.

    def rank_sensitivity(self, other: Benchmark, label: Any = "a", other_label: Any = "b",
                         **kwargs: Any) -> Result:
        """Kendall τ-b between this Benchmark's ranking and ``other``'s.

        The two become the conditions ``label`` and ``other_label`` of a BenchmarkGroup;
        the keyword arguments (agg, n_bootstrap, confidence, random_state) are those of
        :meth:`BenchmarkGroup.rank_sensitivity`, documented there.
        """
        if not isinstance(other, Benchmark):
            raise TypeError(f"other must be a Benchmark, got {type(other).__name__}")
        group = BenchmarkGroup({label: self, other_label: other}, "condition")
        return group.rank_sensitivity(label, other_label, **kwargs)


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

    rank_sensitivity = method_of(".stats.sensitivity")


def _add_methods(cls: type, specs: Any) -> None:
    """Give ``cls`` one :class:`method_of` per method spec, named as its function."""
    for spec in specs:
        method = method_of(f".{spec.module}", spec.function)
        method.__set_name__(cls, spec.function)
        setattr(cls, spec.function, method)


_add_methods(Benchmark, METHODS)
