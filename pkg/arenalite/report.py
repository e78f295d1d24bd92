"""The files the command line writes: CSV tables, figures, and one self-contained HTML report.

CSV cells that start a text with ``=``, ``+``, ``-`` or ``@`` get a leading ``'`` so a
spreadsheet shows them as text instead of running them as formulas (numbers are
untouched). Figures are written in every requested format; PNGs at :data:`DPI`. The
report opens with a short summary of the data and of each method's verdict, then one
section per method: its figure (embedded), its table with names left-aligned and
numbers at a readable precision, long tables cut with a link to the full CSV.
"""

from __future__ import annotations

import base64
import html
import io
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from .benchmark import Benchmark
    from .results import Result

METHODS: dict[str, tuple[str, str]] = {
    "leaderboard": ("leaderboard", "Leaderboard (TabArena's table; Elo with dataset-bootstrap "
                                   "95 % bars)"),
    "aggregate": ("aggregate_ranking", "Aggregate ranking (trimmed mean of normalized scores)"),
    "iqm": ("iqm_ranking", "Interquartile mean with dataset-bootstrap 95 % CI"),
    "elo": ("elo_ranking", "Bradley-Terry Elo with bootstrap CI"),
    "improvability": ("improvability_ranking", "Improvability (TabArena), lower is better"),
    "compare": ("compare_rankings", "Ranks by method, side by side"),
    "frequentist": ("frequentist_comparison", "Friedman + Nemenyi critical differences"),
    "bayesian": ("bayesian_comparison", "Bayesian signed-rank test, all pairs"),
    "profiles": ("performance_profiles", "Performance profiles (Dolan & Moré)"),
}
"""Subcommand name → (Benchmark method, section title), in report order."""

FORMATS = ("png", "svg", "pdf")
DPI = 150
MAX_ROWS = 40
"""Tables longer than this show their first rows in the report and link to the CSV."""
FORMULA_START = ("=", "+", "-", "@")

STYLE = """
body{font-family:system-ui,sans-serif;max-width:1000px;margin:2em auto;padding:0 1em;
color:#222;line-height:1.45}
h1{font-size:1.6em}h2{margin-top:2em;border-bottom:1px solid #ddd;padding-bottom:.2em}
table{border-collapse:collapse;margin:.8em 0;font-size:.92em;display:block;max-width:100%;
overflow-x:auto}
th,td{border:1px solid #d6d6d6;padding:3px 9px}th{background:#f3f3f3}
.text{text-align:left;white-space:nowrap}.num{text-align:right;font-variant-numeric:tabular-nums}
img{max-width:100%;height:auto}.note{color:#555;font-size:.92em}
nav a{margin-right:.9em}
"""


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


def save_figure(figure: Any, stem: Path, formats: Sequence[str],
                png: bytes | None = None) -> list[Path]:
    """Save ``figure`` as ``stem.<format>`` for each format; PNGs at :data:`DPI`. ``png``, the
    figure already rendered by :func:`png_bytes`, is written as it is instead of drawn again."""
    paths = []
    for fmt in formats:
        path = stem.with_suffix(f".{fmt}")
        if fmt == "png" and png is not None:
            path.write_bytes(png)
        else:
            figure.savefig(path, dpi=DPI, format=fmt)
        paths.append(path)
    return paths


def png_bytes(figure: Any) -> bytes:
    """``figure`` rendered as PNG at :data:`DPI`."""
    buffer = io.BytesIO()
    figure.savefig(buffer, dpi=DPI, format="png")
    return buffer.getvalue()


def parse_formats(text: str) -> tuple[str, ...]:
    """``"png,svg"`` → ``("png", "svg")``; ValueError for an unknown or empty list."""
    formats = tuple(dict.fromkeys(part.strip().lower() for part in text.split(",") if part.strip()))
    unknown = [f for f in formats if f not in FORMATS]
    if unknown or not formats:
        raise ValueError(f"unknown figure format(s) {unknown or [text]!r}; choose from "
                         f"{', '.join(FORMATS)} (comma-separated)")
    return formats


def write_outputs(result: Result, name: str, out: Path, formats: Sequence[str], *,
                  embed: bool = False, style: str = "arenalite") -> tuple[list[Path], str]:
    """Write ``name.csv`` and the figure files; return the paths and, with ``embed``, the
    figures as HTML ``<img>`` ("" otherwise or without a figure). Each PNG is drawn once,
    for its file and the page. A leaderboard's CSV is written in ``style`` ("tabarena":
    TabArena's names and order), and its Pareto figure (``name_pareto``) joins when the
    results carry inference times."""
    csv = out / f"{name}.csv"
    paths = [result.to_csv(csv, style=style) if style != "arenalite" and hasattr(result, "to_csv")
             else write_table(result.table, csv)]
    figures = []
    try:
        figures.append((name, result.plot()))
    except NotImplementedError:
        return paths, ""
    if has_pareto(result):
        figures.append((f"{name}_pareto", result.plot_pareto()))
    images = []
    for stem, figure in figures:
        png = png_bytes(figure) if embed or "png" in formats else None
        paths += save_figure(figure, out / stem, formats, png)
        images.append(figure_html(figure, stem, png) if embed else "")
    return paths, "".join(images)


