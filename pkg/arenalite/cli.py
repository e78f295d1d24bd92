"""Command line: run arenalite's methods on a results CSV, writing CSV tables and PNG figures.

``arenalite report results.csv --output out/`` runs every method that applies and
also writes one self-contained ``report.html``. Column options mirror :func:`load_df`;
``--config FILE`` reads the same options from a JSON file or a flat ``key: value``
YAML file (no YAML library needed for that subset). ``arenalite splits`` persists the
splits of bundled datasets and ``arenalite run`` runs in-context models on them,
writing the results table that the other commands read.
"""

from __future__ import annotations

import argparse
import base64
import html
import json
import sys
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from .benchmark import Benchmark
from .load import load_csv

METHODS: dict[str, tuple[str, str]] = {
    "aggregate": ("aggregate_ranking", "Aggregate ranking (trimmed mean of normalized scores)"),
    "iqm": ("iqm_ranking", "Interquartile mean with stratified bootstrap CI"),
    "elo": ("elo_ranking", "Bradley-Terry Elo with bootstrap CI"),
    "improvability": ("improvability_ranking", "Improvability (TabArena), lower is better"),
    "compare": ("compare_rankings", "Ranks by method, side by side"),
    "frequentist": ("frequentist_comparison", "Friedman + Nemenyi critical differences"),
    "bayesian": ("bayesian_comparison", "Bayesian signed-rank test, all pairs"),
    "profiles": ("performance_profiles", "Performance profiles (Dolan & Moré)"),
}  # in report order
LOAD_OPTIONS = ("model", "dataset", "metric", "score", "seed", "norm_ref_low", "norm_ref_high",
                "drop_incomplete", "condition_col")


def read_config(path: str | Path) -> dict[str, Any]:
    """Options from a JSON file or a flat ``key: value`` YAML file."""
    text = Path(path).read_text(encoding="utf-8")
    if str(path).endswith(".json"):
        data = json.loads(text)
        if not isinstance(data, dict):
            raise ValueError(f"config {path}: the top level must be an object, "
                             f"got {type(data).__name__}")
        return data
    data: dict[str, Any] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].rstrip()
        if not line.strip():
            continue
        if ":" not in line or line.startswith((" ", "\t", "-")):
            raise ValueError(f"config {path}, line {number}: only flat 'key: value' lines are "
                             f"supported, got {raw!r}")
        key, value = (part.strip() for part in line.split(":", 1))
        data[key] = _yaml_scalar(value)
    return data


def _yaml_scalar(value: str) -> Any:
    if value == "" or value in ("null", "~"):
        return None
    if value in ("true", "false"):
        return value == "true"
    if value[:1] in "'\"" and value[-1:] == value[:1]:
        return value[1:-1]
    if value[:1] in "[{":
        return json.loads(value)
    try:
        return float(value) if any(c in value for c in ".eE") else int(value)
    except ValueError:
        return value


