"""The model registry: ``registry.json`` declares every in-context model once.

Each entry has a ``name``, a one-line ``summary``, the ``tasks`` it supports, its
``params`` (``type`` integer | number | boolean | weights, ``default``, ``nullable``,
bounds ``min``, ``max``, ``exclusive_min``, the bridge-only ``max_webgpu``, a weights
param's default ``file``, ``help``, and for a weights param without one what the page's
file picker takes: ``accept``, ``multiple``, ``pick``; the page shows a boolean as a
checkbox) and its ``limits`` on the data (``features``, ``classes``,
``context_rows``: an integer, or ``{"weights": KEY}`` for a key of the weights' config),
its ``encoding`` of a table's typed columns (one of the file's shared ``encodings``, the
functions of :mod:`arenalite.models.encoding` that ``encode`` and the bridge's ``encoding.js``
pick by name, or a Python-only model's own function as ``"module:function"``), its
``reference``, the numpy reference that runs it (``"module:function"``, called as
``(model, prepared data, clock) → (output, timings)``), and optionally its ``runners``
(``python``, ``webgpu``; both when absent): a model the bridge does not implement yet says so
here, and the bridge, the page and the Node runner leave it out with a message naming the
runner that has it. Optional too: ``spread`` (true: its regression output has a Gaussian
spread besides the mean, :func:`arenalite.models.predict_distribution`), ``missing_cells``
(true: it takes NaN cells as they are, its own preprocessing handles them), ``context``
(``"module:function"``, ``(model, X_train, y_train) → (X_train, y_train)``: the context rows
it sees, when not all) and ``convert`` (``"module:function"``, ``(checkpoint, out) → path``:
what ``arenalite convert NAME`` runs). So a new checkpoint model is its package under
``models/`` and one entry here; nothing else names it.
The same file is read by the WebGPU bridge (``webgpu_bridge/src/registry.json`` links to
it) and the timing page, which build their checks, labels and form from it; the
messages of :func:`check_params` and :func:`check_limits` are the bridge's, word for word.
"""

from __future__ import annotations

import importlib
import json
import math
import re
from collections.abc import Callable
from os import PathLike
from pathlib import Path
from typing import Any

import numpy as np

PATH = Path(__file__).parent / "registry.json"
COMMON_KEYS = ("name", "label")
"""Keys every model dict may carry besides its parameters (not passed to the model)."""
PARAM_TYPES = ("integer", "number", "boolean", "weights")
LIMITS = {"features": "features", "classes": "classes", "context_rows": "context rows"}
TASKS = ("binary", "multiclass", "regression")
RUNNERS = ("python", "webgpu")
FLAGS = ("spread", "missing_cells")
"""The optional true/false keys of an entry (false when absent)."""
FUNCTIONS = ("reference", "context", "convert", "applicable")
"""The keys naming a Python function as ``"module:function"`` (``reference`` required;
``applicable(model, task, n_features, n_classes)`` raises ValueError when the model's
weights cannot take a table of that shape: a tournament asks before it runs)."""
FUNCTION_PATTERN = re.compile(r"arenalite(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*")
"""What such a key holds: a module of the arenalite package, a colon, a public name."""
KEYS = {"name", "summary", "tasks", "encoding", "params", "limits", "runners", *FLAGS,
        *FUNCTIONS}


def _function_path(value: Any) -> bool:
    return isinstance(value, str) and FUNCTION_PATTERN.fullmatch(value) is not None \
        and not value.rsplit(":", 1)[1].startswith("_")


