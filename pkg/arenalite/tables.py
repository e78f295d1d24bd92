"""Tables as text: formula-safe CSV files and HTML tables, names left and numbers right.

A Result shows its table in a notebook with :func:`html_table`; the report writes its CSV
files with :func:`write_table` and its sortable tables with :func:`interactive_table`.
This module renders tables only and imports nothing of arenalite, so results, methods
and the report all depend on it and it on none of them.

CSV cells that start a text with ``=``, ``+``, ``-`` or ``@`` get a leading ``'`` so a
spreadsheet shows them as text instead of running them as formulas (numbers are
untouched).
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

MAX_ROWS = 40
"""Tables longer than this show their first rows in a notebook (:func:`html_table`)."""
TALL = 100
"""Tables with more rows than this scroll in a box of their own (the pair tables)."""
FORMULA_START = ("=", "+", "-", "@")


def csv_safe(table: pd.DataFrame) -> pd.DataFrame:
    """A copy where text cells starting with = + - @ are prefixed with ``'``."""
    out = table.copy()
    for column in out.columns:
        values = out[column]
        if pd.api.types.is_numeric_dtype(values.dtype):  # numbers and booleans
            continue
        text = values.map(lambda v: isinstance(v, str) and v.startswith(FORMULA_START))
        out[column] = values.where(~text.astype(bool), "'" + values.astype(str))
    return out


def write_table(table: pd.DataFrame, path: Path) -> Path:
    """Write ``table`` as CSV (formula-safe text cells, no index)."""
    csv_safe(table).to_csv(path, index=False)
    return path


def is_number(values: pd.Series) -> bool:
    """Whether a column holds numbers (booleans are text here): formatted and right-aligned."""
    return (pd.api.types.is_numeric_dtype(values.dtype)
            and not pd.api.types.is_bool_dtype(values.dtype))


def format_column(values: pd.Series) -> list[str]:
    """Numbers at a precision fitting the column's size; round-off zeros print as 0; whole
    or half counts (1, 2.5) without trailing zeros."""
    if not is_number(values):
        return ["" if pd.isna(v) else str(v) for v in values]
    if pd.api.types.is_integer_dtype(values.dtype):
        return [str(v) for v in values]
    numbers = values.to_numpy(dtype=float)
    finite = np.abs(numbers[np.isfinite(numbers)])
    scale = float(finite.max()) if finite.size else 0.0
    decimals = 1 if scale >= 100 else 3 if scale >= 1 else 4
    halves = numbers[np.isfinite(numbers)] * 2.0
    if halves.size and scale >= 1 and np.array_equal(halves, np.round(halves)):
        decimals = 0 if np.array_equal(halves / 2.0, np.round(halves / 2.0)) else 1  # counts
    zero = np.abs(numbers) <= 1e-12 * max(scale, 1.0)
    return [format_number(v, decimals, z) for v, z in zip(numbers, zero, strict=True)]


def format_number(value: float, decimals: int, is_zero: bool) -> str:
    if np.isnan(value):
        return "–"
    if np.isinf(value):
        return "∞" if value > 0 else "−∞"
    if is_zero:
        return "0"
    if abs(value) < 0.5 * 10.0 ** -decimals:  # small but real, e.g. a p-value
        return f"{value:.2g}"
    return f"{value:.{decimals}f}"


def html_table(table: pd.DataFrame, csv_name: str | None = None, max_rows: int = MAX_ROWS) -> str:
    """``table`` as HTML: text left, numbers right; over ``max_rows`` rows, the first ones and
    a pointer to the full table (the CSV file ``csv_name``, or else ``.table``)."""
    shown = table.head(max_rows)
    classes = ["num" if is_number(shown[c]) else "text" for c in shown.columns]
    # the class styles the report; the inline alignment also holds in a notebook
    attrs = [f'class="{k}" style="text-align:{"right" if k == "num" else "left"}"'
             for k in classes]
    head = "".join(f"<th {a}>{html.escape(str(c))}</th>"
                   for c, a in zip(shown.columns, attrs, strict=True))
    cells = [format_column(shown[c]) for c in shown.columns]
    rows = "".join(
        "<tr>" + "".join(f"<td {a}>{html.escape(column[i])}</td>"
                         for column, a in zip(cells, attrs, strict=True)) + "</tr>"
        for i in range(len(shown)))
    note = ""
    if len(table) > len(shown):
        where = (f'<a href="{html.escape(csv_name)}">{html.escape(csv_name)}</a>' if csv_name
                 else "<code>.table</code>")
        note = (f'<p class="note">First {len(shown)} of {len(table)} rows; the full table is '
                f"{where}.</p>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>{note}"


def significant(values: pd.Series, digits: int = 4) -> list[str]:
    """Each number to ``digits`` significant digits, for columns that mix scales (a
    dataset table's AUCs next to RMSEs); NaN as –."""
    return ["–" if not np.isfinite(v) else f"{v:.{digits}g}"
            for v in values.to_numpy(dtype=float)]


def _value(v: Any) -> str:
    """A number as the page's sort key (``data-v``): JavaScript's Number() reads it."""
    v = float(v)
    return "NaN" if np.isnan(v) else ("Infinity" if v > 0 else "-Infinity") if np.isinf(v) \
        else repr(v)


def interactive_table(table: pd.DataFrame, *, per_value: Sequence[str] = (),
                      cells: dict[str, list[str]] | None = None,
                      marks: dict[str, np.ndarray] | None = None,
                      titles: dict[str, str] | None = None, csv_name: str | None = None) -> str:
    """``table`` whole, as the report shows it: every row, sortable by a click on a header and
    filtered by the words typed above it (the report's script), inside a box that scrolls with
    the header row and the first column held in place.

    Numbers are right-aligned at their column's precision (:func:`format_column`; the
    columns in ``per_value`` to four significant digits each) and sort by value.
    ``cells`` gives a column's cells as ready HTML (its numbers still sort by value),
    ``marks`` a boolean mask per column of cells drawn as the best, ``titles`` a tooltip
    per header; ``csv_name`` is named under the table as the same table in a file.
    """
    cells, marks, titles = cells or {}, marks or {}, titles or {}
    head, columns = [], []
    for name in table.columns:
        values = table[name]
        number = is_number(values)
        kind = "n" if number else "t"
        tip = f' title="{html.escape(titles[name])}"' if name in titles else ""
        label = html.escape(str(name)).replace("_", "_<wbr>")  # long headers wrap at _
        head.append(f'<th class="{kind}"{tip}>{label}</th>')
        shown = (cells[name] if name in cells else
                 [html.escape(t) for t in (significant(values) if name in per_value
                                           else format_column(values))])
        keys = [f' data-v="{_value(v)}"' for v in values] if number else [""] * len(values)
        best = marks.get(name, np.zeros(len(values), dtype=bool))
        columns.append([f'<td class="{kind}{" best" if b else ""}"{k}>{c}</td>'
                        for c, k, b in zip(shown, keys, best, strict=True)])
    rows = "".join("<tr>" + "".join(row) + "</tr>" for row in zip(*columns, strict=True))
    file = (f' · the same table: <a href="{html.escape(csv_name)}">{html.escape(csv_name)}</a>'
            if csv_name else "")
    return ('<div class="tbl"><div class="tools"><input type="search" '
            'placeholder="Filter rows: type words" aria-label="filter the rows">'
            f'<span class="count">{len(table)} rows</span><span>click a header to sort{file}'
            f'</span></div><div class="scroll{" tall" if len(table) > TALL else ""}">'
            "<table><thead><tr>" + "".join(head)
            + f"</tr></thead><tbody>{rows}</tbody></table></div></div>")
