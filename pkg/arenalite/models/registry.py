"""The model registry: ``registry.json`` declares every in-context model once.

Each entry has a ``name``, a one-line ``summary``, the ``tasks`` it supports, its
``params`` (``type`` integer | number | boolean | weights, ``default``, ``nullable``,
bounds ``min``, ``max``, ``exclusive_min``, the bridge-only ``max_webgpu``, a weights
param's default ``file``, ``help``; the page's form has no boolean input yet: no WebGPU
model takes one) and its ``limits`` on the data (``features``, ``classes``,
``context_rows``: an integer, or ``{"weights": KEY}`` for a key of the weights' config),
its ``encoding`` of a table's typed columns (``tabicl``, ``common`` or ``tabpfn``: the functions of
:mod:`arenalite.models.encoding`, which ``encode`` and the bridge's ``encoding.js`` pick by
it), and optionally its ``runners`` (``python``, ``webgpu``; both when absent): a model the
bridge does not implement yet says so here, and the bridge, the page and the Node runner
leave it out with a message naming the runner that has it.
The same file is read by the WebGPU bridge (``webgpu_bridge/src/registry.json`` links to
it) and the timing page, which build their checks, labels and form from it; the
messages of :func:`check_params` and :func:`check_limits` are the bridge's, word for word.
"""

from __future__ import annotations

import json
import math
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
ENCODINGS = ("tabicl", "common", "tabpfn")


def _check_entry(entry: Any, i: int) -> dict[str, Any]:
    """One registry entry, checked for the keys and types this module relies on."""
    where = f"{PATH.name}: models[{i}]"
    if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
        raise ValueError(f"{where} must be an object with a string 'name'")
    where = f"{PATH.name}: model {entry['name']!r}"
    missing = {"name", "summary", "tasks", "encoding", "params", "limits"} - set(entry)
    if missing:
        raise ValueError(f"{where} lacks {sorted(missing)}")
    if not entry["tasks"] or set(entry["tasks"]) - set(TASKS):
        raise ValueError(f"{where}: tasks must be a non-empty subset of {list(TASKS)}")
    for pname, spec in entry["params"].items():
        if pname in COMMON_KEYS or spec.get("type") not in PARAM_TYPES or "default" not in spec:
            raise ValueError(f"{where}: parameter {pname!r} needs a type in "
                             f"{list(PARAM_TYPES)} and a default (and is not {COMMON_KEYS})")
    if entry["encoding"] not in ENCODINGS:
        raise ValueError(f"{where}: encoding must be one of {list(ENCODINGS)}, got "
                         f"{entry['encoding']!r}")
    runners = entry.get("runners", list(RUNNERS))
    if not runners or not isinstance(runners, list) or set(runners) - set(RUNNERS):
        raise ValueError(f"{where}: runners must be a non-empty subset of {list(RUNNERS)}")
    unknown = set(entry["limits"]) - set(LIMITS)
    if unknown:
        raise ValueError(f"{where}: unknown limits {sorted(unknown)}; known: {list(LIMITS)}")
    return entry


def load(path: str | PathLike = PATH) -> dict[str, dict[str, Any]]:
    """The registry as name → entry, in the file's order."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if data.get("schema") != "arenalite.models" or data.get("version") != 1:
        raise ValueError(f"{path}: not an arenalite.models registry of version 1")
    entries = [_check_entry(e, i) for i, e in enumerate(data["models"])]
    return {e["name"]: e for e in entries}


REGISTRY = load()


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
