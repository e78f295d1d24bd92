"""In-context models: numpy reference implementations and the weights file format.

``predict(model, X_train, y_train, X_test, task, n_classes=None)`` runs one model
(a dict such as ``{"name": "knn", "k": 5}``) with the training rows as context and
returns m × C class probabilities or m regression predictions. The definitions in
docs/models.md are binding: the WebGPU bridge reproduces these outputs within 1e-4.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from os import PathLike
from pathlib import Path
from typing import Any

import numpy as np

from . import checkpoint_cache, encoding, registry, tabular_fm, transformer
from .attention import attention_predict
from .knn import knn_output, neighbours
from .preprocess import TASKS, Prepared, prepare
from .weights import DEFAULT_PATH, Weights, read_weights, write_weights

MODELS: dict[str, dict[str, Any]] = {name: registry.defaults(name) for name in registry.REGISTRY}
"""Model name → its parameters' defaults, in the registry's order (registry.json)."""
WEBGPU_MODELS = tuple(n for n in registry.REGISTRY if "webgpu" in registry.runners(n))
"""The models the WebGPU bridge and the timing page run (the registry's ``runners``)."""
COMMON_KEYS = registry.COMMON_KEYS
SPREAD_MODELS = registry.with_flag("spread")
"""Models whose regression head gives a Gaussian spread besides the mean (``spread``)."""
MISSING_CELL_MODELS = registry.with_flag("missing_cells")
"""Models that take NaN cells as they are, their own preprocessing handles them
(``missing_cells``)."""

__all__ = ["MODELS", "TASKS", "WEBGPU_MODELS", "Weights", "check_model", "model_label", "predict",
           "predict_distribution", "predict_timed", "read_weights", "write_weights"]


def check_model(model: object) -> dict[str, Any]:
    """Validate a model dict against the registry; returns it with defaults filled in."""
    return registry.check_params(model)


def model_label(model: dict[str, Any]) -> str:
    """The model's name in results: its ``label``, else name plus non-default parameters."""
    model = check_model(model)
    if "label" in model:
        if not isinstance(model["label"], str) or not model["label"]:
            raise ValueError(f"model 'label' must be a non-empty string, got {model['label']!r}")
        return model["label"]
    changed = [f"{k}={v}" for k, v in model.items()
               if k not in COMMON_KEYS and v != MODELS[model["name"]][k]]
    return model["name"] + (f"({', '.join(changed)})" if changed else "")


def _read_params(path: str) -> transformer.Params:
    return transformer.Params(read_weights(path))


def _params(weights: str | PathLike | Weights | None) -> transformer.Params:
    if isinstance(weights, Weights):
        return transformer.Params(weights)
    path = DEFAULT_PATH if weights is None else weights
    if Path(path).suffix != ".json":
        return _read_params(str(path))  # refused: not a manifest
    return checkpoint_cache.load(path, _read_params,
                                 f"weights manifest {str(path)!r} does not exist")


def transformer_reference(model: dict[str, Any], prep: Prepared, clock) -> tuple[np.ndarray, dict]:
    params = _params(model["weights"])
    registry.check_limits("icl_transformer", _sizes(prep), params.config)
    return transformer.forward_cached(params, prep, clock)


def transformer_applicable(model: dict[str, Any], task: str, n_features: int,
                           n_classes: int | None) -> None:
    """icl_transformer's registry ``applicable``: its weights' feature and class limits."""
    registry.check_limits("icl_transformer", {"features": n_features, "classes": n_classes},
                          _params(model.get("weights")).config)


def _read_fm(path: str) -> tabular_fm.Model:
    return tabular_fm.Model(tabular_fm.read_weights(path))


def _fm(weights: str | PathLike | Weights | None) -> tabular_fm.Model:
    if isinstance(weights, Weights):
        return tabular_fm.Model(weights)
    path = tabular_fm.DEFAULT_PATH if weights is None else weights
    return checkpoint_cache.load(path, _read_fm)


def foundation_reference(model: dict[str, Any], prep: Prepared, clock) -> tuple[np.ndarray, dict]:
    fm = _fm(model["weights"])
    registry.check_limits("tabular_fm", _sizes(prep), fm.config)
    return tabular_fm.forward(fm, prep, clock)


def foundation_applicable(model: dict[str, Any], task: str, n_features: int,
                          n_classes: int | None) -> None:
    """tabular_fm's registry ``applicable``: its weights' feature and class limits."""
    registry.check_limits("tabular_fm", {"features": n_features, "classes": n_classes},
                          _fm(model.get("weights")).config)


def foundation_context(model: dict[str, Any], x_train: Any, y_train: Any) -> tuple[Any, Any]:
    """tabular_fm's context rows (its registry ``context``): at most its weights'
    max_context, the seeded rule of :func:`tabular_fm.context_rows`."""
    limit = _fm(model["weights"]).config["max_context"]
    rows = x_train if encoding.is_frame(x_train) else np.asarray(x_train)
    return tabular_fm.subsample(rows, np.asarray(y_train), limit)


def _context(model: dict[str, Any], x_train: Any, y_train: Any) -> tuple[Any, Any]:
    """The context rows a model sees: its registry entry's ``context`` function when it
    names one, else every row."""
    pick = registry.function(model["name"], "context")
    return (x_train, y_train) if pick is None else pick(model, x_train, y_train)


def distance_reference(model: dict[str, Any], prep: Prepared, clock) -> tuple[np.ndarray, dict]:
    if model["name"] == "attention":  # weights aggregated block by block, never m × n
        temperature = model["temperature"] or prep.x_train.shape[1]
        output, weights_ms, head_ms = attention_predict(
            prep.x_test, prep.x_train, prep.y_train, prep.n_classes, float(temperature), clock)
        return output, {"embed": 0.0, "layers": [weights_ms], "head": head_ms}
    t0 = clock()
    found = neighbours(prep.x_test, prep.x_train, int(model["k"]))
    t1 = clock()
    output = knn_output(found, prep.y_train, prep.n_classes)
    t2 = clock()
    return output, {"embed": 0.0, "layers": [(t1 - t0) * 1e3], "head": (t2 - t1) * 1e3}


def _sizes(prep: Prepared) -> dict[str, int | None]:
    return {"features": prep.x_train.shape[1], "classes": prep.n_classes,
            "context_rows": prep.x_train.shape[0]}


def reference(name: str) -> Callable[..., tuple[np.ndarray, dict]]:
    """Model ``name``'s numpy reference ``(model, prepared data, clock) → (output,
    timings)``: the function its registry entry names as ``reference``. Fixed limits are
    checked before it runs; a model with weights checks the limits its weights' config
    sets."""
    return registry.function(name, "reference")


def predict_timed(model: dict[str, Any], X_train: Any, y_train: Any, X_test: Any, task: str,
                  n_classes: int | None = None) -> tuple[np.ndarray, dict[str, Any]]:
    """Like :func:`predict`, also returning stage timings in ms.

    Timings: ``{"embed": ms, "layers": [ms, ...], "head": ms, "total": ms}`` with
    ``total`` = embed + Σ layers + head (SPEC §8's T_fold, as the WebGPU bridge reports
    it). ``embed`` includes validation and standardization; for ``knn``/``attention``
    the single ``layers`` entry is the distance / weight computation and ``head`` the
    label aggregation.
    """
    output, timings = _predict_full(model, X_train, y_train, X_test, task, n_classes)
    return (output[:, 0] if task == "regression" and output.ndim == 2 else output), timings


def _predict_full(model, X_train, y_train, X_test, task, n_classes):
    """The reference's whole output (regression: mean and spread for SPREAD_MODELS)."""
    clock = time.perf_counter
    model = check_model(model)
    t0 = clock()
    X_train, y_train = _context(model, X_train, y_train)
    X_train, X_test, categorical = encoding.encode_table(model["name"], X_train, X_test)
    prep = replace(prepare(X_train, y_train, X_test, task, n_classes,
                           allow_nan=registry.flag(model["name"], "missing_cells")),
                   categorical_indices=categorical)
    registry.check_task(model["name"], task)
    prep_ms = (clock() - t0) * 1e3
    registry.check_limits(model["name"], _sizes(prep))
    output, timings = reference(model["name"])(model, prep, clock)
    timings["embed"] += prep_ms
    timings["total"] = timings["embed"] + sum(timings["layers"]) + timings["head"]
    return output, timings


def predict_distribution(model: dict[str, Any], X_train: Any, y_train: Any,
                         X_test: Any) -> tuple[np.ndarray, np.ndarray]:
    """Regression mean and spread (Gaussian standard deviation), both in the target's units.

    Only models with a probabilistic head give a spread (``tabular_fm``; ``tabicl``'s
    quantile head: the standard deviation of its members' quantiles; ``tabpfn``'s bar
    distribution: half its Φ(1) − Φ(−1) quantile range); the others
    raise ``ValueError``. The pair feeds the gate's probabilistic track (CRPS, Gaussian NLL).
    """
    model = check_model(model)
    if model["name"] not in SPREAD_MODELS:
        raise ValueError(f"model {model['name']!r} predicts no spread; models with a "
                         f"regression spread are {list(SPREAD_MODELS)}")
    output, _ = _predict_full(model, X_train, y_train, X_test, "regression", None)
    return output[:, 0], output[:, 1]


def predict(model: dict[str, Any], X_train: Any, y_train: Any, X_test: Any, task: str,
            n_classes: int | None = None) -> np.ndarray:
    """Numpy reference output of an in-context model (docs/models.md).

    Classification: m × C probabilities whose rows sum to 1. Regression: m predictions
    in the target's units. ``X_train`` and ``X_test`` are arrays of numbers, or both
    pandas DataFrames with text, category, bool and missing cells, encoded per model
    (:mod:`arenalite.models.encoding`, docs/models.md). Bad shapes, non-finite values,
    labels outside 0 … C−1, an unknown task or model name raise ``ValueError``/``TypeError``.
    """
    return predict_timed(model, X_train, y_train, X_test, task, n_classes)[0]
