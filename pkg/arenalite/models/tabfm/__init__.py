"""Google TabFM (the ``tabfm`` package, Apache-2.0; weights under Google's own terms):
numpy reference of its forward and its checkpoints.

One stage per module: :mod:`.checkpoint` (the ``save_pretrained`` folder or its parent,
arenalite's single file; random-weight checkpoints), :mod:`.cells` (Fourier cell
embedding), :mod:`.column` (induced set attention over rows), :mod:`.row` (attention over
a row's tokens with RoPE), :mod:`.icl` (in-context learning), :mod:`.decoder`;
:mod:`.layers` holds the pieces they share and :mod:`.model` runs one member's forward
with its KV caches; :mod:`.preprocessing` and :mod:`.ensemble` are what the scikit-learn
wrappers do before and after the model, :mod:`.predictor` the whole ensemble. "Google
TabFM" is this model; "tabular_fm (ours)" is arenalite's own.
"""

from __future__ import annotations

from os import PathLike
from pathlib import Path

from .. import checkpoint_cache
from .checkpoint import (
    WEIGHTS_NAME,
    Checkpoint,
    convert,
    random_checkpoint,
    read_checkpoint,
    resolve,
    save_pretrained,
    write_safetensors,
)
from .model import TabFMModel, fit_context, forward, predict_queries, stages
from .predictor import NO_WEIGHTS, WHERE_WEIGHTS, Settings, check_task, predict

__all__ = ["NO_WEIGHTS", "WHERE_WEIGHTS", "Checkpoint", "Settings", "TabFMModel", "check_task",
           "convert", "fit_context", "forward", "load", "predict", "predict_queries",
           "random_checkpoint", "read_checkpoint", "save_pretrained", "stages",
           "write_safetensors"]


def _read_folder(weights: str) -> TabFMModel:
    """The model of the ``save_pretrained`` folder holding ``weights``."""
    checkpoint = read_checkpoint(Path(weights).parent)
    return TabFMModel(checkpoint.config, checkpoint.tensors)


def _read_file(path: str) -> TabFMModel:
    """The model of a converted single file."""
    checkpoint = read_checkpoint(path)
    return TabFMModel(checkpoint.config, checkpoint.tensors)


def load(path: str | PathLike, task: str | None = None) -> TabFMModel:
    """The model of a checkpoint: a ``save_pretrained`` folder, the parent of
    ``classification/`` and ``regression/`` (``task`` picks), or a converted file; read
    once per weights file and modification time (:mod:`arenalite.models.checkpoint_cache`).
    A folder's task must agree with ``task`` when both say."""
    p = resolve(path, task)
    if p.is_file():
        model = checkpoint_cache.load(p, _read_file)
    else:
        weights = p / WEIGHTS_NAME
        if not weights.is_file():
            read_checkpoint(p, task)  # raises the message naming what is missing
        model = checkpoint_cache.load(weights, _read_folder)
    if task is not None and model.task != task:
        raise ValueError(f"Google TabFM checkpoint {str(p)!r} is a {model.task} checkpoint, "
                         f"asked for {task}")
    return model
