"""Command line: run arenalite's methods on a results CSV, writing CSV tables and figures.

``arenalite report results.csv --output out/`` runs every method that applies and
also writes one self-contained ``report.html``. Column options mirror :func:`load_df`
(``--model-col`` for its ``model=`` and so on); ``--config FILE`` reads the load
options under their :func:`load_df` names from a JSON file or a flat ``key: value``
YAML file (no YAML library needed for that subset). ``arenalite splits`` persists the
splits of bundled datasets and ``arenalite run`` runs in-context models on them,
writing the results table that the other commands read. ``arenalite convert tabicl
CKPT -o OUT.safetensors`` turns a TabICL checkpoint into safetensors, without torch (every
model whose registry entry names a ``convert`` function: ``convert tabpfn`` for TabPFN v3).

A user mistake (a missing file or column, a bad value, an unknown model) ends with
``arenalite: error: <message>`` on stderr and exit status 2, as argparse's own errors
do; the library's keyword names in the message are replaced by the flags the user
typed (:func:`flag_message`). ``--debug`` shows the traceback instead.

The method subcommands and their flags come from the method registry
(:data:`arenalite.methods.METHODS`): each method is a subcommand, and it offers a flag
for each parameter its function takes (``--n-bootstrap`` only where the method
bootstraps, ``--confidence`` where it takes a confidence), so no flag is accepted and
ignored; a flag another method takes is refused with a line naming those that take it.
"""

from __future__ import annotations

import argparse
import functools
import inspect
import json
import re
import sys
import warnings
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from .benchmark import Benchmark
from .formats import FORMATS as INPUT_FORMATS
from .load import LoadNote, load_csv
from .methods import METHODS, MethodSpec, get, reported
from .models import registry as model_registry
from .rankings.leaderboard import STYLES
from .registry import DIRECTIONS
from .report import parse_formats, write_outputs, write_report
from .tables import write_table
from .tournament.entrants import parse_model  # noqa: F401 - NAME[:key=value,...], --model's

LOAD_OPTIONS = ("model", "dataset", "metric", "score", "seed", "norm_ref_low", "norm_ref_high",
                "drop_incomplete", "format", "task_metadata")
"""load_df's options the CLI passes on (no condition_col: one run analyses one condition)."""
FILE_OPTIONS = ("encoding", "sep")
"""load_csv's options for reading the file."""
CONFIG_OPTIONS = LOAD_OPTIONS + FILE_OPTIONS + ("metric_direction", "metric_type_bounds")
"""What a --config file may set: the load and file options and two that have no flag."""
COLUMN_OPTIONS = ("model", "dataset", "metric", "score", "seed")
LOAD_FLAGS = {
    **{option: f"--{option}-col" for option in COLUMN_OPTIONS},
    "norm_ref_low": "--norm-ref-low", "norm_ref_high": "--norm-ref-high",
    "drop_incomplete": "--drop-incomplete", "n_repeats": "--n-repeats", "n_folds": "--n-folds",
    "test_fraction": "--test-fraction", "encoding": "--encoding", "sep": "--sep",
    "task_metadata": "--task-metadata",
}
"""Load, file and splits keyword → the CLI flag that sets it; a method's parameters have
theirs from :func:`option_flag`."""
PARAM = "param."
"""Prefix of the argparse ``dest`` of a method parameter (kept apart from the load options)."""
USER_ERRORS = (ValueError, TypeError, OSError)
"""What the library raises for bad input (and the OS for a missing or unreadable file)."""


def option_flag(parameter: str) -> str:
    """The CLI flag of a method parameter: ``n_bootstrap`` → ``--n-bootstrap``."""
    return "--" + parameter.replace("_", "-")


@functools.cache
def flags() -> dict[str, str]:
    """Library keyword → the CLI flag that sets it (the one place messages are translated):
    the load options' and every registered method parameter's."""
    return {**LOAD_FLAGS, **{name: option_flag(name) for spec in METHODS
                             for name in spec.parameters}}


