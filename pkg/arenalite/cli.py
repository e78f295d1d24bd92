"""Command line: run arenalite's methods on a results CSV, writing CSV tables and figures.

``arenalite report results.csv --output out/`` runs every method that applies and
also writes one self-contained ``report.html``. Column options mirror :func:`load_df`
(``--model-col`` for its ``model=`` and so on); ``--config FILE`` reads the load
options under their :func:`load_df` names from a JSON file or a flat ``key: value``
YAML file (no YAML library needed for that subset). ``arenalite splits`` persists the
splits of bundled datasets and ``arenalite run`` runs in-context models on them,
writing the results table that the other commands read.

A user mistake (a missing file or column, a bad value, an unknown model) ends with
``arenalite: error: <message>`` on stderr and exit status 2, as argparse's own errors
do; the library's keyword names in the message are replaced by the flags the user
typed (:func:`flag_message`). ``--debug`` shows the traceback instead.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from .benchmark import Benchmark
from .formats import FORMATS as INPUT_FORMATS
from .load import LoadNote, load_csv
from .rankings.leaderboard import STYLES
from .registry import DIRECTIONS
from .report import METHODS, parse_formats, write_outputs, write_report, write_table

LOAD_OPTIONS = ("model", "dataset", "metric", "score", "seed", "norm_ref_low", "norm_ref_high",
                "drop_incomplete", "format")
"""load_df's options the CLI passes on (no condition_col: one run analyses one condition)."""
FILE_OPTIONS = ("encoding", "sep")
"""load_csv's options for reading the file."""
CONFIG_OPTIONS = LOAD_OPTIONS + FILE_OPTIONS + ("metric_direction", "metric_type_bounds")
"""What a --config file may set: the load and file options and two that have no flag."""
COLUMN_OPTIONS = ("model", "dataset", "metric", "score", "seed")
CALIBRATED = ("leaderboard", "elo")
"""The commands (and report sections) whose Elo scale --calibration-model anchors."""
FLAGS = {
    **{option: f"--{option}-col" for option in COLUMN_OPTIONS},
    "norm_ref_low": "--norm-ref-low", "norm_ref_high": "--norm-ref-high",
    "drop_incomplete": "--drop-incomplete", "n_bootstrap": "--n-bootstrap",
    "random_state": "--random-state", "candidate": "--candidate", "reference": "--reference",
    "margin": "--margin", "n_repeats": "--n-repeats", "n_folds": "--n-folds",
    "test_fraction": "--test-fraction", "calibration_model": "--calibration-model",
    "calibration_elo": "--calibration-elo", "encoding": "--encoding", "sep": "--sep",
}
"""Library keyword → the CLI flag that sets it (the one place messages are translated)."""
USER_ERRORS = (ValueError, TypeError, OSError)
"""What the library raises for bad input (and the OS for a missing or unreadable file)."""


def flag_message(message: str) -> str:
    """``message`` with the library's keyword names replaced by the CLI flags.

    ``seed=<column>`` → ``--seed-col <column>``; ``n_bootstrap`` → ``--n-bootstrap``;
    a message that starts with ``candidate``/``reference``/``margin`` names the flag.
    ``model='A'`` (a column name and a value) is left alone.
    """
    message = message.replace("drop_incomplete=True", FLAGS["drop_incomplete"])
    for keyword, flag in FLAGS.items():
        message = re.sub(rf"(?<![\w\-\[.]){keyword}=(?=[)\s]|$)", flag, message)
        message = re.sub(rf"(?<![\w\-\[.]){keyword}=(?=<)", flag + " ", message)
        if "_" in keyword:
            message = re.sub(rf"(?<![\w\-\[.]){keyword}(?![\w\[])", flag, message)
    return re.sub(r"^(candidate|reference|margin)\b", lambda m: FLAGS[m.group(1)], message)


