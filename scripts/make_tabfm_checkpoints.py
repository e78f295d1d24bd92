"""Write the Google TabFM checkpoint fixtures that let CI test
``arenalite.models.tabfm.checkpoint`` without torch.

Needs torch and the ``tabfm`` package (1.0.1, ``tabfm[pytorch]``: the ``[tabfm]`` extra);
CI never runs it, it reads what it wrote. Every checkpoint is the package's own
``TabFM_HF`` (``tabfm.src.pytorch.tabfm_v1_0_0``) with every tensor replaced by
``arenalite.models.tabfm.checkpoint.random_checkpoint``'s draws (the package starts its
Fourier frequencies at zero, its RMSNorm scales at one and its per-dimension scales at
zero; here none is), saved by the package's ``save_pretrained``, the hub's keys added to
config.json (``task``, ``model_type``, ``version``, ``framework``), and loaded back with
the package's ``tabfm_v1_0_0.load(task, parent, dtype=None)`` to check it reads the same
tensors. Written to ``tests/data/tabfm/``:

* ``small/classification/`` and ``small/regression/``: the hub's parent layout, a small
  architecture (embed 16, max_classes 5, 8 frequencies);
* ``wide/``: one folder of other widths and depths (embed 24, 7 classes, groups of 4,
  3 CLS tokens, 3 row and ICL blocks, 1 column block, decoder_hidden 20, ff_factor 3);
* ``shapes.json``: per config (v1.0.0's classifier and regressor, and configs turning each
  switch), the state dict's names and shapes in order, as ``TabFM(**config)`` has them
  (built on torch's meta device: no memory for v1.0.0's 1.6 billion weights), after
  checking :func:`expected_shapes` gives exactly that;
* ``manifest.json``: per fixture, its config and each tensor's SHA-256 (float32 bytes).

No real TabFM weights are used or committed.

    /work/main/.venv-tabfm/bin/python scripts/make_tabfm_checkpoints.py
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
from pathlib import Path

import numpy as np
import torch

torch.set_num_threads(1)

from tabfm.src.pytorch import tabfm_v1_0_0  # noqa: E402
from tabfm.src.pytorch.model import TabFM  # noqa: E402

from arenalite.models.tabfm import checkpoint as ck  # noqa: E402

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "tabfm"
HUB = {"model_type": "tabfm", "version": "1.0.0", "framework": "pytorch"}
SMALL = {"embed_dim": 16, "max_classes": 5, "col_num_blocks": 2, "col_nhead": 2,
         "col_num_inds": 6, "row_num_blocks": 2, "row_nhead": 2, "row_num_cls": 2,
         "icl_num_blocks": 2, "icl_nhead": 4, "ff_factor": 2, "feature_group_size": 3,
         "num_freq": 8, "decoder_hidden": None}
WIDE = {"embed_dim": 24, "max_classes": 7, "col_num_blocks": 1, "col_nhead": 3,
        "col_num_inds": 5, "row_num_blocks": 3, "row_nhead": 4, "row_num_cls": 3,
        "icl_num_blocks": 3, "icl_nhead": 6, "ff_factor": 3, "feature_group_size": 4,
        "num_freq": 5, "decoder_hidden": 20}
FIXTURES = {
    "small/classification": ({**SMALL, "is_classifier": True}, 1),
    "small/regression": ({**SMALL, "is_classifier": False}, 2),
    "wide": ({**WIDE, "is_classifier": True}, 3),
}
V1 = {k: v for k, v in ck.V1_0_0.items()}
SHAPE_CASES = {
    "v1_0_0_classification": {**V1, "is_classifier": True},
    "v1_0_0_regression": {**V1, "is_classifier": False},
    "v1_0_0_decoder_hidden": {**V1, "decoder_hidden": 1024},
    "package_defaults": {},
    "regression_defaults": {"is_classifier": False},
    "no_blocks": {"col_num_blocks": 0, "row_num_blocks": 0, "icl_num_blocks": 0},
    "one_class_group_one": {"max_classes": 1, "feature_group_size": 1, "num_freq": 1},
    "wide": WIDE,
    "odd_heads": {"embed_dim": 12, "col_nhead": 3, "row_nhead": 3, "icl_nhead": 5,
                  "row_num_cls": 5, "ff_factor": 1, "col_num_inds": 1},
}


def package_shapes(config: dict) -> dict[str, list[int]]:
    with torch.device("meta"):
        model = TabFM(**config)
    return {k: list(v.shape) for k, v in model.state_dict().items()}


def sha(arr: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(arr, "<f4").tobytes()).hexdigest()


def write_fixture(name: str, config: dict, seed: int) -> dict:
    arch = {k: v for k, v in config.items() if k in ck.ARCHITECTURE}
    random = ck.random_checkpoint(arch, seed)
    model = tabfm_v1_0_0.TabFM_HF(**arch)
    initial = {k: v.clone() for k, v in model.state_dict().items()}
    state = {k: torch.from_numpy(v.copy()) for k, v in random.tensors.items()}
    model.load_state_dict(state, strict=True)
    for key, before in initial.items():  # every tensor re-drawn, none left at its init
        if torch.equal(before, model.state_dict()[key]):
            raise SystemExit(f"{name}: {key} still holds the package's initial values")
    out = DATA / name
    if out.exists():
        shutil.rmtree(out)
    model.save_pretrained(out)
    (out / "README.md").unlink(missing_ok=True)
    cfg_path = out / "config.json"
    saved = json.loads(cfg_path.read_text())
    task = "classification" if arch["is_classifier"] else "regression"
    saved.update({"task": task, **HUB})
    cfg_path.write_text(json.dumps(saved, indent=2, sort_keys=True) + "\n")
    parent = out.parent if name.startswith("small/") else out
    loaded = tabfm_v1_0_0.load(task, str(parent), dtype=None, use_cache=False)
    ours = ck.read_checkpoint(parent, task)
    theirs = {k: v.numpy() for k, v in loaded.state_dict().items()}
    if list(theirs) != list(ours.tensors) or any(
            theirs[k].tobytes() != ours.tensors[k].tobytes() for k in theirs):
        raise SystemExit(f"{name}: the package and arenalite read different tensors")
    if loaded.is_classifier != ours.config["is_classifier"]:
        raise SystemExit(f"{name}: the package and arenalite read different tasks")
    print(f"{name}: {len(theirs)} tensors, {sum(v.size for v in theirs.values())} weights")
    return {"config": saved, "task": task,
            "tensors": {k: [list(v.shape), sha(v)] for k, v in theirs.items()}}


def main() -> int:
    DATA.mkdir(parents=True, exist_ok=True)
    shapes = {}
    for case, config in SHAPE_CASES.items():
        theirs = package_shapes(config)
        ours = {k: list(v) for k, v in ck.expected_shapes(config).items()}
        if list(theirs.items()) != list(ours.items()):
            diff = [k for k in set(theirs) | set(ours) if theirs.get(k) != ours.get(k)]
            raise SystemExit(f"shape case {case}: expected_shapes differs from "
                             f"TabFM(**config).state_dict() at {sorted(diff)[:5]}")
        shapes[case] = {"config": config, "shapes": [[k, v] for k, v in theirs.items()]}
        print(f"shapes {case}: {len(theirs)} tensors match")
    (DATA / "shapes.json").write_text(json.dumps(shapes, indent=0) + "\n")
    manifest = {name: write_fixture(name, config, seed)
                for name, (config, seed) in FIXTURES.items()}
    (DATA / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