def flag_message(message: str) -> str:
    """``message`` with the library's keyword names replaced by the CLI flags.

    ``seed=<column>`` → ``--seed-col <column>``; ``n_bootstrap`` → ``--n-bootstrap``;
    a message that starts with ``candidate``/``reference``/``margin`` names the flag.
    ``model='A'`` (a column name and a value) is left alone.
    """
    known = flags()
    message = message.replace("drop_incomplete=True", known["drop_incomplete"])
    for keyword, flag in known.items():
        message = re.sub(rf"(?<![\w\-\[.]){keyword}=(?=[)\s]|$)", flag, message)
        message = re.sub(rf"(?<![\w\-\[.]){keyword}=(?=<)", flag + " ", message)
        if "_" in keyword:
            message = re.sub(rf"(?<![\w\-\[.]){keyword}(?![\w\[])", flag, message)
    return re.sub(r"^(candidate|reference|margin)\b", lambda m: known[m.group(1)], message)


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


def _share(text: str) -> float:
    """argparse type: a number strictly between 0 and 1."""
    value = float(text)
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"must be strictly between 0 and 1, got {text}")
    return value


OPTIONS: dict[str, dict[str, Any]] = {
    "n_bootstrap": {"type": _count, "metavar": "N", "default": 1000,
                    "help": "bootstrap replicates of the intervals; 0 gives the point estimates "
                            "where the method allows it"},
    "random_state": {"type": _count, "metavar": "SEED", "default": 0,
                     "help": "seed of the bootstrap and Monte Carlo draws"},
    "candidate": {"action": "append", "metavar": "MODEL",
                  "help": "model to test (repeatable)"},
    "reference": {"metavar": "MODEL"},
    "dummy": {"metavar": "MODEL"},
    "calibration_model": {"metavar": "MODEL",
                          "help": "model that anchors the Elo scale; none: ratings centred "
                                  "on 1000"},
    "calibration_elo": {"metavar": "ELO"},
    "margin": {"type": _margin, "metavar": "MARGIN",
               "help": "tolerated loss in the metrics' raw units: a number, or metric=value "
                       "pairs such as rmse=2.5,log_loss=0.02; none: each metric's documented "
                       "default margin"},
    "confidence": {"type": _share, "metavar": "LEVEL"},
}
"""argparse settings of the method parameters whose annotation and docstring do not say
enough: a CLI default (``n_bootstrap``, ``random_state``: the command line is reproducible
by default), a type, a metavar, a help text. Any other parameter of a simple type (int,
float, str, bool, or one of them or None) gets its flag from its signature alone."""
SIMPLE_TYPES = {"int": int, "float": float, "str": str, "bool": bool}


def simple_type(annotation: Any) -> type | None:
    """The one simple type (int, float, str, bool) of an annotation such as ``float | None``
    or ``str | dict[str, float] | None``, given as text; None if it has none or several."""
    text = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", "")
    found = [SIMPLE_TYPES[m.strip()] for m in text.split("|") if m.strip() in SIMPLE_TYPES]
    return found[0] if len(found) == 1 else None


def parameter_docs(function: Callable[..., Any]) -> dict[str, str]:
    """Each parameter's description in ``function``'s numpydoc "Parameters" section."""
    lines = (inspect.getdoc(function) or "").splitlines()
    if "Parameters" not in lines:
        return {}
    docs: dict[str, list[str]] = {}
    name = None
    for line in lines[lines.index("Parameters") + 2:]:
        if line and not line[0].isspace():
            if " : " not in line:
                break
            name = line.split(" : ")[0].strip()
            docs[name] = []
        elif name is not None and line.strip():
            docs[name].append(line.strip())
    return {key: " ".join(text) for key, text in docs.items()}


def _shown(value: Any) -> str:
    return ("none" if value is None else f"{value:g}" if isinstance(value, float)
            else str(value))


def _help_text(spec: MethodSpec, name: str) -> str:
    """A parameter's description from ``spec``'s docstring, for a flag's help: its own
    "(default …)" left out (the help adds the CLI's), ``parameter`` names as flags."""
    text = parameter_docs(spec.call).get(name, name.replace("_", " "))
    text = re.sub(r"\s*\(default\b[^)]*\)", "", text)
    text = re.sub(r"``(\w+)(=True)?``", lambda m: option_flag(m[1]) if m[1] in spec.parameters
                  else m[0], text)
    return text.replace("``", "").rstrip(".")


