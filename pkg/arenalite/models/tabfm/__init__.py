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

from .checkpoint import (
    Checkpoint,
    convert,
    random_checkpoint,
    read_checkpoint,
    save_pretrained,
    write_safetensors,
)
from .model import TabFMModel, fit_context, forward, load, predict_queries, stages
from .predictor import NO_WEIGHTS, WHERE_WEIGHTS, Settings, check_task, predict

__all__ = ["NO_WEIGHTS", "WHERE_WEIGHTS", "Checkpoint", "Settings", "TabFMModel", "check_task",
           "convert", "fit_context", "forward", "load", "predict", "predict_queries",
           "random_checkpoint", "read_checkpoint", "save_pretrained", "stages",
           "write_safetensors"]
