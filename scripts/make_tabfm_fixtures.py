"""Write the Google TabFM forward fixtures: every stage's output from the package's torch
model (float32) on the checkpoints of scripts/make_tabfm_checkpoints.py, for
tests/test_tabfm_forward.py.

Needs torch and ``tabfm[pytorch]==1.0.1`` (the ``[tabfm]`` extra); CI never runs it. Each
case loads a fixture with ``tabfm_v1_0_0.load(task, path, dtype=None)`` and calls the model
as the wrappers' PyTorch path does (``_predict_step_pytorch``: one table, ``train_size``
the context rows, ``d`` the active feature count, the query rows' targets −100), with
forward hooks on each stage. Written per case ``tests/data/tabfm/stages_<case>.npz``: the
inputs (``x`` (T, H) with the padded columns past ``d``, ``y`` (N,), ``d``, ``cat_mask``)
and ``cells``, ``column``, ``row``, ``column_2`` (the active columns: CLS and the first
``d``), ``row_2``, ``icl`` (the ICL transformer's output) and ``output``, all rows, and
``output64``, the same model's output in float64 (how far float32 round-off alone takes
the package's own output);
``stages.json`` records each case's shapes and numpy's largest distance when this ran.

    /work/main/.venv-tabfm/bin/python scripts/make_tabfm_fixtures.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import torch

torch.set_num_threads(1)

from tabfm.src.pytorch import tabfm_v1_0_0  # noqa: E402

from arenalite.models.tabfm import model as numpy_model  # noqa: E402
from arenalite.models.tabfm import read_checkpoint  # noqa: E402

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "tabfm"
CASES = {
    # name: (checkpoint, task, context rows, query rows, columns, active d, classes,
    #        categorical columns, missing cells)
    "binary": ("small", "classification", 40, 13, 6, 6, 2, (1, 4), True),
    "multiclass_padded": ("small", "classification", 48, 17, 7, 4, 5, (0,), False),
    "regression": ("small", "regression", 36, 11, 5, 5, 0, (2,), True),
    "few_features": ("small", "classification", 30, 9, 2, 2, 3, (), False),
    "one_feature_regression": ("small", "regression", 25, 6, 3, 1, 0, (), False),
    "wide": ("wide", "classification", 44, 15, 9, 8, 7, (3, 5, 6), True),
}


def inputs(seed: int, n: int, m: int, h: int, d: int, classes: int, cats: tuple,
           missing: bool):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n + m, h)).astype(np.float32)
    for j in cats:
        x[:, j] = rng.integers(0, 4, n + m).astype(np.float32)
    if missing:
        x[rng.random(x.shape) < 0.08] = np.nan
    x[:, d:] = 0.0  # the batch's padding past the member's active columns
    if classes:
        y = rng.integers(0, classes, n).astype(np.int64)
        y[:classes] = np.arange(classes)
    else:
        y = (rng.normal(size=n) * 1.3 + 0.2).astype(np.float32)
    cat_mask = np.zeros(h, bool)
    cat_mask[list(cats)] = True
    return x, y, cat_mask


def run(name: str, ckpt: str, task: str, n: int, m: int, h: int, d: int, classes: int,
        cats: tuple, missing: bool, seed: int) -> dict:
    path = DATA / ckpt
    model = tabfm_v1_0_0.load(task, str(path), dtype=None, use_cache=False)
    x, y, cat_mask = inputs(seed, n, m, h, d, classes, cats, missing)
    grabbed: dict[str, np.ndarray] = {}

    def keep(key):
        def hook(_module, _args, output):
            grabbed[key] = output.detach().numpy()[0].copy()
        return hook

    for key, module in (("cells", model.cell_embedder), ("column", model.col_embedder),
                        ("row", model.row_interactor), ("column_2", model.col_embedder_2),
                        ("row_2", model.row_interactor_2),
                        ("icl", model.icl_predictor.tf_icl)):
        module.register_forward_hook(keep(key))
    y_full = np.concatenate([y.astype(np.float32 if task == "regression" else np.int64),
                             np.full(m, -100, dtype=np.float32 if task == "regression"
                                     else np.int64)])
    with torch.no_grad():
        out = model(torch.from_numpy(x)[None], torch.from_numpy(y_full)[None],
                    torch.tensor([n]), cat_mask=torch.from_numpy(cat_mask)[None],
                    d=torch.tensor([d]))
    c = model.row_interactor.num_cls
    rec = {"x": x, "y": y, "d": np.int64(d), "cat_mask": cat_mask,
           "cells": grabbed["cells"][:, :d], "column": grabbed["column"][:, :d],
           "row": grabbed["row"][:, :c + d], "column_2": grabbed["column_2"][:, :c + d],
           "row_2": grabbed["row_2"], "icl": grabbed["icl"], "output": out.numpy()[0]}
    rec = {k: (v.astype(np.float32) if v.dtype == np.float64 else v) for k, v in rec.items()}
    model.double()  # the same weights in float64: how far float32 itself is from exact
    y64 = y_full.astype(np.float64) if task == "regression" else y_full
    with torch.no_grad():
        out64 = model(torch.from_numpy(x.astype(np.float64))[None], torch.from_numpy(y64)[None],
                      torch.tensor([n]), cat_mask=torch.from_numpy(cat_mask)[None],
                      d=torch.tensor([d]))
    rec["output64"] = out64.numpy()[0]
    np.savez_compressed(DATA / f"stages_{name}.npz", **rec)
    checkpoint = read_checkpoint(path, task)
    ours = numpy_model.stages(numpy_model.TabFMModel(checkpoint.config, checkpoint.tensors),
                              x[:n], y, x[n:], d=d, cat_mask=cat_mask)
    dist = {k: float(np.abs(ours[k] - rec[k]).max()) for k in ours}
    dist["torch_to_float64"] = float(np.abs(rec["output"] - rec["output64"]).max())
    dist["numpy_to_float64"] = float(np.abs(ours["output"] - rec["output64"]).max())
    print(name, {k: f"{v:.1e}" for k, v in dist.items()})
    return {"checkpoint": ckpt, "task": task, "context": n, "query": m, "columns": h, "d": d,
            "classes": classes, "categorical": list(cats), "missing": missing,
            "shapes": {k: list(v.shape) for k, v in rec.items()},
            "numpy_max_abs_distance": dist}


def main() -> int:
    manifest = {name: run(name, *case, seed=i) for i, (name, case) in enumerate(CASES.items())}
    (DATA / "stages.json").write_text(json.dumps(manifest, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