def read_config(path: str | Path) -> dict[str, Any]:
    """Options from a JSON file or a YAML file of ``key: value`` lines.

    The YAML read is the subset a load configuration needs, no YAML library: plain
    scalars, quoted strings, JSON-style flow values (``[0.5, 1.0]``, ``{"rmse": [0, 1]}``)
    and one level of nesting, a key alone on its line followed by indented ``key: value``
    lines (a mapping) or ``- value`` lines (a list). An error names the file, line and column.
    """
    text = Path(path).read_text(encoding="utf-8")
    if str(path).endswith(".json"):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as error:
            raise ValueError(f"config {path}, line {error.lineno}, column {error.colno}: "
                             f"not valid JSON: {error.msg}") from error
        if not isinstance(data, dict):
            raise ValueError(f"config {path}: the top level must be an object, "
                             f"got {type(data).__name__}")
        return data
    return _read_yaml(text, str(path))


def _read_yaml(text: str, path: str) -> dict[str, Any]:
    data: dict[str, Any] = {}
    parent: str | None = None  # the key whose indented block is being read

    def fail(number: int, column: int, what: str) -> ValueError:
        return ValueError(f"config {path}, line {number}, column {column}: {what}")

    for number, raw in enumerate(text.splitlines(), start=1):
        line = _strip_comment(raw).rstrip()
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        body = line.strip()
        if raw[:indent].count("\t"):
            raise fail(number, 1, "indent with spaces, not tabs")
        if indent:
            if parent is None:
                raise fail(number, 1, "indented line without a key above it; top-level lines "
                                      "start in column 1")
            block = data[parent]
            if body.startswith("- ") or body == "-":
                if block is None:
                    block = data[parent] = []
                if not isinstance(block, list):
                    raise fail(number, indent + 1, f"'- item' inside the mapping {parent!r}")
                block.append(_yaml_value(body[1:].strip(), fail, number, indent + 3))
                continue
            if ":" not in body:
                raise fail(number, indent + 1, f"expected 'key: value', got {body!r}")
            if block is None:
                block = data[parent] = {}
            if not isinstance(block, dict):
                raise fail(number, indent + 1, f"'key: value' inside the list {parent!r}")
            key, value = (part.strip() for part in body.split(":", 1))
            column = indent + len(body) - len(body.split(":", 1)[1].lstrip()) + 1
            block[_yaml_key(key)] = _yaml_value(value, fail, number, column)
            continue
        if ":" not in body or body.startswith("-"):
            raise fail(number, 1, f"expected 'key: value', got {raw.strip()!r}")
        key, value = (part.strip() for part in body.split(":", 1))
        key = _yaml_key(key)
        if key in data:
            raise fail(number, 1, f"{key!r} is set twice")
        column = len(body) - len(body.split(":", 1)[1].lstrip()) + 1
        data[key] = _yaml_value(value, fail, number, column)
        parent = key if value == "" else None
    return data


def _strip_comment(line: str) -> str:
    """``line`` up to a ``#`` that starts a comment (not one inside quotes)."""
    quote = ""
    for i, char in enumerate(line):
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (i == 0 or line[i - 1] in " \t"):
            return line[:i]
    return line


def _yaml_key(key: str) -> str:
    return key[1:-1] if len(key) > 1 and key[0] in "'\"" and key[-1] == key[0] else key


def _yaml_value(value: str, fail: Callable[[int, int, str], ValueError], number: int,
                column: int) -> Any:
    """A scalar or flow value; a broken flow value names its line and column."""
    if value and value[0] in "[{":
        try:
            return json.loads(value)
        except json.JSONDecodeError as error:
            raise fail(number, column + error.colno - 1,
                       f"not a valid flow value ({error.msg}); write it as JSON, "
                       'e.g. {"roc_auc": [0.5, 1.0]}') from error
    return _yaml_scalar(value)


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


def _count(text: str) -> int:
    """argparse type: an integer ≥ 0."""
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {value}")
    return value


def _margin(text: str) -> float | dict[str, float]:
    """argparse type: one number for every metric, or ``metric=value`` pairs."""
    try:
        if "=" not in text:
            return float(text)
        pairs = (item.split("=", 1) for item in text.split(",") if item.strip())
        return {key.strip(): float(value) for key, value in pairs}
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"expected a number or metric=value pairs such as "
                                         f"rmse=2.5,log_loss=0.02, got {text!r}") from error


