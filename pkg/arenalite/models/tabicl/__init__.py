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

from .. import checkpoint_cache
from .checkpoint import Checkpoint, convert, random_checkpoint, read_checkpoint, write_safetensors
from .model import TabICLModel, fit_context, forward, predict_queries, stages
from .predictor import NO_WEIGHTS, WHERE_WEIGHTS, Settings, check_task, predict

__all__ = ["NO_WEIGHTS", "WHERE_WEIGHTS", "Checkpoint", "Settings", "TabICLModel", "check_task",
           "convert", "fit_context", "forward", "load", "predict", "predict_queries",
           "random_checkpoint", "read_checkpoint", "stages", "write_safetensors"]


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
