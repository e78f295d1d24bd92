"""The files the command line writes: CSV tables, figures, and one self-contained HTML report.

CSV files are formula-safe (:func:`arenalite.tables.write_table`). Figures are written in
every requested format; PNGs at :data:`DPI`, PDFs with TrueType (Type 42) fonts and SVGs
with their text as text. The report opens with a short summary of the data and of each
method's verdict, then the leaderboard, a per-dataset view and one section per method of
the registry (:func:`arenalite.methods.reported`, in its order): its figure (embedded; a
figure wider than the page is shown whole in a scrolling box), and its full table,
sortable by any column and filterable by a small script inside the file (no network),
names left-aligned and numbers at a readable precision; pair tables come ordered by their
evidence.
"""

from __future__ import annotations

import base64
import html
import inspect
import io
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .methods import reported
from .tables import format_column, format_number, interactive_table, is_number, write_table

if TYPE_CHECKING:
    from .benchmark import Benchmark
    from .results import Result

FORMATS = ("png", "svg", "pdf")
DPI = 150
FONTS = {"pdf.fonttype": 42, "ps.fonttype": 42, "svg.fonttype": "none"}
"""Figure files embed TrueType fonts (Type 3 is refused by some venues); SVG text stays text."""
PAGE_PX = 1180
"""Figures wider than this (CSS px) get a horizontally scrolling box of their own."""

STYLE = """
body{font-family:system-ui,sans-serif;max-width:1200px;margin:2em auto;padding:0 1em;
color:#222;line-height:1.45}
h1{font-size:1.6em}h2{margin-top:2em;border-bottom:1px solid #ddd;padding-bottom:.2em}
table{border-collapse:collapse;font-size:.84em}
th,td{border:1px solid #d6d6d6;padding:2px 5px}
th{background:#f3f3f3;position:sticky;top:0;z-index:1;vertical-align:bottom;
min-width:3em}th.t,th.n{white-space:normal}
.text,.t{text-align:left;white-space:nowrap}
.num,.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.tbl{margin:.8em 0}.tools{display:flex;gap:1em;align-items:center;margin:.3em 0;
font-size:.9em;color:#555}.tools input{padding:2px 6px;min-width:16em}
.scroll{overflow:auto;border:1px solid #ccc;display:inline-block;max-width:100%}
.scroll.tall{max-height:36em}
.scroll table td:first-child,.scroll table th:first-child{position:sticky;left:0;
background:#fff}.scroll table th:first-child{background:#f3f3f3;z-index:2}
th[data-sort]{cursor:pointer}th[data-sort]:hover{background:#e4e4e4}
th[data-sort="asc"]::after{content:" \\25B2";font-size:.7em}
th[data-sort="desc"]::after{content:" \\25BC";font-size:.7em}
td.best{background:#dcebf7;font-weight:600}td sub{color:#666;font-size:.75em;margin-left:.2em}
img{max-width:100%;height:auto}.wide{overflow-x:auto;max-width:100%}.wide img{max-width:none}
.note{color:#555;font-size:.92em}nav a{margin-right:.9em}
"""

SCRIPT = """
document.querySelectorAll("div.tbl").forEach((box) => {
  const table = box.querySelector("table"), body = table.tBodies[0];
  const rows = [...body.rows], input = box.querySelector("input"),
    count = box.querySelector(".count");
  const show = () => {
    const words = input.value.trim().toLowerCase().split(/\\s+/).filter(Boolean);
    let shown = 0;
    for (const row of rows) {
      const text = row.textContent.toLowerCase();
      row.hidden = !words.every((w) => text.includes(w));
      shown += row.hidden ? 0 : 1;
    }
    count.textContent = words.length ? `${shown} of ${rows.length} rows` : `${rows.length} rows`;
  };
  const key = (row, k) => {
    const c = row.cells[k];
    return c.dataset.v === undefined ? c.textContent : Number(c.dataset.v);
  };
  [...table.tHead.rows[0].cells].forEach((th, k) => {
    const sort = () => {
      const dir = th.dataset.sort === "asc" ? -1 : 1;
      for (const other of th.parentNode.cells) other.dataset.sort = "";
      th.dataset.sort = dir > 0 ? "asc" : "desc";
      rows.sort((a, b) => {
        const x = key(a, k), y = key(b, k);
        if (typeof x === "number") {
          if (Number.isNaN(x) || Number.isNaN(y)) return Number.isNaN(x) - Number.isNaN(y);
          return dir * (x - y);
        }
        return dir * x.localeCompare(y, undefined, { numeric: true });
      });
      body.append(...rows);
    };
    th.dataset.sort = "";
    th.tabIndex = 0;
    th.title = "sort by this column (click again to reverse)";
    th.addEventListener("click", sort);
    th.addEventListener("keydown", (e) => { if (e.key === "Enter") sort(); });
  });
  input.addEventListener("input", show);
  show();
});
"""
"""Sorting (click a header; numbers by value, text naturally, NaN last) and filtering (every
word typed must occur in the row) of the report's tables: vanilla JavaScript, no network."""


