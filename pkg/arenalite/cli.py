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
from .load import load_csv
from .report import METHODS, parse_formats, write_outputs, write_report, write_table

LOAD_OPTIONS = ("model", "dataset", "metric", "score", "seed", "norm_ref_low", "norm_ref_high",
                "drop_incomplete")
"""load_df's options the CLI passes on (no condition_col: one run analyses one condition)."""
CONFIG_OPTIONS = LOAD_OPTIONS + ("metric_direction", "metric_type_bounds")
"""What a --config file may set: the load options and two that have no flag."""
COLUMN_OPTIONS = ("model", "dataset", "metric", "score", "seed")
FLAGS = {
    **{option: f"--{option}-col" for option in COLUMN_OPTIONS},
    "norm_ref_low": "--norm-ref-low", "norm_ref_high": "--norm-ref-high",
    "drop_incomplete": "--drop-incomplete", "n_bootstrap": "--n-bootstrap",
    "random_state": "--random-state", "candidate": "--candidate", "reference": "--reference",
    "margin": "--margin", "n_repeats": "--n-repeats", "n_folds": "--n-folds",
    "test_fraction": "--test-fraction",
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
        p.add_argument("--config", help="JSON or flat YAML file with load_df options under "
                                        "their Python names (default: none)")
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
        p.add_argument("--n-bootstrap", type=_count, default=1000, metavar="N",
                       help="bootstrap replicates for the IQM, Elo and leaderboard intervals "
                            "(default: 1000)")
        p.add_argument("--random-state", type=_count, default=0, metavar="SEED",
                       help="seed of the bootstrap and Bayesian samplers (default: 0)")
        p.add_argument("--format", dest="formats", type=_formats, default=("png",),
                       metavar="png,svg,pdf",
                       help="figure formats, comma-separated; PNGs at 150 dpi (default: png)")
        return p

    table_command("report", "every method that applies, plus report.html")
    table_command("rank", "aggregate, Elo and improvability ranks side by side (= compare)")
    for name, (_, text) in METHODS.items():
        table_command(name, text)
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


def _load(args: argparse.Namespace) -> Benchmark:
    if not Path(args.csv).is_file():
        raise FileNotFoundError(f"results file {args.csv!r} not found")
    if args.config and not Path(args.config).is_file():
        raise FileNotFoundError(f"config file {args.config!r} (--config) not found")
    options: dict[str, Any] = read_config(args.config) if args.config else {}
    for key in LOAD_OPTIONS:
        value = getattr(args, key, None)
        if value is not None:
            options[key] = value
    for key in ("norm_ref_low", "norm_ref_high"):
        if isinstance(options.get(key), str):
            options[key] = _scalar_or_name(options[key])
    unknown = sorted(set(options) - set(CONFIG_OPTIONS))
    if unknown:
        raise ValueError(f"unknown load option(s) {unknown!r} in {args.config}; known: "
                         f"{sorted(CONFIG_OPTIONS)!r}")
    return load_csv(args.csv, **options)


def _run_method(benchmark: Benchmark, name: str, args: argparse.Namespace) -> Any:
    method: Callable[..., Any] = getattr(benchmark, METHODS[name][0])
    if name in ("leaderboard", "iqm", "elo"):
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


def _show_warning(message: Any, category: type[Warning], *_: Any, **__: Any) -> None:
    """Warnings as one ``arenalite: warning:`` line, with CLI flags for keyword names."""
    _log(f"arenalite: warning: {flag_message(str(message))}")


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
                           source=args.csv))
        return 0
    if args.command == "gate":
        result = benchmark.gate(args.candidate, args.reference, margin=args.margin)
        name = "gate"
    else:
        name = "compare" if args.command == "rank" else args.command
        result = _run_method(benchmark, name, args)
    paths, _ = write_outputs(result, name, out, args.formats)
    print(result.table.to_string(index=False))
    _log("wrote " + ", ".join(str(p) for p in paths))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: exit status 0, or 2 with ``arenalite: error: ...`` for a user mistake."""
    args = build_parser().parse_args(argv)
    with warnings.catch_warnings():
        warnings.simplefilter("default")
        warnings.showwarning = _show_warning
        try:
            return run_command(args)
        except USER_ERRORS as error:
            if args.debug:
                raise
            _log(f"arenalite: error: {flag_message(str(error))}")
            return 2


if __name__ == "__main__":
    raise SystemExit(main())
