"""The tournament methodology's pipeline in one call: a suite of tables, every model, the
scorecard, and nothing lost when a run stops.

One concept a module, data flowing one way: :mod:`.suite` (the suite file and the
:class:`Suite`), :mod:`.entrants` (the models: labels, keys, applicability), :mod:`.tasks`
(lazy tasks and the bad-output checks), :mod:`.store` (results.csv / failures.csv, resume),
:mod:`.execute` (in process, a process pool, Dask), :mod:`.scorecard` (a thin layer over
:mod:`arenalite.rankings.elo`), :mod:`.result` and :mod:`.run` (the pipeline).

``arenalite.tournament`` is both this package and the function: calling the package,
``arenalite.tournament(suite, models, out=None, executor=None)``, calls
:func:`.run.tournament`.
"""

from __future__ import annotations

import sys
import types
from typing import Any

from .entrants import Model, RegistryModel, parse_model
from .result import TournamentResult
from .run import tournament
from .scorecard import scorecard
from .suite import Entry, Suite, SuiteError, read_suite

__all__ = ["Entry", "Model", "RegistryModel", "Suite", "SuiteError", "TournamentResult",
           "parse_model", "read_suite", "scorecard", "tournament"]


class _CallablePackage(types.ModuleType):
    """The package, callable as :func:`.run.tournament`."""

    def __call__(self, *args: Any, **kwargs: Any) -> TournamentResult:
        return tournament(*args, **kwargs)


sys.modules[__name__].__class__ = _CallablePackage