def save_figure(figure: Any, stem: Path, formats: Sequence[str],
                png: bytes | None = None) -> list[Path]:
    """Save ``figure`` as ``stem.<format>`` for each format; PNGs at :data:`DPI`. ``png``, the
    figure already rendered by :func:`png_bytes`, is written as it is instead of drawn again."""
    import matplotlib

    paths = []
    for fmt in formats:
        path = stem.with_suffix(f".{fmt}")
        if fmt == "png" and png is not None:
            path.write_bytes(png)
        else:
            with matplotlib.rc_context(FONTS):
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
                  embed: bool = False, table: pd.DataFrame | None = None,
                  plot: Callable[[], Any] | None = None,
                  style: str = "arenalite") -> tuple[list[Path], str]:
    """Write ``name.csv`` (``table``, by default the result's) and the figure files (drawn
    by ``plot``, by default ``result.plot``); return the paths and, with ``embed``, the
    figures as HTML ("" otherwise or without a figure). Each PNG is drawn once, for its
    file and the page. A leaderboard's CSV is written in ``style`` ("tabarena": TabArena's
    names and order), and its Pareto figure (``name_pareto``) joins when the results carry
    inference times."""
    csv = out / f"{name}.csv"
    paths = [result.to_csv(csv, style=style) if style != "arenalite" and hasattr(result, "to_csv")
             else write_table(result.table if table is None else table, csv)]
    figures = []
    try:
        figures.append((name, (plot or result.plot)()))
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
def by_evidence(table: pd.DataFrame) -> pd.DataFrame:
    """A pair table ordered by the evidence of a difference, strongest first: adjusted (else
    raw) p-value ascending; or the larger posterior probability of either model being
    better, descending. Other tables come back unchanged."""
    if "p_a_better" in table.columns:
        strength = -np.maximum(table["p_a_better"].to_numpy(float),
                               table["p_b_better"].to_numpy(float))
    else:
        column = next((c for c in ("p_adjusted", "p_value") if c in table.columns), None)
        if column is None:
            return table
        strength = table[column].to_numpy(float)
    size = (-np.abs(table["rank_diff"].to_numpy(float)) if "rank_diff" in table.columns
            else np.zeros(len(table)))  # among equal p-values, the larger rank gap first
    return table.iloc[np.lexsort((size, strength))].reset_index(drop=True)


def aup_sentence(result: Result) -> str:
    """AUP in one sentence, with this suite's largest ratio."""
    largest = float(result.taus[-1])
    return (f"AUP, the area under a profile over log10 τ from 1 to the largest ratio of "
            f"these data (τ = {largest:.4g}), is the mean over datasets of log10(largest ratio "
            f"/ the model's ratio): higher is better, and a model best on every dataset gets "
            f"log10 {largest:.4g} = {np.log10(largest):.3f}.")


def evidence(table: pd.DataFrame) -> str | None:
    """What a pair table's evidence of a difference is ("p" or "probability"); None for
    other tables."""
    if "p_a_better" in table.columns:
        return "probability"
    return "p" if {"p_adjusted", "p_value"} & set(table.columns) else None


