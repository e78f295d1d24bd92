"""The method registry: each ranking and statistics method of a Benchmark, declared once.

A :class:`MethodSpec` names the method's function (module and name, imported on first
use so that ``import arenalite`` stays light), its command-line name, its title, the
column that holds each model's value and which way is better, its label in the report's
summary, and whether the report shows it and the rank comparison ranks by it. The rest
is read from the function itself: the parameters it takes (its signature) and whether it
bootstraps (it takes ``n_bootstrap``).

From :data:`METHODS` come the Benchmark's methods (:mod:`arenalite.benchmark`), the
command line's subcommands and their flags (:mod:`arenalite.cli`: a subcommand offers a
flag exactly when its function takes that parameter), the report's sections and verdicts
(:mod:`arenalite.report`) and the methods that
:func:`~arenalite.rankings.compare.compare_rankings` puts side by side. Adding a method is
its module plus one entry here.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any


@dataclass(frozen=True)
class MethodSpec:
    """One method: ``function(benchmark, **params) -> Result`` and how it is presented.

    ``value`` is the column of the method's ranking table (for profiles, the report's
    AUP table) holding each model's value, best first; ``direction`` says whether
    ``"max"`` or ``"min"`` is better. ``label`` names the method in the report's summary
    of best models (None: no verdict there) with the value written by ``fmt``.
    """

    name: str
    module: str
    function: str
    title: str
    value: str | None = None
    direction: str | None = None
    label: str | None = None
    fmt: str = "{:.3f}"
    report: bool = True
    compare: bool = False
    aliases: tuple[str, ...] = field(default=())

    @cached_property
    def call(self) -> Callable[..., Any]:
        """The method's function, imported on first use."""
        return getattr(importlib.import_module(f"{__package__}.{self.module}"), self.function)

    @property
    def parameters(self) -> dict[str, inspect.Parameter]:
        """The function's parameters after the Benchmark, by name."""
        return dict(list(inspect.signature(self.call).parameters.items())[1:])

    @property
    def result_type(self) -> type | None:
        """The class the function returns (its return annotation), None if not a class."""
        returned = inspect.signature(self.call).return_annotation
        if isinstance(returned, str):
            returned = getattr(inspect.getmodule(self.call), returned, None)
        return returned if isinstance(returned, type) else None

    @property
    def bootstraps(self) -> bool:
        """Whether the method draws bootstrap replicates (it takes ``n_bootstrap``)."""
        return "n_bootstrap" in self.parameters

    @property
    def higher_is_better(self) -> bool:
        return self.direction == "max"

    def point(self, benchmark: Any) -> Any:
        """The method's result without bootstrap replicates (its point estimates)."""
        return self.call(benchmark, **({"n_bootstrap": 0} if self.bootstraps else {}))


METHODS: tuple[MethodSpec, ...] = (
    MethodSpec("leaderboard", "rankings.leaderboard", "leaderboard",
               "Leaderboard (TabArena's table; Elo with dataset-bootstrap 95 % bars)",
               value="elo", direction="max"),
    MethodSpec("aggregate", "rankings.aggregate", "aggregate_ranking",
               "Aggregate ranking (trimmed mean of normalized scores)",
               value="score", direction="max", label="aggregate", compare=True),
    MethodSpec("iqm", "rankings.iqm", "iqm_ranking",
               "Interquartile mean with dataset-bootstrap 95 % CI",
               value="IQM", direction="max", label="IQM"),
    MethodSpec("elo", "rankings.elo", "elo_ranking", "Bradley-Terry Elo with bootstrap CI",
               value="ELO", direction="max", label="Elo", fmt="{:.0f}", compare=True),
    MethodSpec("improvability", "rankings.improvability", "improvability_ranking",
               "Improvability (TabArena), lower is better",
               value="improvability", direction="min", label="improvability",
               fmt="{:.1f} %", compare=True),
    MethodSpec("normalized-error", "rankings.normalized_error", "normalized_error_ranking",
               "Normalized error (TabArena), lower is better",
               value="normalized-error", direction="min", label="normalized error"),
    MethodSpec("compare", "rankings.compare", "compare_rankings",
               "Ranks by method, side by side", aliases=("rank",)),
    MethodSpec("frequentist", "stats.frequentist", "frequentist_comparison",
               "Friedman + Nemenyi critical differences"),
    MethodSpec("bayesian", "stats.bayesian", "bayesian_comparison",
               "Bayesian signed-rank test, all pairs"),
    MethodSpec("profiles", "rankings.profiles", "performance_profiles",
               "Performance profiles (Dolan & Moré)",
               value="AUP", direction="max", label="AUP"),
    MethodSpec("gate", "stats.gate", "gate",
               "Non-inferiority gate of candidates against a reference", report=False),
)
"""Every method, in report order (the command line lists its subcommands in this order)."""


def get(name: str) -> MethodSpec:
    """The method called ``name`` (or one of its aliases)."""
    for spec in METHODS:
        if name == spec.name or name in spec.aliases:
            return spec
    raise ValueError(f"unknown method {name!r}; known: {[s.name for s in METHODS]!r}")


def reported() -> list[MethodSpec]:
    """The methods the report shows, in its order."""
    return [spec for spec in METHODS if spec.report]


def compared() -> list[MethodSpec]:
    """The methods whose ranks :func:`~arenalite.rankings.compare.compare_rankings` compares."""
    return [spec for spec in METHODS if spec.compare]
