"""arenalite: honest model rankings across benchmark suites, in the browser or in CPython.

Data flows one way: load (:func:`load_df`) → normalize → method
(:mod:`arenalite.rankings`, :mod:`arenalite.stats`) → result (:mod:`arenalite.results`)
→ plot (:mod:`arenalite.plots`). ``import arenalite`` itself imports nothing heavy: the
public names and the submodules load on first use (PEP 562), so that
``from arenalite import browser`` works in a browser kernel that has no numpy yet and
pandas, scipy and matplotlib are paid for only when used. Where they are missing, the first
name that needs them raises ``arenalite.browser.NumericPackagesMissing`` with the fix.
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
from typing import Any

__version__ = "0.1.0"

#: public name → the submodule that defines it (a submodule itself when they are equal)
_PUBLIC = {
    "Benchmark": "benchmark",
    "BenchmarkGroup": "benchmark",
    "aggregate_ranking": "rankings.aggregate",
    "elo_gap": "rankings.elo",
    "elo_rule_of_thumb": "rankings.elo",
    "elo_win_probability": "rankings.elo",
    "get_metric": "registry",
    "iqm_ranking": "rankings.iqm",
    "load_csv": "load",
    "load_df": "load",
    "metrics": "metrics",
    "register_metric": "registry",
    "splits": "splits",
    "tournament": "tournament",
    "Suite": "tournament",
}
__all__ = sorted(_PUBLIC)


def _is_submodule(name: str) -> bool:
    return not name.startswith("_") and importlib.util.find_spec(f"{__name__}.{name}") is not None


def _import(submodule: str) -> Any:
    """``arenalite.<submodule>``; a missing numpy, pandas, matplotlib or scipy raises
    :class:`arenalite.browser.NumericPackagesMissing` saying where they come from and how
    to get them (in a browser kernel, the site's message), not a bare ModuleNotFoundError.
    The clear error stands alone (``from None``): a chained traceback would show the bare
    ``No module named 'numpy'`` first, and a user reads the first error."""
    try:
        return importlib.import_module(f".{submodule}", __name__)
    except ModuleNotFoundError as error:
        from .browser import numeric_missing

        clear = numeric_missing(error)
        if clear is None:
            raise
        raise clear from None


def __getattr__(name: str) -> Any:
    """A public name or a submodule (``arenalite.datasets``), imported on first use."""
    if name in _PUBLIC:
        module = _import(_PUBLIC[name])
        value = module if _PUBLIC[name] == name else getattr(module, name)
    elif _is_submodule(name):
        value = _import(name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    submodules = {m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_")}
    dunders = {n for n in globals() if n.startswith("__")}
    return sorted({*dunders, *_PUBLIC, *submodules})