def _scalar_or_name(value: str | None) -> Any:
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="arenalite", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)

    def table_command(name: str, help_text: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_text)
        p.add_argument("csv", help="long results table: one row per model, dataset[, seed]")
        p.add_argument("--output", "-o", default="arenalite-out", help="folder for CSV/PNG/HTML")
        p.add_argument("--config", help="JSON or flat YAML file with load options")
        for option in ("model", "dataset", "metric", "score", "seed", "condition_col"):
            p.add_argument(f"--{option.replace('_', '-')}", dest=option, default=None)
        p.add_argument("--norm-ref-low", default=None, help="number or model name")
        p.add_argument("--norm-ref-high", default=None, help="number or model name")
        p.add_argument("--drop-incomplete", action="store_true", default=None)
        p.add_argument("--n-bootstrap", type=int, default=1000)
        p.add_argument("--random-state", type=int, default=0)
        return p

    table_command("report", "every method that applies, plus report.html")
    table_command("rank", "aggregate, Elo and improvability ranks side by side (= compare)")
    for name, (_, text) in METHODS.items():
        table_command(name, text)
    splits = sub.add_parser("splits", help="persist the splits of bundled datasets as JSON")
    splits.add_argument("datasets", nargs="+", help="bundled dataset names")
    splits.add_argument("--output", "-o", default="arenalite-out")
    splits.add_argument("--n-repeats", type=int, default=None,
                        help="override the adaptive repeat count of SPEC §6")
    run = sub.add_parser("run", help="run in-context models on bundled datasets' splits")
    run.add_argument("datasets", nargs="+", help="bundled dataset names")
    run.add_argument("--model", action="append", required=True, dest="models",
                     help="NAME[:key=value,...], e.g. knn:k=15 (repeatable)")
    run.add_argument("--splits-dir", default=None,
                     help="read <dataset>.splits.json from here (default: make them)")
    run.add_argument("--workers", type=int, default=0,
                     help="processes in a ProcessPoolExecutor (0: in this process)")
    run.add_argument("--output", "-o", default="arenalite-out")
    gate = table_command("gate", "non-inferiority gate of candidates against a reference")
    gate.add_argument("--candidate", action="append", required=True)
    gate.add_argument("--reference", required=True)
    gate.add_argument("--margin", type=float, default=None)
    return parser


def _load(args: argparse.Namespace) -> Benchmark:
    options: dict[str, Any] = read_config(args.config) if args.config else {}
    for key in LOAD_OPTIONS:
        value = getattr(args, key, None)
        if value is not None:
            options[key] = value
    for key in ("norm_ref_low", "norm_ref_high"):
        if isinstance(options.get(key), str):
            options[key] = _scalar_or_name(options[key])
    unknown = sorted(set(options) - set(LOAD_OPTIONS) - {"metric_direction", "metric_type_bounds"})
    if unknown:
        raise ValueError(f"unknown load option(s) {unknown!r}; known: {sorted(LOAD_OPTIONS)!r}")
    benchmark = load_csv(args.csv, **options)
    if not isinstance(benchmark, Benchmark):
        raise ValueError("condition_col gives several benchmarks; run the CLI once per condition")
    return benchmark


def _run_method(benchmark: Benchmark, name: str, args: argparse.Namespace) -> Any:
    attr = METHODS[name][0]
    method: Callable[..., Any] = getattr(benchmark, attr)
    if name in ("iqm", "elo"):
        return method(n_bootstrap=args.n_bootstrap, random_state=args.random_state)
    if name == "bayesian":
        return method(random_state=args.random_state)
    return method()


def _write(result: Any, name: str, out: Path) -> tuple[Path, Path | None]:
    csv_path = out / f"{name}.csv"
    result.table.to_csv(csv_path, index=False)
    png_path: Path | None = out / f"{name}.png"
    try:
        figure = result.plot()
    except NotImplementedError:
        png_path = None
    else:
        figure.savefig(png_path, dpi=120)
    return csv_path, png_path


def _applicable(benchmark: Benchmark) -> list[str]:
    """METHODS in order; IQM only with seeds."""
    return [name for name in METHODS if name != "iqm" or benchmark.has_seeds]


def write_report(benchmark: Benchmark, args: argparse.Namespace, out: Path,
                 log: Callable[[str], None]) -> Path:
    """Run every applicable method; write CSVs, PNGs and one self-contained report.html."""
    sections = []
    for name in _applicable(benchmark):
        try:
            result = _run_method(benchmark, name, args)
        except ValueError as error:
            log(f"{name}: skipped ({error})")
            sections.append(f"<h2>{html.escape(METHODS[name][1])}</h2>"
                            f"<p><em>Not applicable: {html.escape(str(error))}</em></p>")
            continue
        csv_path, png_path = _write(result, name, out)
        log(f"{name}: wrote {csv_path.name}" + (f", {png_path.name}" if png_path else ""))
        image = ""
        if png_path is not None:
            encoded = base64.b64encode(png_path.read_bytes()).decode("ascii")
            image = f'<img alt="{name} plot" src="data:image/png;base64,{encoded}">'
        sections.append(f"<h2>{html.escape(METHODS[name][1])}</h2>{image}"
                        f"{result.table.to_html(index=False, float_format=lambda v: f'{v:.4g}')}")
    size = f"{len(benchmark.models_)} models × {len(benchmark.datasets_)} datasets"
    title = f"arenalite report: {size}"
    page = (f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
            "<style>body{font-family:system-ui,sans-serif;max-width:960px;margin:2em auto;"
            "padding:0 1em}table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;"
            "padding:2px 8px;text-align:right}img{max-width:100%}</style></head><body>"
            f"<h1>{html.escape(title)}</h1>{''.join(sections)}</body></html>")
    path = out / "report.html"
    path.write_text(page, encoding="utf-8")
    return path


