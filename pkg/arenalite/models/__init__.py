"""In-context models: numpy reference implementations and the weights file format.

``predict(model, X_train, y_train, X_test, task, n_classes=None)`` runs one model
(a dict such as ``{"name": "knn", "k": 5}``) with the training rows as context and
returns m × C class probabilities or m regression predictions. The definitions in
docs/models.md are binding: the WebGPU bridge reproduces these outputs within 1e-4.
"""

from __future__ import annotations

import time
from functools import lru_cache
from os import PathLike
from pathlib import Path
from typing import Any

import numpy as np

from . import tabular_fm, transformer
from .attention import attention_output, attention_weights
from .knn import knn_output, neighbours
from .preprocess import TASKS, Prepared, prepare
from .weights import DEFAULT_PATH, Weights, read_weights, write_weights

MODELS: dict[str, dict[str, Any]] = {
    "knn": {"k": 5},
    "attention": {"temperature": None},
    "icl_transformer": {"weights": None},
    "tabular_fm": {"weights": None},
}
# Models whose regression head gives a Gaussian spread besides the mean.
SPREAD_MODELS = ("tabular_fm",)
# Keys every model dict may carry besides its parameters (ignored by the computation).
COMMON_KEYS = ("name", "label")

__all__ = ["MODELS", "TASKS", "Weights", "check_model", "model_label", "predict",
           "predict_distribution", "predict_timed", "read_weights", "write_weights"]


def check_model(model: object) -> dict[str, Any]:
    """Validate a model dict; returns it with defaults filled in."""
    if not isinstance(model, dict):
        raise TypeError(f"model must be a dict such as {{'name': 'knn', 'k': 5}}, "
                        f"got {type(model).__name__}")
    name = model.get("name")
    if name not in MODELS:
        raise ValueError(f"unknown model name {name!r}; known models are {sorted(MODELS)}")
    extra = sorted(set(model) - set(MODELS[name]) - set(COMMON_KEYS))
    if extra:
        raise ValueError(f"model {name!r} has unknown parameters {extra}; it takes "
                         f"{sorted(MODELS[name])}")
    out = {"name": name, **MODELS[name], **{k: v for k, v in model.items() if k != "name"}}
    if name == "knn":
        k = out["k"]
        if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1:
            raise ValueError(f"knn parameter 'k' must be a positive integer, got {k!r}")
    elif name == "attention":
        t = out["temperature"]
        if t is not None and (isinstance(t, bool) or not isinstance(t, int | float)
                              or not np.isfinite(t) or t <= 0):
            raise ValueError(f"attention parameter 'temperature' must be a positive finite "
                             f"number or None, got {t!r}")
    else:
        w = out["weights"]
        if w is not None and not isinstance(w, str | PathLike | Weights):
            raise TypeError(f"{name} parameter 'weights' must be a path, a Weights "
                            f"object or None, got {type(w).__name__}")
    return out


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


@lru_cache(maxsize=8)
def _params_from_path(path: str) -> transformer.Params:
    return transformer.Params(read_weights(path))


def _params(weights: str | PathLike | Weights | None) -> transformer.Params:
    if isinstance(weights, Weights):
        return transformer.Params(weights)
    return _params_from_path(str(Path(DEFAULT_PATH if weights is None else weights).resolve()))


@lru_cache(maxsize=8)
def _fm_from_path(path: str) -> tabular_fm.Model:
    return tabular_fm.Model(tabular_fm.read_weights(path))


def _fm(weights: str | PathLike | Weights | None) -> tabular_fm.Model:
    if isinstance(weights, Weights):
        return tabular_fm.Model(weights)
    path = tabular_fm.DEFAULT_PATH if weights is None else weights
    return _fm_from_path(str(Path(path).resolve()))


def _run(model: dict[str, Any], prep: Prepared, clock) -> tuple[np.ndarray, dict]:
    if model["name"] == "tabular_fm":
        return tabular_fm.forward(_fm(model["weights"]), prep, clock)
    if model["name"] == "icl_transformer":
        params = _params(model["weights"])
        transformer.check_sizes(params, prep.x_train.shape[1], prep.n_classes)
        return transformer.forward_cached(params, prep, clock)
    t0 = clock()
    if model["name"] == "knn":
        found = neighbours(prep.x_test, prep.x_train, int(model["k"]))
        t1 = clock()
        output = knn_output(found, prep.y_train, prep.n_classes)
    else:
        temperature = model["temperature"] or prep.x_train.shape[1]
        w = attention_weights(prep.x_test, prep.x_train, float(temperature))
        t1 = clock()
        output = attention_output(w, prep.y_train, prep.n_classes)
    t2 = clock()
    return output, {"embed": 0.0, "layers": [(t1 - t0) * 1e3], "head": (t2 - t1) * 1e3}


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
    clock = time.perf_counter
    model = check_model(model)
    t0 = clock()
    if model["name"] == "tabular_fm":
        limit = _fm(model["weights"]).config["max_context"]
        X_train, y_train = tabular_fm.subsample(np.asarray(X_train), np.asarray(y_train), limit)
    prep = prepare(X_train, y_train, X_test, task, n_classes)
    prep_ms = (clock() - t0) * 1e3
    output, timings = _run(model, prep, clock)
    timings["embed"] += prep_ms
    timings["total"] = timings["embed"] + sum(timings["layers"]) + timings["head"]
    return output, timings


def predict_distribution(model: dict[str, Any], X_train: Any, y_train: Any,
                         X_test: Any) -> tuple[np.ndarray, np.ndarray]:
    """Regression mean and spread (Gaussian standard deviation), both in the target's units.

    Only models with a probabilistic head give a spread (``tabular_fm``); the others
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
    in the target's units. Bad shapes, non-finite values, labels outside 0 … C−1, an
    unknown task or model name raise ``ValueError``/``TypeError``.
    """
    return predict_timed(model, X_train, y_train, X_test, task, n_classes)[0]