def _check_entry(entry: Any, i: int,
                 encodings: tuple[str, ...] | None = None) -> dict[str, Any]:
    """One registry entry, checked for the keys and types this module relies on;
    ``encodings``: the shared encodings' names (default: the registry file's)."""
    encodings = ENCODINGS if encodings is None else encodings
    where = f"{PATH.name}: models[{i}]"
    if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
        raise ValueError(f"{where} must be an object with a string 'name'")
    where = f"{PATH.name}: model {entry['name']!r}"
    missing = {"name", "summary", "tasks", "encoding", "params", "limits", "reference"} \
        - set(entry)
    if missing:
        raise ValueError(f"{where} lacks {sorted(missing)}")
    unknown = sorted(set(entry) - KEYS)
    if unknown:
        raise ValueError(f"{where}: unknown keys {unknown}; an entry takes {sorted(KEYS)}")
    for key in FLAGS:
        if not isinstance(entry.get(key, False), bool):
            raise ValueError(f"{where}: {key!r} must be true or false, got {entry[key]!r}")
    for key in FUNCTIONS:
        if key in entry and not _function_path(entry[key]):
            raise ValueError(f"{where}: {key!r} must name a function as "
                             f"'arenalite.module:function', got {entry[key]!r}")
    if not entry["tasks"] or set(entry["tasks"]) - set(TASKS):
        raise ValueError(f"{where}: tasks must be a non-empty subset of {list(TASKS)}")
    for pname, spec in entry["params"].items():
        if pname in COMMON_KEYS or spec.get("type") not in PARAM_TYPES or "default" not in spec:
            raise ValueError(f"{where}: parameter {pname!r} needs a type in "
                             f"{list(PARAM_TYPES)} and a default (and is not {COMMON_KEYS})")
    if entry["encoding"] not in encodings and not _function_path(entry["encoding"]):
        raise ValueError(f"{where}: encoding must be one of {list(encodings)} or name a "
                         f"function as 'arenalite.module:function', got {entry['encoding']!r}")
    runners = entry.get("runners", list(RUNNERS))
    if not runners or not isinstance(runners, list) or set(runners) - set(RUNNERS):
        raise ValueError(f"{where}: runners must be a non-empty subset of {list(RUNNERS)}")
    unknown = set(entry["limits"]) - set(LIMITS)
    if unknown:
        raise ValueError(f"{where}: unknown limits {sorted(unknown)}; known: {list(LIMITS)}")
    return entry


def _read(path: str | PathLike) -> dict[str, Any]:
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if data.get("schema") != "arenalite.models" or data.get("version") != 1:
        raise ValueError(f"{path}: not an arenalite.models registry of version 1")
    encodings = data.get("encodings")
    if not isinstance(encodings, list) or not encodings or not all(
            isinstance(e, str) and not _function_path(e) for e in encodings):
        raise ValueError(f"{path}: 'encodings' must list the shared encodings' names")
    return data


def load(path: str | PathLike = PATH) -> dict[str, dict[str, Any]]:
    """The registry as name → entry, in the file's order."""
    data = _read(path)
    encodings = tuple(data["encodings"])
    entries = [_check_entry(e, i, encodings) for i, e in enumerate(data["models"])]
    return {e["name"]: e for e in entries}


REGISTRY = load()
ENCODINGS = tuple(_read(PATH)["encodings"])
"""The shared encodings an entry may name (registry.json's ``encodings``), each a function
of :mod:`arenalite.models.encoding` (and, for a WebGPU model's, of the bridge's
``encoding.js``)."""


def describe(names: list[str]) -> str:
    """A list of names as both languages print it: ['a', 'b']."""
    return "[" + ", ".join(f"'{n}'" for n in names) + "]"


def entry(name: Any) -> dict[str, Any]:
    """The registry entry of ``name``; ValueError for an unknown name."""
    if not isinstance(name, str) or name not in REGISTRY:
        shown = f"'{name}'" if isinstance(name, str) else repr(name)
        raise ValueError(f"unknown model name {shown}; known models are "
                         f"{describe(list(REGISTRY))}")
    return REGISTRY[name]


def _bound_error(name: str, key: str, spec: dict, value: Any) -> str:
    kind = "an integer" if spec["type"] == "integer" else "a finite number"
    bounds = [f"≥ {spec['min']}" if "min" in spec else "",
              f"> {spec['exclusive_min']}" if "exclusive_min" in spec else "",
              f"≤ {spec['max']}" if "max" in spec else ""]
    text = " and ".join(b for b in bounds if b)
    null = " or null" if spec.get("nullable") else ""
    return (f"{name} parameter '{key}' must be {kind}{' ' + text if text else ''}{null}, "
            f"got {value!r}")


def _check_value(name: str, key: str, spec: dict, value: Any) -> None:
    if value is None:
        if not spec.get("nullable"):
            raise ValueError(f"{name} parameter '{key}' must not be null")
        return
    if spec["type"] == "weights":
        from .weights import Weights

        if not isinstance(value, str | PathLike | Weights):
            raise TypeError(f"{name} parameter '{key}' must be a path, a Weights object or "
                            f"null, got {type(value).__name__}")
        return
    if spec["type"] == "boolean":
        if not isinstance(value, bool | np.bool_):
            raise ValueError(f"{name} parameter '{key}' must be true or false, got {value!r}")
        return
    integer = spec["type"] == "integer"
    ok = (not isinstance(value, bool) and isinstance(value, int | np.integer)) if integer else (
        not isinstance(value, bool) and isinstance(value, int | float | np.number)
        and math.isfinite(value))
    ok = ok and value >= spec.get("min", -math.inf) and value <= spec.get("max", math.inf)
    ok = ok and value > spec.get("exclusive_min", -math.inf)
    if not ok:
        raise ValueError(_bound_error(name, key, spec, value))