def parse_model(text: str) -> dict[str, Any]:
    """``"knn:k=15,label=knn-15"`` → ``{"name": "knn", "k": 15, "label": "knn-15"}``."""
    name, _, options = text.partition(":")
    model: dict[str, Any] = {"name": name.strip()}
    for item in filter(None, (part.strip() for part in options.split(","))):
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ValueError(f"model option {item!r} in {text!r} must look like key=value")
        model[key.strip()] = _yaml_scalar(value.strip())
    return model


def _split_path(folder: Path, dataset: str) -> Path:
    return folder / f"{dataset}.splits.json"


def write_splits(names: Sequence[str], out: Path, n_repeats: int | None) -> list[Path]:
    """Persist the SPEC §6 splits of bundled datasets as ``<name>.splits.json``."""
    from . import datasets, splits

    paths = []
    for name in names:
        data = datasets.load(name)
        persisted = splits.make_splits(data.n_rows, data.task, y=data.y, dataset=name,
                                       n_repeats=n_repeats)
        paths.append(splits.save(persisted, _split_path(out, name)))
    return paths


def run_models(args: argparse.Namespace, out: Path) -> tuple[Path, Path]:
    """Run the models on the datasets' splits; write results.csv and summary.csv."""
    from concurrent.futures import ProcessPoolExecutor

    from . import datasets, runner, splits

    if args.workers < 0:
        raise ValueError(f"--workers must be 0 or more, got {args.workers}")
    data = {name: datasets.load(name) for name in args.datasets}
    if args.splits_dir:
        persisted = {name: splits.load(_split_path(Path(args.splits_dir), name)) for name in data}
    else:
        persisted = {name: splits.make_splits(d.n_rows, d.task, y=d.y, dataset=name)
                     for name, d in data.items()}
    models = [parse_model(text) for text in args.models]
    if args.workers:
        with ProcessPoolExecutor(args.workers) as pool:
            results = runner.run(data, persisted, models, executor=pool, progress=True)
    else:
        results = runner.run(data, persisted, models, progress=True)
    results_path, summary_path = out / "results.csv", out / "summary.csv"
    results.to_csv(results_path, index=False)
    runner.summarize(results).to_csv(summary_path, index=False)
    return results_path, summary_path


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    out = Path(args.output)
    out.mkdir(parents=True, exist_ok=True)

    def log(message: str) -> None:
        print(message, file=sys.stderr)

    if args.command == "splits":
        for path in write_splits(args.datasets, out, args.n_repeats):
            print(path)
        return 0
    if args.command == "run":
        for path in run_models(args, out):
            print(path)
        return 0
    with warnings.catch_warnings():
        warnings.simplefilter("default")
        benchmark = _load(args)
        log(f"loaded {benchmark!r}")
        if args.command == "report":
            path = write_report(benchmark, args, out, log)
            print(path)
            return 0
        if args.command == "gate":
            result = benchmark.gate(args.candidate, args.reference, margin=args.margin)
            name = "gate"
        else:
            name = "compare" if args.command == "rank" else args.command
            result = _run_method(benchmark, name, args)
        csv_path, png_path = _write(result, name, out)
        print(result.table.to_string(index=False))
        log(f"wrote {csv_path}" + (f" and {png_path}" if png_path else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