def has_pareto(result: Result) -> bool:
    """Whether ``result`` is a leaderboard whose results carry inference times."""
    return hasattr(result, "plot_pareto") and any(
        c.startswith(("time_infer", "median_time_infer")) for c in result.table.columns)


# ---- HTML ------------------------------------------------------------------------------
def _is_number(values: pd.Series) -> bool:
    """Whether a column holds numbers (booleans are text here): formatted and right-aligned."""
    return (pd.api.types.is_numeric_dtype(values.dtype)
            and not pd.api.types.is_bool_dtype(values.dtype))


def format_column(values: pd.Series) -> list[str]:
    """Numbers at a precision fitting the column's size; round-off zeros print as 0."""
    if not _is_number(values):
        return ["" if pd.isna(v) else str(v) for v in values]
    if pd.api.types.is_integer_dtype(values.dtype):
        return [str(v) for v in values]
    numbers = values.to_numpy(dtype=float)
    finite = np.abs(numbers[np.isfinite(numbers)])
    scale = float(finite.max()) if finite.size else 0.0
    decimals = 1 if scale >= 100 else 3 if scale >= 1 else 4
    zero = np.abs(numbers) <= 1e-12 * max(scale, 1.0)
    return [_format_number(v, decimals, z) for v, z in zip(numbers, zero, strict=True)]


def _format_number(value: float, decimals: int, is_zero: bool) -> str:
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
    classes = ["num" if _is_number(shown[c]) else "text" for c in shown.columns]
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


def report_table(name: str, result: Result) -> tuple[pd.DataFrame, str, str]:
    """The table a section shows, a sentence introducing it, and its CSV file's name."""
    if name == "profiles":
        aup = result.aup.rename("AUP").reset_index()
        return aup, (f"Area under each model's profile (log10 τ axis, higher is better). The "
                     f"exact step function ({len(result.table)} rows) is "
                     f'<a href="{name}.csv">{name}.csv</a>.'), f"{name}_aup.csv"
    if name in ("elo", "leaderboard"):
        return result.table, elo_anchor(result.params), f"{name}.csv"
    return result.table, "", f"{name}.csv"


def elo_anchor(params: dict[str, Any]) -> str:
    """Which model anchors the Elo scale, in one sentence (the result's ``params``)."""
    model = params.get("calibration_model")
    if model is None:
        return "Elo scale: centred on 1000 (no calibration model)."
    return (f"Elo scale: anchored on <b>{html.escape(str(model))}</b> at "
            f"{float(params.get('calibration_elo', 1000.0)):g}.")


def figure_html(figure: Any, name: str, png: bytes | None = None) -> str:
    """The figure as an embedded PNG (the page stays one self-contained file), shown at its
    size in inches (120 CSS px each) so its text stays near the page's at any figure size;
    ``png`` is the figure already rendered by :func:`png_bytes`."""
    encoded = base64.b64encode(png_bytes(figure) if png is None else png).decode("ascii")
    width = round(figure.get_figwidth() * 120)
    return (f'<img alt="{html.escape(name)} figure" width="{width}" '
            f'src="data:image/png;base64,{encoded}">')


def summary_html(benchmark: Benchmark, results: dict[str, Result],
                 skipped: dict[str, str]) -> str:
    """What was compared, and each method's best model, in a few lines."""
    metrics = benchmark.metrics_.value_counts()
    seeds = ""
    if benchmark.has_seeds:
        per_dataset = benchmark.long_.groupby("dataset")["seed"].nunique()
        seeds = (f", {per_dataset.min()}–{per_dataset.max()} seeds per dataset"
                 if per_dataset.min() != per_dataset.max()
                 else f", {per_dataset.min()} seeds per dataset")
    items = [f"<b>{len(benchmark.models_)} models</b> on <b>{len(benchmark.datasets_)} "
             f"datasets</b>{seeds}; metrics: "
             + ", ".join(f"{html.escape(str(m))} ({n})" for m, n in metrics.items()) + "."]
    best = _verdicts(results)
    if best:
        agree = (" All of them put the same model first." if len({m for _, m, _ in best}) == 1
                 else " The methods disagree on the best model; see the rank comparison.")
        items.append("Best model by method: " + "; ".join(
            f"{label}: <b>{html.escape(model)}</b> ({value})" for label, model, value in best)
            + "." + agree)
    if "frequentist" in results:
        freq = results["frequentist"]
        p = getattr(freq, "friedman_p", None)
        if p is not None:
            word = "differ" if p < freq.params.get("alpha", 0.05) else "do not differ clearly"
            items.append(f"Friedman test: the models {word} (p = "
                         f"{html.escape(_format_number(float(p), 4, p == 0))}).")
    if skipped:
        items.append("Not applicable here: " + ", ".join(html.escape(n) for n in skipped) + ".")
    lis = "".join(f"<li>{item}</li>" for item in items)
    datasets = ("<details><summary>Datasets and their normalization</summary>"
                f"{html_table(dataset_table(benchmark), max_rows=len(benchmark.datasets_))}"
                "</details>")
    return f'<section id="summary"><h2>Summary</h2><ul>{lis}</ul>{datasets}</section>'