def check_params(model: Any) -> dict[str, Any]:
    """Validate a model dict against the registry; returns it with defaults filled in."""
    if not isinstance(model, dict):
        raise TypeError(f"model must be a dict such as {{'name': 'knn', 'k': 5}}, "
                        f"got {type(model).__name__}")
    spec = entry(model.get("name"))
    name, params = spec["name"], spec["params"]
    extra = sorted(set(model) - set(params) - set(COMMON_KEYS))
    if extra:
        raise ValueError(f"model '{name}' has unknown parameters {describe(extra)}; it takes "
                         f"{describe(sorted(params))}")
    out = {"name": name, **{k: p["default"] for k, p in params.items()},
           **{k: v for k, v in model.items() if k != "name"}}
    for key, p in params.items():
        _check_value(name, key, p, out[key])
    return out


def runners(name: str) -> list[str]:
    """The runners that implement model ``name`` (``python``, ``webgpu``)."""
    return list(entry(name).get("runners", RUNNERS))


def check_runner(name: str, runner: str) -> None:
    """ValueError when model ``name`` has no implementation in ``runner``."""
    have = runners(name)
    if runner not in have:
        raise ValueError(f"model '{name}' has no {runner} implementation yet; it runs in "
                         f"{describe(have)} (arenalite run --runner {have[0]})")


def flag(name: str, key: str) -> bool:
    """Model ``name``'s ``spread`` or ``missing_cells`` (false when absent)."""
    if key not in FLAGS:
        raise ValueError(f"unknown registry flag {key!r}; known: {list(FLAGS)}")
    return bool(entry(name).get(key, False))


def with_flag(key: str) -> tuple[str, ...]:
    """The models whose ``key`` (``spread``, ``missing_cells``) is true, in registry order."""
    return tuple(name for name in REGISTRY if flag(name, key))


def function(name: str, key: str) -> Callable[..., Any] | None:
    """The Python function model ``name``'s entry names under ``key`` (``reference``,
    ``context``, ``convert``, ``applicable``, or an ``encoding`` given as
    ``"module:function"``), imported now; None when the entry has no such key (or a shared
    encoding's name)."""
    value = entry(name).get(key)
    if not _function_path(value):
        return None
    module, attr = value.rsplit(":", 1)
    found = getattr(importlib.import_module(module), attr, None)
    if not callable(found):
        raise ValueError(f"{PATH.name}: model {name!r}'s {key} {value!r} is not a function")
    return found


def with_function(key: str) -> tuple[str, ...]:
    """The models whose entry names a function under ``key``, in registry order."""
    return tuple(name for name, e in REGISTRY.items() if _function_path(e.get(key)))


def defaults(name: str) -> dict[str, Any]:
    """The default value of each parameter of model ``name``."""
    return {k: p["default"] for k, p in entry(name)["params"].items()}


def check_task(name: str, task: str) -> None:
    """ValueError when model ``name`` does not support ``task``."""
    tasks = entry(name)["tasks"]
    if task not in tasks:
        raise ValueError(f"model '{name}' does not support task '{task}'; it supports "
                         f"{describe(tasks)}")


def check_limits(name: str, sizes: dict[str, int | None], config: dict | None = None) -> None:
    """ValueError when data sizes (``features``, ``classes``, ``context_rows``) exceed the
    model's limits; ``{"weights": KEY}`` limits read ``config`` (the weights' config) and
    are skipped without it."""
    for key, limit in entry(name)["limits"].items():
        n = sizes.get(key)
        if n is None or (isinstance(limit, dict) and config is None):
            continue
        if isinstance(limit, dict):
            most, source = (config or {})[limit["weights"]], f"the weights' {limit['weights']}"
        else:
            most, source = limit, "its limit"
        if n > most:
            raise ValueError(f"{name} takes at most {most} {LIMITS[key]} ({source}), got {n}")
