"""The TabICL checkpoint reference the bridge's JavaScript reader is tested against.

Writes tests/data/tabicl/checkpoint_reference.json (per committed good checkpoint: its
full config as arenalite's Python reader completes it and, in state-dict order, the first
16 hex digits of the sha256 of each tensor's little-endian float32 bytes) and
tests/data/tabicl/tiny.safetensors (tiny.ckpt converted by the Python reader). No torch:
``.venv-pins/bin/python scripts/make_tabicl_js_reference.py``.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np

from arenalite.models.tabicl import checkpoint as ck

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "tabicl"
GOOD = ("tiny", "tiny_bf16", "tiny_f16", "tiny_f64", "tiny_views", "classifier_small",
        "regressor_small", "classifier_wide")


def digest(arr: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(arr, "<f4").tobytes()).hexdigest()[:16]


def main() -> None:
    out = {}
    for name in GOOD:
        c = ck.read_checkpoint(DATA / f"{name}.ckpt")
        out[name] = {"config": c.config, "sha256_16": [digest(a) for a in c.tensors.values()]}
    (DATA / "checkpoint_reference.json").write_text(json.dumps(out) + "\n")
    ck.convert(DATA / "tiny.ckpt", DATA / "tiny.safetensors")


if __name__ == "__main__":
    main()
