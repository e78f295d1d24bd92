"""TabPFN v3 (the ``tabpfn`` package, Apache-2.0): its checkpoints read without torch, and
its raw forward in numpy.

:mod:`.checkpoint` reads the package's v3 ``.ckpt`` (and ``.safetensors``) files and
arenalite's converted safetensors, and refuses every other generation by name.
:mod:`.model` runs one model call's forward on already-preprocessed inputs, one stage per
module (:mod:`.cells`, :mod:`.column`, :mod:`.row`, :mod:`.icl`, :mod:`.decoder`), with the
context's caches computed once per split. :mod:`.ensemble` draws the members' configs from
``random_state`` and :mod:`.preprocessing` runs each member's CPU pipeline (cleaning,
reshape transforms, categorical encoding, SVD, row fingerprint, shuffle, soft clip) as the
package does; :mod:`.predictor` runs the whole classifier (members, model calls, the
aggregation) as ``TabPFNClassifier.predict_proba`` and ``TabPFNRegressor.predict``, whose
target side is :mod:`.regression` (each member's z-scoring and target transform, the members'
distributions re-binned and averaged). The registry's model ``tabpfn`` runs it
(:func:`load_cached`; docs/models.md, "TabPFN v3").
"""

from __future__ import annotations

from os import PathLike
from typing import Any

import numpy as np

from .. import checkpoint_cache
from ..preprocess import Prepared
from .checkpoint import (
    Checkpoint,
    convert,
    expected_shapes,
    random_checkpoint,
    read_checkpoint,
    write_safetensors,
)
from .model import Context, TabPFNModel, fit_context, forward, load, predict_queries, stages
from .predictor import (
    NO_WEIGHTS,
    WHERE_WEIGHTS,
    Settings,
    check_classes,
    check_task,
    predict_proba,
    predict_regression,
)

__all__ = ["NO_WEIGHTS", "WHERE_WEIGHTS", "Checkpoint", "Context", "Settings", "TabPFNModel",
           "check_task", "convert", "expected_shapes", "fit_context", "forward", "load",
           "load_cached", "predict_proba", "predict_queries", "predict_regression",
           "random_checkpoint", "read_checkpoint", "reference", "stages", "write_safetensors"]

GAUSSIAN_SIGMA_LEVELS = (0.15865525393145707, 0.8413447460685429)
"""Φ(−1) and Φ(1): half the distance between these quantiles is a Gaussian's σ."""


def load_cached(path: str | PathLike | None) -> TabPFNModel:
    """The model of a checkpoint file (``.ckpt`` or converted ``.safetensors``), cached per
    file and modification time (:mod:`arenalite.models.checkpoint_cache`); ``None`` raises
    the message saying where weights come from."""
    if path is None:
        raise ValueError(NO_WEIGHTS)
    return checkpoint_cache.load(path, load, f"TabPFN checkpoint {str(path)!r} does not "
                                 f"exist; {WHERE_WEIGHTS}")


def applicable(model: dict[str, Any], task: str, n_features: int,
               n_classes: int | None) -> None:
    """The registry's ``applicable`` of ``tabpfn``: ValueError when the checkpoint cannot
    take a table of this task and class count (a tournament asks before it runs)."""
    net = load_cached(model.get("weights"))
    check_task(net, task, f"checkpoint {str(model['weights'])!r}")
    if task != "regression" and n_classes:
        check_classes(net, n_classes)


def reference(model: dict[str, Any], prep: Prepared, clock) -> tuple[np.ndarray, dict]:
    """The registry's ``tabpfn`` (its ``reference``): TabPFN v3 from the user's checkpoint,
    the package's own preprocessing, ensemble and aggregation on the raw (validated,
    NaN-keeping) features and a DataFrame's declared categorical columns
    (``prep.categorical_indices``; docs/models.md, "`tabpfn`"). Regression: the mean and, as
    spread, half the distance between the bar distribution's Φ(−1) and Φ(1) quantiles. One
    ``layers`` entry: the whole ensemble."""
    net = load_cached(model["weights"])
    check_task(net, prep.task, f"checkpoint {str(model['weights'])!r}")
    settings = Settings(**{k: model[k] for k in (
        "n_estimators", "softmax_temperature", "random_state", "average_before_softmax",
        "balance_probabilities")})
    t0 = clock()
    if prep.task == "regression":
        out = predict_regression(net, prep.raw_train, prep.y_train, prep.raw_test, settings,
                                 "main", list(GAUSSIAN_SIGMA_LEVELS),
                                 categorical_indices=prep.categorical_indices)
        low, high = out["quantiles"]
        output = np.column_stack([out["mean"], (high - low) / 2])
    else:
        output = predict_proba(net, prep.raw_train, prep.y_train, prep.raw_test,
                               prep.n_classes, settings,
                               categorical_indices=prep.categorical_indices)
    return output, {"embed": 0.0, "layers": [(clock() - t0) * 1e3], "head": 0.0}