def method_options(specs: Sequence[MethodSpec]) -> dict[str, dict[str, Any]]:
    """The flags that ``specs`` take, by parameter name: argparse settings, from
    :data:`OPTIONS` and the parameters' signatures and docstrings. Several methods taking
    one parameter share its flag (the report); the help says which ones."""
    takers: dict[str, list[MethodSpec]] = {}
    for spec in specs:
        for name, parameter in spec.parameters.items():
            if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
                continue
            if name in OPTIONS or simple_type(parameter.annotation) is not None:
                takers.setdefault(name, []).append(spec)
    out = {}
    for name, using in takers.items():
        settings = dict(OPTIONS.get(name, {}))
        parameters = [spec.parameters[name] for spec in using]
        kind = settings.get("type") or simple_type(parameters[0].annotation)
        if kind is bool:
            settings["action"] = argparse.BooleanOptionalAction
        elif "action" not in settings:
            settings["type"] = kind or str
        required = len(specs) == 1 and parameters[0].default is inspect.Parameter.empty
        texts = {_help_text(spec, name) for spec in using}
        text = settings.get("help") or (texts.pop() if len(texts) == 1 else
                                        f"the {name} of each method below (see "
                                        "arenalite METHOD --help)")
        if required:
            default = "required, no default"
        elif "default" in settings:
            default = f"default: {_shown(settings['default'])}"
        elif len({repr(p.default) for p in parameters}) == 1:
            default = f"default: {_shown(parameters[0].default)}"
        else:
            default = "default: each method's own"
        used = f"; for {', '.join(s.name for s in using)}" if len(specs) > 1 else ""
        settings["help"] = f"{text} ({default}{used})".replace("%", "%%")
        settings["required"] = required
        settings.setdefault("default", None)
        if kind is not bool:  # BooleanOptionalAction takes no metavar on Python 3.14+
            settings.setdefault("metavar", name.upper())
        out[name] = settings
    return out


def add_method_options(parser: argparse.ArgumentParser, specs: Sequence[MethodSpec]) -> None:
    """One flag per parameter that ``specs`` take (:func:`method_options`)."""
    for name, settings in method_options(specs).items():
        parser.add_argument(option_flag(name), dest=PARAM + name, **settings)


def common_flags() -> argparse.ArgumentParser:
    """--output and --debug, shared by the commands that write files."""
    common = _Parser(add_help=False)
    common.add_argument("--output", "-o", default="arenalite-out",
                        help="folder for the files written (default: arenalite-out)")
    common.add_argument("--debug", action="store_true",
                        help="show the Python traceback of an error (default: off)")
    return common


