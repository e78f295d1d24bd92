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

from functools import lru_cache
from os import PathLike
from pathlib import Path

from .checkpoint import Checkpoint, convert, random_checkpoint, read_checkpoint, write_safetensors
from .model import TabICLModel, fit_context, forward, predict_queries, stages
from .predictor import NO_WEIGHTS, WHERE_WEIGHTS, Settings, check_task, predict

__all__ = ["NO_WEIGHTS", "WHERE_WEIGHTS", "Checkpoint", "Settings", "TabICLModel", "check_task",
           "convert", "fit_context", "forward", "load", "predict", "predict_queries",
           "random_checkpoint", "read_checkpoint", "stages", "write_safetensors"]


@lru_cache(maxsize=4)
def _load(path: str, mtime: float) -> TabICLModel:
    checkpoint = read_checkpoint(path)
    return TabICLModel(checkpoint.config, checkpoint.tensors)


def load(path: str | PathLike | None) -> TabICLModel:
    """The model of a checkpoint file (``.ckpt`` or converted ``.safetensors``), cached per
    file and modification time; ``None`` raises the message saying where weights come from."""
    if path is None:
        raise ValueError(NO_WEIGHTS)
    p = Path(path).resolve()
    if not p.is_file():
        raise ValueError(f"TabICL checkpoint {str(path)!r} does not exist; {WHERE_WEIGHTS}")
    return _load(str(p), p.stat().st_mtime)
