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
aggregation) as ``TabPFNClassifier.predict_proba`` (not in the model registry yet). For the
regressor, :mod:`.regression` fits each member's target (z-scoring, target transform) and
turns the members' logits into ``TabPFNRegressor.predict``'s outputs (issue 36;
docs/models.md, "TabPFN regression targets and aggregation").
"""

from __future__ import annotations

from .checkpoint import Checkpoint, convert, expected_shapes, read_checkpoint, write_safetensors
from .model import Context, TabPFNModel, fit_context, forward, load, predict_queries, stages
from .predictor import Settings, check_task, predict_proba

__all__ = ["Checkpoint", "Context", "Settings", "TabPFNModel", "check_task", "convert",
           "expected_shapes", "fit_context", "forward", "load", "predict_proba",
           "predict_queries", "read_checkpoint", "stages", "write_safetensors"]

