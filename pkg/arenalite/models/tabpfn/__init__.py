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

from .. import checkpoint_cache
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
    check_task,
    predict_proba,
    predict_regression,
)

__all__ = ["NO_WEIGHTS", "WHERE_WEIGHTS", "Checkpoint", "Context", "Settings", "TabPFNModel",
           "check_task", "convert", "expected_shapes", "fit_context", "forward", "load",
           "load_cached", "predict_proba", "predict_queries", "predict_regression",
           "random_checkpoint", "read_checkpoint", "stages", "write_safetensors"]


def load_cached(path: str | PathLike | None) -> TabPFNModel:
    """The model of a checkpoint file (``.ckpt`` or converted ``.safetensors``), cached per
    file and modification time (:mod:`arenalite.models.checkpoint_cache`); ``None`` raises
    the message saying where weights come from."""
    if path is None:
        raise ValueError(NO_WEIGHTS)
    return checkpoint_cache.load(path, load, f"TabPFN checkpoint {str(path)!r} does not "
                                 f"exist; {WHERE_WEIGHTS}")
