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

from functools import lru_cache
from os import PathLike
from pathlib import Path

from .checkpoint import (
    Checkpoint,
    convert,
    random_checkpoint,
    read_checkpoint,
    save_pretrained,
    write_safetensors,
)
from .model import TabFMModel, fit_context, forward, predict_queries, stages
from .predictor import NO_WEIGHTS, WHERE_WEIGHTS, Settings, check_task, predict

__all__ = ["NO_WEIGHTS", "WHERE_WEIGHTS", "Checkpoint", "Settings", "TabFMModel", "check_task",
           "convert", "fit_context", "forward", "load", "predict", "predict_queries",
           "random_checkpoint", "read_checkpoint", "save_pretrained", "stages",
           "write_safetensors"]


@lru_cache(maxsize=4)
def _load(path: str, task: str | None, mtime: float) -> TabFMModel:
    checkpoint = read_checkpoint(path, task)
    return TabFMModel(checkpoint.config, checkpoint.tensors)


def load(path: str | PathLike, task: str | None = None) -> TabFMModel:
    """The model of a checkpoint (folder, parent folder with ``task``, or converted file),
    cached per path, task and the weights file's modification time."""
    p = Path(path).resolve()
    weights = p
    if p.is_dir():
        from .checkpoint import WEIGHTS_NAME, resolve
        weights = resolve(p, task) / WEIGHTS_NAME
    mtime = weights.stat().st_mtime if weights.exists() else 0.0
    return _load(str(p), task, mtime)
