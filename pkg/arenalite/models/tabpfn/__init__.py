"""TabPFN v3 (the ``tabpfn`` package, Apache-2.0): its checkpoints read without torch.

:mod:`.checkpoint` reads the package's v3 ``.ckpt`` (and ``.safetensors``) files and
arenalite's converted safetensors, and refuses every other generation by name. The forward
pass, the preprocessing and the registry model are not here yet (issue 36).
"""

from __future__ import annotations

from .checkpoint import Checkpoint, convert, expected_shapes, read_checkpoint, write_safetensors

__all__ = ["Checkpoint", "convert", "expected_shapes", "read_checkpoint", "write_safetensors"]