def add_results_command(sub: Any, common: argparse.ArgumentParser, name: str, help_text: str,
                        specs: Sequence[MethodSpec]) -> argparse.ArgumentParser:
    """A command on a results CSV running ``specs``: the load options, the methods' flags."""
    # argparse %-formats help (3.14+ checks it at once): "95 % bars" needs "%%"
    p = sub.add_parser(name, help=help_text.replace("%", "%%"), description=help_text,
                       parents=[common])
    p.set_defaults(method=specs[0].name if len(specs) == 1 else None)
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
        p.add_argument(LOAD_FLAGS[option], dest=option, default=None, metavar="COLUMN",
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
    p.add_argument("--task-metadata", dest="task_metadata", default=None, metavar="FILE",
                   help="TabArena's task metadata CSV in either layout: one row per "
                        "split as the tabarena package ships it (joined by "
                        "tabarena_task_name; a task's rows are the mean over its splits "
                        "of num_instances_train / num_instances_test), or one row per "
                        "dataset (n_samples_train_per_fold / n_samples_test_per_fold, "
                        "joined by 'name', else 'dataset'); they are the rows of "
                        "time_train_s_per_1K and time_infer_s_per_1K = time x 1000 / rows "
                        "(default: the results' own columns of those "
                        "names, else n_train / n_test; none, no per-1K columns)")
    p.add_argument("--format", dest="formats", type=_formats, default=("png",),
                   metavar="png,svg,pdf",
                   help="figure formats, comma-separated; PNGs at 150 dpi (default: png)")
    add_method_options(p, specs)
    if any(hasattr(spec.result_type, "to_csv") for spec in specs):
        p.add_argument("--style", choices=STYLES, default="arenalite",
                       help="column names of leaderboard.csv: tabarena writes TabArena's "
                            "names in its order, method first (default: arenalite)")
    return p


def add_report_and_method_parsers(sub: Any, common: argparse.ArgumentParser) -> None:
    """``report`` and one command per registered method (and alias)."""
    report = add_results_command(sub, common, "report",
                                 "every method that applies, plus report.html", reported())
    report.add_argument("--webgpu-link", default=None, metavar="URL",
                        help="a WebGPU timing page to link at the end of report.html, relative "
                             "to it (the site's build passes ../webgpu/index.html; default: "
                             "no link)")
    for spec in METHODS:
        add_results_command(sub, common, spec.name, spec.title, [spec])
        for alias in spec.aliases:
            add_results_command(sub, common, alias, f"= {spec.name}: {spec.title}", [spec])


def table_flags_parser() -> argparse.ArgumentParser:
    """The table flags (--target, --task, roles) shared by splits, describe, run and
    tournament."""
    table_flags = _Parser(add_help=False)
    table_flags.add_argument("--target", default=None, metavar="COL",
                             help="the target column of a table file (required for a file; "
                                  "default: the bundled dataset's)")
    table_flags.add_argument("--task", choices=["binary", "multiclass", "regression"],
                             default=None, help="the task (default: inferred from the target)")
    table_flags.add_argument("--group-column", default=None, metavar="COL",
                             help="entity ids: grouped folds (default: none)")
    table_flags.add_argument("--time-column", default=None, metavar="COL",
                             help="times: temporal folds (default: none)")
    table_flags.add_argument("--leakage-columns", type=_column_list, default=(), metavar="A,B",
                             help="columns left out of the features (default: none)")
    table_flags.add_argument("--categorical", type=_column_list, default=(), metavar="A,B",
                             help="columns read as categorical, e.g. integer codes "
                                  "(default: text, category and bool columns)")
    return table_flags


def add_splits_parser(sub: Any, common: argparse.ArgumentParser,
                      table_flags: argparse.ArgumentParser) -> None:
    """``arenalite splits TABLE|SUITE ... -o DIR``."""
    splits = sub.add_parser("splits", help="persist the splits of bundled datasets or table "
                                           "files as JSON", parents=[common, table_flags])
    splits.add_argument("datasets", nargs="+", metavar="TABLE",
                        help="bundled dataset names, table files (.csv, .csv.gz, .tsv, "
                             ".parquet) or suite files (.toml, .json)")
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
    splits.add_argument("--gap", type=_gap, default=0, metavar="GAP",
                        help="temporal folds: leave out the training rows within GAP before "
                             "each test block, a number in the time column's units or a "
                             "duration such as 7D or 12h for dates (default: 0)")
    splits.add_argument("--group-labels", choices=["per_sample", "per_group"], default=None,
                        help="grouped folds: per_group when each group has one label (folds "
                             "stratified over the groups), per_sample otherwise (default: "
                             "per_sample)")


def add_describe_parser(sub: Any, table_flags: argparse.ArgumentParser) -> None:
    """``arenalite describe TABLE|SUITE ...``."""
    describe = sub.add_parser("describe", help="print what the table loader sees of a table",
                              parents=[table_flags])
    describe.add_argument("datasets", nargs="+", metavar="TABLE",
                          help="bundled dataset names, table files or suite files")
    describe.add_argument("--n-repeats", type=int, default=None,
                          help="repeats of the splits described (default: adaptive)")
    describe.add_argument("--debug", action="store_true",
                          help="show the Python traceback of an error (default: off)")


def add_run_parser(sub: Any, common: argparse.ArgumentParser,
                   table_flags: argparse.ArgumentParser) -> None:
    """``arenalite run TABLE|SUITE ... --model SPEC``."""
    run = sub.add_parser("run", help="run in-context models on bundled datasets' or table "
                                     "files' splits", parents=[common, table_flags])
    run.add_argument("datasets", nargs="+", metavar="TABLE",
                     help="bundled dataset names, table files or suite files")
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


def add_convert_parser(sub: Any) -> None:
    """``arenalite convert MODEL CKPT -o OUT.safetensors``."""
    convert = sub.add_parser("convert", help="convert a model checkpoint to safetensors "
                                             "(read without torch)",
                             description="convert a model checkpoint to safetensors, the "
                                         "config in its metadata (read without torch)")
    converters = model_registry.with_function("convert")
    convert.add_argument("model", choices=converters,
                         help="the checkpoint's model, one whose registry entry has a "
                              f"converter: {', '.join(converters)}")
    convert.add_argument("checkpoint", help="the checkpoint as the model's package saves it "
                                            "(e.g. a .ckpt, torch.save's zip), or a "
                                            ".safetensors")
    convert.add_argument("--output", "-o", required=True, metavar="OUT.safetensors",
                         help="the safetensors file to write (required, no default)")
    convert.add_argument("--debug", action="store_true",
                         help="show the Python traceback of an error (default: off)")


def build_parser() -> argparse.ArgumentParser:
    """The command line: one small function adds each command's parser."""
    parser = _Parser(prog="arenalite", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    common, table_flags = common_flags(), table_flags_parser()
    add_report_and_method_parsers(sub, common)
    add_splits_parser(sub, common, table_flags)
    add_describe_parser(sub, table_flags)
    add_run_parser(sub, common, table_flags)
    add_tournament_parser(sub, common, table_flags)
    add_convert_parser(sub)
    parser.commands = dict(sub.choices)  # type: ignore[attr-defined]
    return parser


def add_tournament_parser(sub: Any, common: argparse.ArgumentParser,
                          table_flags: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """``arenalite tournament SUITE --model SPEC ... -o OUT``."""
    p = sub.add_parser("tournament", help="every model on every split of every table of a "
                                          "suite, and the scorecard (resumable)",
                       description="the tournament methodology's pipeline: the suite's splits, "
                                   "every model on every split, the scorecard; run the same "
                                   "command again to finish a stopped run",
                       parents=[common, table_flags])
    p.add_argument("suite", metavar="SUITE",
                   help="a suite file (.toml, or .json with the same keys), or one table: a "
                        "bundled name or a table file with the table flags")
    p.add_argument("--model", action="append", required=True, dest="models", metavar="SPEC",
                   help="model to play, NAME[:key=value,...], e.g. knn:k=15 (repeatable; "
                        "required, no default)")
    p.add_argument("--workers", type=_count, default=0,
                   help="processes in a process pool; a worker that dies fails its task only "
                        "(default: 0, in this process)")
    p.add_argument("--dask", default=None, metavar="ADDRESS",
                   help="run the tasks on the Dask scheduler at ADDRESS, e.g. "
                        "tcp://10.0.0.5:8786 (needs arenalite[dask]; default: no Dask)")
    p.add_argument("--runner", choices=["python", "webgpu"], default="python",
                   help="python: the numpy reference; webgpu: the WebGPU bridge under Node "
                        "(default: python)")
    p.add_argument("--bridge-dir", default=None,
                   help="with --runner webgpu: the webgpu_bridge/ folder, npm ci run in it "
                        "(default: $ARENALITE_WEBGPU_BRIDGE, else the source checkout's)")
    p.add_argument("--vulkan-icd", default=None, metavar="JSON",
                   help="with --runner webgpu: the Vulkan driver manifest to use (default: the "
                        "system's Vulkan drivers)")
    p.add_argument("--n-bootstrap", type=_count, default=1000, metavar="N",
                   help="split-bootstrap replicates of the Elo interval (default: 1000)")
    p.add_argument("--retry-failed", action="store_true",
                   help="run the recorded failures again (default: off, they stay failed)")
    p.add_argument("--impute", default=None, metavar="MODEL",
                   help="fill a failed cell with this model's score on the same split, as "
                        "TabArena does; counted under 'imputed' (default: none)")
    p.add_argument("--quiet", action="store_true",
                   help="no progress bar and no notes; the scorecard is still printed "
                        "(default: off)")
    return p


def output_folder(out: Path) -> Path:
    """Create the output folder (--output), naming it in the error."""
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise OSError(f"cannot create the output folder {str(out)!r} (--output): "
                      f"{error.strerror}") from error
    return out


def run_tournament(args: argparse.Namespace) -> int:
    """``arenalite tournament``: the pipeline; exit status 0 when every task ran, 1 when
    one failed."""
    from .tournament import run as tournament_run
    from .tournament.suite import Suite, is_suite_file, read_suite

    if is_suite_file(args.suite):
        refuse_suite_flags(args.suite, args)
        suite = read_suite(args.suite)
    else:
        suite = Suite(Path(args.suite).name, tuple(table_entries([args.suite], args)))
        suite.check()
    if args.dask and args.workers:
        raise ValueError("give --workers (a local process pool) or --dask (a Dask cluster), "
                         "not both")
    client = None
    if args.dask:
        try:
            from distributed import Client
        except ImportError:
            raise ValueError("--dask needs Dask: pip install 'arenalite[dask]'") from None
        try:
            client = Client(args.dask, timeout=30)
        except OSError as error:
            raise OSError(f"cannot reach the Dask scheduler at {args.dask!r} (--dask): "
                          f"{error}") from None
    quiet = args.quiet
    try:
        result = tournament_run.tournament(
            suite, args.models, out=args.output, executor=client, workers=args.workers,
            runner=args.runner, n_bootstrap=args.n_bootstrap, retry_failed=args.retry_failed,
            impute=args.impute, progress=False if quiet else None,
            bridge_dir=args.bridge_dir, vulkan_icd=args.vulkan_icd,
            log=(lambda text: None) if quiet else _log)
    finally:
        if client is not None:
            client.close()
    shown = result.scorecard.round({"elo": 1, "elo_low": 1, "elo_high": 1, "elo_margin": 1,
                                    "win_rate": 3})
    print(shown.to_string(index=False))
    if not quiet:
        _log(f"wrote {Path(args.output) / 'scorecard.csv'} and the rest of {args.output}")
        if len(result.failures):
            _log(f"arenalite: {len(result.failures)} task(s) failed: see "
                 f"{Path(args.output) / 'failures.csv'} (--retry-failed runs them again)")
    return result.exit_status


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
    if getattr(args, "task_metadata", None):
        _existing_file(args.task_metadata, "task metadata file", " (--task-metadata)")
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


def _calibration(args: argparse.Namespace) -> None:
    """ValueError for --calibration-elo without the model that sits at that rating."""
    model = getattr(args, PARAM + "calibration_model", None)
    elo = getattr(args, PARAM + "calibration_elo", None)
    if elo is not None and model is None:
        raise ValueError(f"--calibration-elo {elo:g} needs --calibration-model: the model that "
                         "sits at that rating")


def _run_method(benchmark: Benchmark, spec: MethodSpec, args: argparse.Namespace) -> Any:
    """``spec``'s method with the options given on the command line (a parameter whose
    flag was not given keeps the function's default)."""
    given = {name: getattr(args, PARAM + name) for name in spec.parameters
             if getattr(args, PARAM + name, None) is not None}
    return getattr(benchmark, spec.function)(**given)


def unknown_option(command: str, extra: Iterable[str]) -> str:
    """The one-line error for arguments ``command`` does not take: a flag of another
    method names the methods that take it."""
    extra = list(extra)
    flag = next((e.split("=", 1)[0] for e in extra if e.startswith("--")), None)
    takers = [spec for spec in METHODS if flag is not None
              and any(option_flag(name) == flag for name in method_options([spec]))]
    if not takers:
        return f"unrecognized arguments: {' '.join(extra)}"
    keyword = flag[2:].replace("-", "_")
    names = ", ".join(["report", *(s.name for s in takers)] if any(s.report for s in takers)
                      else [s.name for s in takers])
    try:
        spec = get(command)
    except ValueError:  # report, splits, run
        why = f"it runs no method that takes {keyword}"
    else:
        why = (f"{spec.name} does not bootstrap" if keyword == "n_bootstrap"
               else f"{spec.function} takes no {keyword}")
    return f"{command} has no option {flag} ({why}); {flag} is an option of: {names}"


def _split_path(folder: Path, dataset: str) -> Path:
    return folder / f"{dataset}.splits.json"


def _column_list(text: str) -> tuple[str, ...]:
    """``"a,b"`` → ``("a", "b")``."""
    return tuple(part.strip() for part in text.split(",") if part.strip())


def _gap(text: str) -> Any:
    """``--gap``: a number, or a pandas duration (``7D``, ``12h``) for a date time column."""
    try:
        number = float(text)
    except ValueError:
        number = None
    if number is not None:
        return int(number) if number.is_integer() else number
    import pandas as pd

    try:
        duration = pd.Timedelta(text)
        if pd.isna(duration):
            raise ValueError(text)
        return duration.to_pytimedelta()
    except ValueError:
        raise argparse.ArgumentTypeError(f"--gap must be a number or a duration such as 7D or "
                                         f"12h, got {text!r}") from None


def table_options(args: argparse.Namespace) -> dict[str, Any]:
    """The table flags as :func:`arenalite.datasets.table.read_table` keywords."""
    return {"target": args.target, "task": args.task, "group_column": args.group_column,
            "time_column": args.time_column, "leakage_columns": args.leakage_columns,
            "categorical": args.categorical}


def refuse_suite_flags(name: str, args: argparse.Namespace,
                       split: dict[str, Any] | None = None) -> None:
    """ValueError when table or split flags come with a suite file (it sets its own)."""
    flags = [f"--{k.replace('_', '-')}" for k, v in table_options(args).items()
             if v not in (None, ())]
    flags += [f"--{k.replace('_', '-')}" for k, v in (split or {}).items() if v not in (None, 0)]
    if flags:
        raise ValueError(f"{flags[0]} applies to a table, not to the suite {name!r}: a suite "
                         "file sets each table's roles and split options")


def table_entries(names: Sequence[str], args: argparse.Namespace,
                  split: dict[str, Any] | None = None) -> list[Any]:
    """Each TABLE argument as a suite entry: a suite file gives its entries (with their own
    roles and split options; the whole suite is checked first); a bundled name or a table
    file takes the table flags and ``split`` (the split flags)."""
    from .datasets import resolve
    from .tournament.suite import Entry, is_suite_file, read_suite

    options = {k: v for k, v in table_options(args).items() if v not in (None, ())}
    entries: list[Any] = []
    for name in names:
        if is_suite_file(name):
            refuse_suite_flags(name, args, split)
            entries.extend(read_suite(name).entries)
            continue
        resolve.check_options(name, options)
        stem = resolve.tables.default_name(Path(name)) if resolve.is_file(name) else name
        entries.append(Entry(stem, name, dict(options), dict(split or {})))
    seen = [e.name for e in entries]
    twice = next((n for i, n in enumerate(seen) if n in seen[:i]), None)
    if twice is not None:
        raise ValueError(f"table name {twice!r} is given twice; its split file and results "
                         "rows are named by it")
    return entries


def read_tables(names: Sequence[str], args: argparse.Namespace) -> list[Any]:
    """Each TABLE argument (or each table of a suite file) read as a checked table."""
    return [entry.read() for entry in table_entries(names, args)]


def write_splits(names: Sequence[str], out: Path, args: argparse.Namespace | None = None,
                 **options: Any) -> list[Path]:
    """Persist the splits of bundled datasets, table files or suites' tables as
    ``<name>.splits.json``; ``options`` go to :func:`arenalite.splits.make_splits` (``kind``,
    ``n_repeats``, ``n_folds``, ``test_fraction``, ``gap``, ``group_labels``). A suite's
    entry uses its own split options: its file equals ``arenalite splits TABLE`` with them,
    byte for byte (:mod:`arenalite.datasets.resolve`)."""
    from . import splits
    from .datasets import resolve

    if args is None:
        made = [(name, resolve.make_splits(name, **options)) for name in names]
    else:
        made = [(e.name, e.make_splits()) for e in table_entries(names, args, options)]
    output_folder(out)
    return [splits.save(persisted, _split_path(out, name)) for name, persisted in made]


def run_models(args: argparse.Namespace, out: Path) -> tuple[Path, Path]:
    """Run the models on the datasets' splits (numpy, or WebGPU under Node with
    ``--runner webgpu``); write results.csv and summary.csv."""
    from concurrent.futures import ProcessPoolExecutor

    from . import datasets, runner, splits
    from .datasets import resolve, table

    data, persisted = {}, {}
    for entry in table_entries(args.datasets, args):
        name = entry.name
        if args.splits_dir:
            path = _split_path(Path(args.splits_dir), name)
            persisted[name] = splits.load(path)
        else:
            persisted[name] = entry.make_splits()
        if resolve.plain_bundled(entry.source, entry.table):
            data[name] = datasets.load(name)
            continue
        t = entry.read()
        if args.splits_dir:
            table.check_table_splits(t, persisted[name], str(path))
        excluded = persisted[name]["excluded_columns"]
        data[name] = table.to_dataset(t, drop=excluded)
        # the loader has left these out already; the runner drops only what remains
        persisted[name] = {**persisted[name], "excluded_columns": [
            c for c in excluded if c in data[name].feature_names]}
    models = [parse_model(text) for text in args.models]
    output_folder(out)
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


def convert_checkpoint(args: argparse.Namespace) -> Path:
    """``arenalite convert MODEL CKPT -o OUT``: read and check the checkpoint with the
    converter the model's registry entry names (``convert``), write it as safetensors;
    returns the path written."""
    convert = model_registry.function(args.model, "convert")
    if convert is None:
        raise ValueError(f"model {args.model!r} has no checkpoint converter; models with one: "
                         f"{list(model_registry.with_function('convert'))}")
    out = Path(args.output)
    if out.is_dir():
        raise IsADirectoryError(f"output {str(out)!r} (--output) is a directory; name the "
                                ".safetensors file to write")
    if not out.parent.is_dir():
        raise FileNotFoundError(f"the folder of output {str(out)!r} (--output) does not exist")
    return convert(args.checkpoint, out)


def run_command(args: argparse.Namespace) -> int:
    """Do what ``args`` ask; errors propagate (``main`` reports them)."""
    if args.command == "convert":
        print(convert_checkpoint(args))
        return 0
    if args.command == "describe":
        from .datasets import table

        print("\n\n".join(table.describe(e.read(), **{
            **e.split, **({"n_repeats": args.n_repeats} if args.n_repeats else {})})
            for e in table_entries(args.datasets, args)))
        return 0
    if args.command == "tournament":
        return run_tournament(args)
    out = Path(args.output)
    if args.command not in ("splits", "run"):  # those make it once their tables are checked
        output_folder(out)
    if args.command == "splits":
        kind = None if args.kind == "adaptive" else args.kind
        extra = {k: v for k, v in (("gap", args.gap), ("group_labels", args.group_labels))
                 if v not in (None, 0)}
        for path in write_splits(args.datasets, out, args, kind=kind, n_repeats=args.n_repeats,
                                 n_folds=args.n_folds, test_fraction=args.test_fraction,
                                 **extra):
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
                return _run_method(benchmark, get(name), args)
            except ValueError as error:
                raise ValueError(flag_message(str(error))) from error

        print(write_report(benchmark, out, run, formats=args.formats, log=_log,
                           source=args.csv, style=args.style,
                           webgpu_link=args.webgpu_link))
        return 0
    name = args.method
    result = _run_method(benchmark, get(name), args)
    paths, _ = write_outputs(result, name, out, args.formats,
                             style=getattr(args, "style", "arenalite"))
    print(result.table.to_string(index=False))
    _log("wrote " + ", ".join(str(p) for p in paths))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: exit status 0, or 2 with ``arenalite: error: ...`` for a user mistake."""
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra:
        command = parser.commands.get(args.command, parser)
        command.error(unknown_option(args.command, extra))
    with warnings.catch_warnings():
        warnings.simplefilter("default")
        warnings.showwarning = warning_printer()
        try:
            return run_command(args)
        except USER_ERRORS as error:
            if args.debug:
                raise
            from .tournament.suite import SuiteError  # its keys are the suite file's names

            text = str(error) if isinstance(error, SuiteError) else flag_message(str(error))
            _log(f"arenalite: error: {text}")
            return 2


if __name__ == "__main__":
    raise SystemExit(main())