def _direction(text: str) -> dict[str, str]:
    """argparse type: ``METRIC=min|max`` pairs (a dataset name works too), comma-separated."""
    out = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        key, sep, value = (part.strip() for part in item.partition("="))
        if not sep or not key or value not in DIRECTIONS:
            raise argparse.ArgumentTypeError(f"expected METRIC=min or METRIC=max (a dataset "
                                             f"name also works), e.g. roc_auc=min, got {text!r}")
        out[key] = value
    return out


def _formats(text: str) -> tuple[str, ...]:
    try:
        return parse_formats(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from error


class _Parser(argparse.ArgumentParser):
    """argparse's errors in the same one-line form as ours (after the usage line)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        self.exit(2, f"arenalite: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="arenalite", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    common = _Parser(add_help=False)
    common.add_argument("--output", "-o", default="arenalite-out",
                        help="folder for the files written (default: arenalite-out)")
    common.add_argument("--debug", action="store_true",
                        help="show the Python traceback of an error (default: off)")

    def table_command(name: str, help_text: str) -> argparse.ArgumentParser:
        # argparse %-formats help (3.14+ checks it at once): "95 % bars" needs "%%"
        p = sub.add_parser(name, help=help_text.replace("%", "%%"), description=help_text,
                           parents=[common])
        p.add_argument("csv", help="long results table: one row per model, dataset[, seed]")
        p.add_argument("--config", help="JSON or YAML file (key: value lines, one level of "
                                        "nesting) with load_df options under their Python "
                                        "names (default: none)")
        p.add_argument("--encoding", default=None, metavar="NAME",
                       help="text encoding of the CSV file, e.g. latin-1 (default: utf-8)")
        p.add_argument("--sep", type=_separator, default=None, metavar="CHAR",
                       help="separator of the CSV file, \\t for a tab (default: a comma, or "
                            "the ; tab or | that a one-column header holds)")
        for option in COLUMN_OPTIONS:
            what = ("seed/split column; its rows are kept for IQM and Elo (default: none)"
                    if option == "seed" else f"{option} column (default: {option})")
            p.add_argument(FLAGS[option], dest=option, default=None, metavar="COLUMN",
                           help=f"name of the {what}")
        for end, extreme in (("low", "min"), ("high", "max")):
            p.add_argument(f"--norm-ref-{end}", default=None, metavar="VALUE",
                           help=f"{end} end of each dataset's raw score range, a number or a "
                                "model name; it normalizes to "
                                f"{'0' if end == 'low' else '1'} for higher-is-better metrics "
                                f"and to {'1' if end == 'low' else '0'} for errors (default: "
                                f"the observed per-dataset {extreme}, with a warning)")
        p.add_argument("--drop-incomplete", action="store_true", default=None,
                       help="drop models that miss a dataset (default: off, an error)")
        p.add_argument("--direction", action="append", type=_direction, default=None,
                       metavar="METRIC=min|max",
                       help="whether lower (min) or higher (max) scores of a metric (or a "
                            "dataset) are better, over the metric registry; repeatable or "
                            "comma-separated (default: the registry's direction)")
        p.add_argument("--input-format", dest="format", choices=INPUT_FORMATS, default=None,
                       help="the results' format: tabarena (TabArena's per-split results), "
                            "runners (arenalite's runners) or long (default: recognised by "
                            "the columns)")
        p.add_argument("--n-bootstrap", type=_count, default=1000, metavar="N",
                       help="bootstrap replicates for the IQM, Elo and leaderboard intervals "
                            "(default: 1000)")
        p.add_argument("--random-state", type=_count, default=0, metavar="SEED",
                       help="seed of the bootstrap and Bayesian samplers (default: 0)")
        p.add_argument("--format", dest="formats", type=_formats, default=("png",),
                       metavar="png,svg,pdf",
                       help="figure formats, comma-separated; PNGs at 150 dpi (default: png)")
        return p

    def calibration(p: argparse.ArgumentParser) -> None:
        p.add_argument("--calibration-model", default=None, metavar="MODEL",
                       help="model that anchors the Elo scale (default: none, ratings centred "
                            "on 1000)")
        p.add_argument("--calibration-elo", type=float, default=None, metavar="ELO",
                       help="the rating of --calibration-model (default: 1000)")

    def style(p: argparse.ArgumentParser) -> None:
        p.add_argument("--style", choices=STYLES, default="arenalite",
                       help="column names of leaderboard.csv: tabarena writes TabArena's names "
                            "in its order, method first (default: arenalite)")

    report = table_command("report", "every method that applies, plus report.html")
    calibration(report)
    style(report)
    report.add_argument("--webgpu-link", default=None, metavar="URL",
                        help="a WebGPU timing page to link at the end of report.html, relative "
                             "to it (the site's build passes ../webgpu/index.html; default: "
                             "no link)")
    table_command("rank", "aggregate, Elo and improvability ranks side by side (= compare)")
    for name, (_, text) in METHODS.items():
        p = table_command(name, text)
        if name in CALIBRATED:
            calibration(p)
        if name == "leaderboard":
            style(p)
    splits = sub.add_parser("splits", help="persist the splits of bundled datasets as JSON",
                            parents=[common])
    splits.add_argument("datasets", nargs="+", help="bundled dataset names")
    splits.add_argument("--kind", choices=["adaptive", "kfold", "random"], default="adaptive",
                        help="adaptive: SPEC §6's 3-fold rule; kfold: repeated stratified k-fold "
                             "(the gate protocol's 2 × 5); random: repeated stratified random "
                             "splits (default: adaptive)")
    splits.add_argument("--n-repeats", type=int, default=None,
                        help="repeats (default: adaptive for --kind adaptive, 2 for kfold, "
                             "10 for random)")
    splits.add_argument("--n-folds", type=int, default=None,
                        help="folds per repeat with --kind kfold (default 5)")
    splits.add_argument("--test-fraction", type=float, default=None,
                        help="share of rows tested per split with --kind random (default 0.3)")
    run = sub.add_parser("run", help="run in-context models on bundled datasets' splits",
                         parents=[common])
    run.add_argument("datasets", nargs="+", help="bundled dataset names")
    run.add_argument("--model", action="append", required=True, dest="models", metavar="SPEC",
                     help="model to run, NAME[:key=value,...], e.g. knn:k=15 (repeatable; "
                          "required, no default)")
    run.add_argument("--splits-dir", default=None,
                     help="read <dataset>.splits.json from here (default: make them)")
    run.add_argument("--workers", type=_count, default=0,
                     help="processes in a ProcessPoolExecutor (default: 0, in this process; "
                          "--runner python only)")
    run.add_argument("--runner", choices=["python", "webgpu"], default="python",
                     help="python: the numpy reference; webgpu: the WebGPU bridge under Node "
                          "(dawn.node), writing the timing page's CSV (default: python)")
    run.add_argument("--bridge-dir", default=None,
                     help="with --runner webgpu: the webgpu_bridge/ folder, npm ci run in it "
                          "(default: $ARENALITE_WEBGPU_BRIDGE, else the source checkout's)")
    run.add_argument("--vulkan-icd", default=None, metavar="JSON",
                     help="with --runner webgpu: the Vulkan driver manifest to use, e.g. "
                          "/usr/lib/chromium/vk_swiftshader_icd.json (SwiftShader, software; "
                          "default: the system's Vulkan drivers)")
    gate = table_command("gate", "non-inferiority gate of candidates against a reference")
    gate.add_argument("--candidate", action="append", required=True, metavar="MODEL",
                      help="model to test (repeatable; required, no default)")
    gate.add_argument("--reference", required=True, metavar="MODEL",
                      help="model the candidates must not be worse than (required, no default)")
    gate.add_argument("--margin", type=_margin, default=None, metavar="MARGIN",
                      help="tolerated loss in the metrics' raw units: a number, or "
                           "metric=value pairs such as rmse=2.5,log_loss=0.02 (default: each "
                           "metric's documented default margin)")
    return parser


def _existing_file(path: str, what: str, flag: str = "") -> None:
    """FileNotFoundError unless ``path`` is a file; a directory is named as one."""
    if Path(path).is_dir():
        raise IsADirectoryError(f"{what} {path!r}{flag} is a directory, not a file")
    if not Path(path).is_file():
        raise FileNotFoundError(f"{what} {path!r}{flag} not found")


def _separator(text: str) -> str:
    """argparse type of --sep: one character; ``\\t`` or ``tab`` for a tab."""
    sep = "\t" if text in ("\\t", "tab") else text
    if len(sep) != 1:
        raise argparse.ArgumentTypeError(f"expected one character (or \\t for a tab), "
                                         f"got {text!r}")
    return sep


def _load(args: argparse.Namespace) -> Benchmark:
    if Path(args.csv).is_dir():
        inside = sorted(p.name for p in Path(args.csv).glob("*.csv"))[:5]
        holds = f" (it holds {', '.join(inside)})" if inside else ""
        raise IsADirectoryError(f"results file {args.csv!r} is a directory, not a CSV "
                                f"file{holds}")
    _existing_file(args.csv, "results file")
    if args.config:
        _existing_file(args.config, "config file", " (--config)")
    options: dict[str, Any] = read_config(args.config) if args.config else {}
    for key in LOAD_OPTIONS + FILE_OPTIONS:
        value = getattr(args, key, None)
        if value is not None:
            options[key] = value
    for key in ("norm_ref_low", "norm_ref_high"):
        if isinstance(options.get(key), str):
            options[key] = _scalar_or_name(options[key])
    if args.direction:
        given = options.get("metric_direction") or {}
        if not isinstance(given, dict):
            raise ValueError(f"metric_direction in {args.config} must be a mapping "
                             f"{{metric: 'min'|'max'}}, got {given!r}")
        options["metric_direction"] = {**given, **{k: v for pairs in args.direction
                                                   for k, v in pairs.items()}}
    unknown = sorted(set(options) - set(CONFIG_OPTIONS))
    if unknown:
        raise ValueError(f"unknown load option(s) {unknown!r} in {args.config}; known: "
                         f"{sorted(CONFIG_OPTIONS)!r}")
    return load_csv(args.csv, **options)


def _calibration(args: argparse.Namespace) -> dict[str, Any]:
    """The Elo anchor options given on the command line (none: ratings centred on 1000)."""
    model = getattr(args, "calibration_model", None)
    elo = getattr(args, "calibration_elo", None)
    if elo is not None and model is None:
        raise ValueError(f"--calibration-elo {elo:g} needs --calibration-model: the model that "
                         "sits at that rating")
    if model is None:
        return {}
    return {"calibration_model": model, "calibration_elo": 1000.0 if elo is None else elo}


def _run_method(benchmark: Benchmark, name: str, args: argparse.Namespace) -> Any:
    method: Callable[..., Any] = getattr(benchmark, METHODS[name][0])
    if name in CALIBRATED:
        return method(n_bootstrap=args.n_bootstrap, random_state=args.random_state,
                      **_calibration(args))
    if name == "iqm":
        return method(n_bootstrap=args.n_bootstrap, random_state=args.random_state)
    if name == "bayesian":
        return method(random_state=args.random_state)
    return method()


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


def write_splits(names: Sequence[str], out: Path, **options: Any) -> list[Path]:
    """Persist the splits of bundled datasets as ``<name>.splits.json``; ``options`` go to
    :func:`arenalite.splits.make_splits` (``kind``, ``n_repeats``, ``n_folds``,
    ``test_fraction``)."""
    from . import datasets, splits

    paths = []
    for name in names:
        data = datasets.load(name)
        persisted = splits.make_splits(data.n_rows, data.task, y=data.y, dataset=name,
                                       **options)
        paths.append(splits.save(persisted, _split_path(out, name)))
    return paths


def run_models(args: argparse.Namespace, out: Path) -> tuple[Path, Path]:
    """Run the models on the datasets' splits (numpy, or WebGPU under Node with
    ``--runner webgpu``); write results.csv and summary.csv."""
    from concurrent.futures import ProcessPoolExecutor

    from . import datasets, runner, splits

    data = {name: datasets.load(name) for name in args.datasets}
    if args.splits_dir:
        persisted = {name: splits.load(_split_path(Path(args.splits_dir), name)) for name in data}
    else:
        persisted = {name: splits.make_splits(d.n_rows, d.task, y=d.y, dataset=name)
                     for name, d in data.items()}
    models = [parse_model(text) for text in args.models]
    if args.runner == "webgpu":
        import pandas as pd

        from . import node_runner

        if args.workers:
            raise ValueError("--workers applies to --runner python only (the Node runner "
                             "runs on one GPU device)")
        results_path = node_runner.run_to_csv(data, persisted, models, out / "results.csv",
                                              bridge_dir=args.bridge_dir,
                                              vulkan_icd=args.vulkan_icd)
        return results_path, write_table(runner.summarize(pd.read_csv(results_path)),
                                         out / "summary.csv")
    if args.workers:
        with ProcessPoolExecutor(args.workers) as pool:
            results = runner.run(data, persisted, models, executor=pool, progress=True)
    else:
        results = runner.run(data, persisted, models, progress=True)
    return (write_table(results, out / "results.csv"),
            write_table(runner.summarize(results), out / "summary.csv"))


def _log(message: str) -> None:
    print(message, file=sys.stderr)


def warning_printer(log: Callable[[str], None] = _log) -> Callable[..., None]:
    """A ``warnings.showwarning`` that prints each warning as one ``arenalite: warning:``
    line (a :class:`LoadNote` as ``arenalite: note:``), with CLI flags for keyword names,
    and a text it has printed never again (two methods resampling the same data warn
    alike)."""
    seen: set[str] = set()

    def show(message: Any, category: type[Warning], *_: Any, **__: Any) -> None:
        text = flag_message(str(message))
        if text not in seen:
            seen.add(text)
            kind = "note" if issubclass(category, LoadNote) else "warning"
            log(f"arenalite: {kind}: {text}")

    return show


def run_command(args: argparse.Namespace) -> int:
    """Do what ``args`` ask; errors propagate (``main`` reports them)."""
    out = Path(args.output)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise OSError(f"cannot create the output folder {str(out)!r} (--output): "
                      f"{error.strerror}") from error
    if args.command == "splits":
        kind = None if args.kind == "adaptive" else args.kind
        for path in write_splits(args.datasets, out, kind=kind, n_repeats=args.n_repeats,
                                 n_folds=args.n_folds, test_fraction=args.test_fraction):
            print(path)
        return 0
    if args.command == "run":
        for path in run_models(args, out):
            print(path)
        return 0
    _calibration(args)  # a bad pair of flags fails before the data are read
    benchmark = _load(args)
    _log(f"loaded {benchmark!r}")
    if args.command == "report":
        def run(name: str) -> Any:
            """A method for the report; a method that does not apply says so in flags."""
            try:
                return _run_method(benchmark, name, args)
            except ValueError as error:
                raise ValueError(flag_message(str(error))) from error

        print(write_report(benchmark, out, run, formats=args.formats, log=_log,
                           source=args.csv, style=args.style,
                           webgpu_link=args.webgpu_link))
        return 0
    if args.command == "gate":
        result = benchmark.gate(args.candidate, args.reference, margin=args.margin)
        name = "gate"
    else:
        name = "compare" if args.command == "rank" else args.command
        result = _run_method(benchmark, name, args)
    paths, _ = write_outputs(result, name, out, args.formats,
                             style=getattr(args, "style", "arenalite"))
    print(result.table.to_string(index=False))
    _log("wrote " + ", ".join(str(p) for p in paths))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: exit status 0, or 2 with ``arenalite: error: ...`` for a user mistake."""
    args = build_parser().parse_args(argv)
    with warnings.catch_warnings():
        warnings.simplefilter("default")
        warnings.showwarning = warning_printer()
        try:
            return run_command(args)
        except USER_ERRORS as error:
            if args.debug:
                raise
            _log(f"arenalite: error: {flag_message(str(error))}")
            return 2


if __name__ == "__main__":
    raise SystemExit(main())
