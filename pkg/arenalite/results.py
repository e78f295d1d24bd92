"""Result objects: thin holders of a ``.table`` DataFrame that can draw themselves.

Every ranking and test returns a :class:`Result` (or a subclass adding extras).
Computation happens before a Result is built; a Result only stores and draws. A table
that is only a re-layout of what the Result already holds (the performance profiles'
M × T long form) may be left to :meth:`Result._build_table`, called on first access.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from .tables import html_table


class Result:
    """A method's output table, its parameters, and a ``plot()`` that returns a Figure."""

    method: str = "result"

    def __init__(self, table: pd.DataFrame | None, **params: Any) -> None:
        self._table = None if table is None else table.reset_index(drop=True)
        self.params = params

    @property
    def table(self) -> pd.DataFrame:
        """The method's output table (built by :meth:`_build_table` on first access when
        the Result was given none)."""
        if self._table is None:
            try:
                built = self._build_table()
            except AttributeError as error:  # not to be taken for a missing ``table``
                raise RuntimeError(f"{type(self).__name__} could not build its table: "
                                   f"{error}") from error
            self._table = built.reset_index(drop=True)
        return self._table

    @table.setter
    def table(self, table: pd.DataFrame) -> None:
        self._table = table

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Unpickle, also a Result pickled when ``table`` was a plain attribute."""
        if "table" in state:
            state["_table"] = state.pop("table")
        self.__dict__.update(state)

    def _build_table(self) -> pd.DataFrame:
        """The table of a Result built with ``table=None``, from what it holds."""
        raise NotImplementedError(f"{type(self).__name__} was given no table")

    def __getattr__(self, name: str) -> Any:
        """Parameters read as attributes (``result.reference``, ``result.alpha``), as in evaluma."""
        params = self.__dict__.get("params", {})
        if name in params:
            return params[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def plot(self, ax: Any = None, figsize: tuple[float, float] | None = None,
             title: str | None = None) -> Any:
        """Draw this result; subclasses override. Returns a matplotlib Figure."""
        raise NotImplementedError(f"{type(self).__name__} has no plot")

    def __repr__(self) -> str:
        return f"{type(self).__name__}\n{self.table.to_string(index=False)}"

    def _repr_html_(self) -> str:
        """The table as in the HTML report: names left, numbers right at a readable precision."""
        return f"<b>{type(self).__name__}</b>" + html_table(self.table)
