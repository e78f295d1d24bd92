"""Result objects: thin holders of a ``.table`` DataFrame that can draw themselves.

Every ranking and test returns a :class:`Result` (or a subclass adding extras).
Computation happens before a Result is built; a Result only stores and draws.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from .tables import html_table


class Result:
    """A method's output table, its parameters, and a ``plot()`` that returns a Figure."""

    method: str = "result"

    def __init__(self, table: pd.DataFrame, **params: Any) -> None:
        self.table = table.reset_index(drop=True)
        self.params = params

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
