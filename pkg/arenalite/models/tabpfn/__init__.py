"""TabPFN v3 (the ``tabpfn`` package, Apache-2.0): its checkpoints read without torch, and
its raw forward in numpy.

:mod:`.checkpoint` reads the package's v3 ``.ckpt`` (and ``.safetensors``) files and
arenalite's converted safetensors, and refuses every other generation by name.
:mod:`.model` runs one model call's forward on already-preprocessed inputs, one stage per
module (:mod:`.cells`, :mod:`.column`, :mod:`.row`, :mod:`.icl`, :mod:`.decoder`), with the
context's caches computed once per split. :mod:`.ensemble` draws the members' configs from
``random_state`` and :mod:`.preprocessing` runs each member's CPU pipeline (cleaning,
reshape transforms, categorical encoding, SVD, row fingerprint, shuffle, soft clip) as the
package does; the end-to-end predictor, the aggregation and the registry model are not here
yet (issue 36; docs/models.md, "TabPFN preprocessing and ensemble", lists what is done).
"""

from __future__ import annotations

from .checkpoint import Checkpoint, convert, expected_shapes, read_checkpoint, write_safetensors
from .model import Context, TabPFNModel, fit_context, forward, load, predict_queries, stages

__all__ = ["Checkpoint", "Context", "TabPFNModel", "convert", "expected_shapes",
           "fit_context", "forward", "load", "predict_queries", "read_checkpoint", "stages",
           "write_safetensors"]