def dataset_table(benchmark: Benchmark) -> pd.DataFrame:
    """Per dataset: metric, direction, raw score range, and the raw scores that map to 0 and 1."""
    raw = benchmark.raw_
    return pd.DataFrame({
        "dataset": benchmark.datasets_,
        "metric": benchmark.metrics_.loc[benchmark.datasets_].to_numpy(),
        "better": np.where(benchmark.directions_.loc[benchmark.datasets_] == "max", "higher",
                           "lower"),
        "lowest score": raw.min(axis=0).to_numpy(),
        "highest score": raw.max(axis=0).to_numpy(),
        "normalized 0 at": benchmark.norm_low_.loc[benchmark.datasets_].to_numpy(),
        "normalized 1 at": benchmark.norm_high_.loc[benchmark.datasets_].to_numpy(),
    })


def _verdicts(results: dict[str, Result]) -> list[tuple[str, str, str]]:
    """(method label, best model, its value as text) for the rankings that are present."""
    out = []
    for name, label, column, fmt in (("aggregate", "aggregate", "score", "{:.3f}"),
                                     ("iqm", "IQM", "IQM", "{:.3f}"),
                                     ("elo", "Elo", "ELO", "{:.0f}"),
                                     ("improvability", "improvability", "improvability",
                                      "{:.1f} %")):
        if name in results:
            top = results[name].table.iloc[0]
            out.append((label, str(top["model"]), fmt.format(float(top[column]))))
    if "profiles" in results:
        aup = results["profiles"].aup
        out.append(("AUP", str(aup.index[0]), f"{float(aup.iloc[0]):.3f}"))
    return out


#: the report's last line: where to time the in-context models (the site's WebGPU page; the
#: relative link works for the site's report/report.html, the text says where it lives otherwise)
WEBGPU_LINK = ('<p class="note">Time the in-context models on your own GPU with the site\'s '
               '<a href="../webgpu/index.html">WebGPU timing page</a> (<code>webgpu/index.html'
               '</code> of the site that <code>python build.py serve</code> builds); its results '
               'CSV loads with <code>arenalite.load_csv(path, seed="seed")</code>.</p>')


def write_report(benchmark: Benchmark, out: Path, run: Callable[[str], Result], *,
                 formats: Sequence[str] = ("png",), log: Callable[[str], None] = print,
                 source: str | None = None, style: str = "arenalite") -> Path:
    """Run every applicable method with ``run(name)``; write CSVs, figures and report.html
    (the leaderboard's CSV in ``style``, see :func:`write_outputs`).

    A method that does not apply to these data (``ValueError``, e.g. profiles on
    negative scores) gets a short "not applicable" section instead.
    """
    results: dict[str, Result] = {}
    skipped: dict[str, str] = {}
    sections = []
    for name in applicable(benchmark):
        title = METHODS[name][1]
        anchor = f'<h2 id="{name}">{html.escape(title)}</h2>'
        try:
            result = run(name)
        except ValueError as error:
            log(f"{name}: skipped ({error})")
            skipped[name] = str(error)
            sections.append(f"{anchor}<p><em>Not applicable: {html.escape(str(error))}</em></p>")
            continue
        results[name] = result
        paths, image = write_outputs(result, name, out, formats, embed=True, style=style)
        log(f"{name}: wrote " + ", ".join(p.name for p in paths))
        table, intro, csv_name = report_table(name, result)
        if table is not result.table:
            write_table(table, out / csv_name)
        intro_html = f'<p class="note">{intro}</p>' if intro else ""
        sections.append(f"{anchor}{image}{intro_html}{html_table(table, csv_name)}")
    size = f"{len(benchmark.models_)} models × {len(benchmark.datasets_)} datasets"
    title = f"arenalite report: {size}"
    origin = f'<p class="note">Results: {html.escape(source)}</p>' if source else ""
    nav = "<nav>" + "".join(f'<a href="#{n}">{html.escape(n)}</a>' for n in applicable(benchmark)
                            ) + "</nav>"
    page = (f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}"
            f"</title><style>{STYLE}</style></head><body><h1>{html.escape(title)}</h1>{origin}"
            f"{summary_html(benchmark, results, skipped)}{nav}{''.join(sections)}{WEBGPU_LINK}"
            "</body></html>")
    path = out / "report.html"
    path.write_text(page, encoding="utf-8")
    return path


def applicable(benchmark: Benchmark) -> list[str]:
    """METHODS in report order (the IQM's dataset bootstrap needs no seeds)."""
    return list(METHODS)