def report_table(name: str, result: Result
                 ) -> tuple[pd.DataFrame, str, str, pd.DataFrame]:
    """The table a section shows, a sentence introducing it, its CSV file's name, and the
    table ``name.csv`` holds (the shown one, except for profiles: their step points)."""
    if name == "profiles":
        from .rankings.profiles import step_points

        aup = result.aup.rename("AUP").reset_index()
        steps = step_points(result.taus, result.rho)
        return aup, (f"{aup_sentence(result)} Each profile's {len(steps):,} step points (τ, "
                     f'fraction) are <a href="{name}.csv">{name}.csv</a>.'), \
            f"{name}_aup.csv", steps
    if "calibration_model" in result.params:
        return result.table, elo_anchor(result.params), f"{name}.csv", result.table
    kind = evidence(result.table)
    if kind is not None:
        ordered = by_evidence(result.table)
        return (ordered, f"Every pair, strongest evidence of a difference first (by {kind}).",
                f"{name}.csv", ordered)
    return result.table, "", f"{name}.csv", result.table


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
    one wider than the page (:data:`PAGE_PX`) is shown whole in a box that scrolls sideways
    rather than shrunk until its labels cannot be read. ``png`` is the figure already
    rendered by :func:`png_bytes`."""
    encoded = base64.b64encode(png_bytes(figure) if png is None else png).decode("ascii")
    width = round(figure.get_figwidth() * 120)
    image = (f'<img alt="{html.escape(name)} figure" width="{width}" '
             f'src="data:image/png;base64,{encoded}">')
    return f'<div class="wide">{image}</div>' if width > PAGE_PX else image


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def summary_html(benchmark: Benchmark, results: dict[str, Result],
                 tables: dict[str, pd.DataFrame], skipped: dict[str, str]) -> str:
    """What was compared, and each method's best model (the first row of its section's
    table, ``tables``), in a few lines."""
    metrics = benchmark.metrics_.value_counts()
    seeds = ""
    if benchmark.has_seeds:
        per_dataset = benchmark.long_.groupby("dataset")["seed"].nunique()
        low, high = int(per_dataset.min()), int(per_dataset.max())
        seeds = (f", {low}–{high} seeds per dataset" if low != high
                 else f", {_plural(low, 'seed')} per dataset")
    items = [f"<b>{_plural(len(benchmark.models_), 'model')}</b> on "
             f"<b>{_plural(len(benchmark.datasets_), 'dataset')}</b>{seeds}; metrics: "
             + ", ".join(f"{html.escape(str(m))} ({n})" for m, n in metrics.items()) + "."]
    best = verdicts(tables)
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
                         f"{html.escape(format_number(float(p), 4, p == 0))}).")
    if skipped:
        items.append("Not applicable here: " + ", ".join(html.escape(n) for n in skipped) + ".")
    lis = "".join(f"<li>{item}</li>" for item in items)
    table = dataset_table(benchmark)
    datasets = ("<details><summary>Datasets and their normalization</summary>"
                + interactive_table(table, per_value=[c for c in table.columns
                                                      if is_number(table[c])])
                + "</details>")
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


def per_dataset(benchmark: Benchmark, order: Sequence[str]) -> pd.DataFrame:
    """Long table of every model's raw (seed-mean) score and rank on every dataset: model,
    dataset, metric, score, rank (1 = best, ties share the best rank), best; models in
    ``order`` (the leaderboard's), datasets sorted."""
    models = list(order) + [m for m in benchmark.models_ if m not in set(order)]
    datasets = list(benchmark.datasets_)
    raw = benchmark.raw_.loc[models, datasets]
    sign = np.where(benchmark.directions_.loc[datasets] == "max", -1.0, 1.0)
    ranks = (raw * sign).rank(axis=0, method="min")
    return pd.DataFrame({
        "model": np.repeat(np.asarray(models, dtype=object), len(datasets)),
        "dataset": np.tile(np.asarray(datasets, dtype=object), len(models)),
        "metric": np.tile(benchmark.metrics_.loc[datasets].to_numpy(dtype=object), len(models)),
        "score": raw.to_numpy(dtype=float).ravel(),
        "rank": ranks.to_numpy(dtype=float).ravel(),
        "best": (ranks.to_numpy() == 1.0).ravel(),
    })


def per_dataset_html(long: pd.DataFrame) -> str:
    """Models × datasets: each cell the score with the model's rank on that dataset in small
    type, the best per dataset marked; a mean-rank column; sorting a dataset column sorts
    by rank (best first), whatever the metric's direction."""
    models = list(pd.unique(long["model"]))
    datasets = list(pd.unique(long["dataset"]))
    score = long.pivot(index="model", columns="dataset", values="score").loc[models, datasets]
    rank = long.pivot(index="model", columns="dataset", values="rank").loc[models, datasets]
    metric = long.drop_duplicates("dataset").set_index("dataset")["metric"]
    wide = pd.DataFrame({"model": models, "mean rank": rank.mean(axis=1).to_numpy()})
    cells, marks, titles = {}, {}, {}
    for name in datasets:
        wide[name] = rank[name].to_numpy()
        texts = format_column(score[name])
        cells[name] = [f"{html.escape(t)}<sub>{r:g}</sub>"
                       for t, r in zip(texts, rank[name].to_numpy(), strict=True)]
        marks[name] = rank[name].to_numpy() == 1.0
        titles[name] = f"{metric[name]}: score, with the rank (1 = best) after it"
    return interactive_table(wide, cells=cells, marks=marks, titles=titles,
                             csv_name="per_dataset.csv")


def verdicts(tables: dict[str, pd.DataFrame]) -> list[tuple[str, str, str]]:
    """(method label, best model, its value as text) for the rankings among ``tables`` (a
    section's table by method name, best first) that the registry gives a label."""
    out = []
    for spec in reported():
        if spec.label is not None and spec.name in tables:
            top = tables[spec.name].iloc[0]
            out.append((spec.label, str(top["model"]), spec.fmt.format(float(top[spec.value]))))
    return out


def webgpu_html(link: str) -> str:
    """The report's last line, written only where a WebGPU timing page exists: ``link``
    (relative to report.html; the site's build passes ``../webgpu/index.html``)."""
    return (f'<p class="note">Time the in-context models on your own GPU with the '
            f'<a href="{html.escape(link)}">WebGPU timing page</a>; its results CSV loads with '
            '<code>arenalite.load_csv(path, seed="seed")</code>.</p>')


def _figure_for(result: Result, order: Sequence[str] | None) -> Callable[[], Any]:
    """How a section draws its figure: in leaderboard ``order`` when known and its plot
    takes an ``order`` (the heatmaps)."""
    if order is not None and "order" in inspect.signature(result.plot).parameters:
        return lambda: result.plot(order=list(order))
    return result.plot


def write_report(benchmark: Benchmark, out: Path, run: Callable[[str], Result], *,
                 formats: Sequence[str] = ("png",), log: Callable[[str], None] = print,
                 source: str | None = None, style: str = "arenalite",
                 webgpu_link: str | None = None, lead_html: str = "") -> Path:
    """Run every applicable method with ``run(name)``; write CSVs, figures and report.html
    (the leaderboard's CSV in ``style``, see :func:`write_outputs`). ``lead_html`` is a
    section shown before the methods' (the tournament's scorecard).

    A method that does not apply to these data (``ValueError``, e.g. profiles on
    negative scores) gets a short "not applicable" section instead. ``source`` names the
    results file (its name only is shown: the page may be shared); ``webgpu_link``, a
    WebGPU timing page next to the report, gets a last line linking it.
    """
    results: dict[str, Result] = {}
    tables: dict[str, pd.DataFrame] = {}
    skipped: dict[str, str] = {}
    sections = []
    order: list[str] | None = None
    for spec in reported():
        name, title = spec.name, spec.title
        anchor = f'<h2 id="{name}">{html.escape(title)}</h2>'
        try:
            result = run(name)
        except ValueError as error:
            log(f"{name}: skipped ({error})")
            skipped[name] = str(error)
            sections.append(f"{anchor}<p><em>Not applicable: {html.escape(str(error))}</em></p>")
            continue
        results[name] = result
        table, intro, csv_name, csv_table = report_table(name, result)
        tables[name] = table
        paths, image = write_outputs(result, name, out, formats, embed=True, table=csv_table,
                                     plot=_figure_for(result, order), style=style)
        if csv_name != f"{name}.csv":
            paths.append(write_table(table, out / csv_name))
        log(f"{name}: wrote " + ", ".join(p.name for p in paths))
        intro_html = f'<p class="note">{intro}</p>' if intro else ""
        sections.append(f"{anchor}{image}{intro_html}{interactive_table(table, csv_name=csv_name)}")
        if name == "leaderboard":
            order = [str(m) for m in result.table["model"]]
            long = per_dataset(benchmark, order)
            log("datasets: wrote " + write_table(long, out / "per_dataset.csv").name)
            sections.append(
                '<h2 id="datasets">Per dataset: scores and ranks</h2><p class="note">Each '
                "model's raw score (mean over seeds) on each dataset, its rank there in small "
                "type (1 = best, whichever way the metric points) and the best per dataset "
                "shaded; models in leaderboard order. Sorting a dataset's column sorts by "
                f"rank.</p>{per_dataset_html(long)}")
    size = f"{len(benchmark.models_)} models × {len(benchmark.datasets_)} datasets"
    title = f"arenalite report: {size}"
    origin = (f'<p class="note">Results: {html.escape(Path(source).name)}</p>' if source
              else "")
    names = [spec.name for spec in reported()]
    if "leaderboard" in results:
        names.insert(names.index("leaderboard") + 1, "datasets")
    nav = "<nav>" + "".join(f'<a href="#{n}">{html.escape(n)}</a>' for n in names) + "</nav>"
    last = webgpu_html(webgpu_link) if webgpu_link else ""
    page = (f"<!doctype html><html lang='en'><head><meta charset='utf-8'>"
            "<meta name='viewport' content='width=device-width, initial-scale=1'>"
            f"<title>{html.escape(title)}</title><style>{STYLE}</style></head><body>"
            f"<h1>{html.escape(title)}</h1>{origin}"
            f"{summary_html(benchmark, results, tables, skipped)}{nav}{lead_html}"
            f"{''.join(sections)}{last}"
            f"<script>{SCRIPT}</script></body></html>")
    path = out / "report.html"
    path.write_text(page, encoding="utf-8")
    return path

