"""TabICLv2 (the ``tabicl`` package, BSD-3): numpy reference of its forward and its checkpoints.

One stage per module, the same names as the bridge's: :mod:`.checkpoint` (reading the
official ``.ckpt`` without torch, and safetensors; random-weight checkpoints),
:mod:`.preprocessing` and :mod:`.ensemble` (what the scikit-learn wrappers do before and
after the model), :mod:`.column` (column embedding), :mod:`.row` (row interaction),
:mod:`.icl` (in-context learning), :mod:`.head`; :mod:`.layers` holds the pieces they
share, :mod:`.model` runs one member's forward with both KV caches, :mod:`.predictor` the
whole ensemble.
"""

from __future__ import annotations

from os import PathLike
from typing import Any

import numpy as np

from .. import checkpoint_cache
from ..preprocess import Prepared
from .checkpoint import Checkpoint, convert, random_checkpoint, read_checkpoint, write_safetensors
from .model import TabICLModel, fit_context, forward, predict_queries, stages
from .predictor import NO_WEIGHTS, WHERE_WEIGHTS, Settings, check_task, predict

__all__ = ["NO_WEIGHTS", "WHERE_WEIGHTS", "Checkpoint", "Settings", "TabICLModel", "check_task",
           "convert", "fit_context", "forward", "load", "predict", "predict_queries",
           "random_checkpoint", "read_checkpoint", "reference", "stages", "write_safetensors"]


def _read_model(path: str) -> TabICLModel:
    checkpoint = read_checkpoint(path)
    return TabICLModel(checkpoint.config, checkpoint.tensors)


def load(path: str | PathLike | None) -> TabICLModel:
    """The model of a checkpoint file (``.ckpt`` or converted ``.safetensors``), cached per
    file and modification time (:mod:`arenalite.models.checkpoint_cache`); ``None`` raises
    the message saying where weights come from."""
    if path is None:
        raise ValueError(NO_WEIGHTS)
    return checkpoint_cache.load(path, _read_model, f"TabICL checkpoint {str(path)!r} does "
                                 f"not exist; {WHERE_WEIGHTS}")


def applicable(model: dict[str, Any], task: str, n_features: int,
               n_classes: int | None) -> None:
    """The registry's ``applicable`` of ``tabicl``: ValueError when the checkpoint cannot
    do the task (a classifier's class tree takes any number of classes)."""
    net = load(model.get("weights"))
    check_task(net, task, f"checkpoint {str(model['weights'])!r}")


def reference(model: dict[str, Any], prep: Prepared, clock) -> tuple[np.ndarray, dict]:
    """The registry's ``tabicl`` (its ``reference``): TabICL from the user's checkpoint, the
    package's own preprocessing and ensemble on the raw (validated, unstandardized) features
    (docs/models.md)."""
    net = load(model["weights"])
    check_task(net, prep.task, f"checkpoint {str(model['weights'])!r}")
    settings = Settings(**{k: model[k] for k in (
        "n_estimators", "softmax_temperature", "outlier_threshold", "random_state")})
    return predict(net, prep.raw_train, prep.y_train, prep.raw_test, prep.task,
                   prep.n_classes, settings, clock)
