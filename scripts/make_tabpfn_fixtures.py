"""Write the TabPFN v3 forward fixtures CI checks the numpy forward against.

Needs the ``[tabpfn]`` extra (torch and ``tabpfn`` 9.2.0; CI never installs it). It reads
the random-weight v3 checkpoints ``scripts/make_tabpfn_checkpoints.py`` wrote into
``tests/data/tabpfn/``, loads each with the package's ``load_model``, calls the package's
architecture (``TabPFNV3.forward``, eval mode, float32 on the CPU, the default performance
options, as ``fit_mode="low_memory"`` calls it: ``model(X (R, 1, F), y (N,))``) on
already-preprocessed inputs, records each stage's output with forward hooks, and writes per
case ``tests/data/tabpfn/forward_<case>.npz``:

- ``x`` (context rows then query rows, float32, NaN/±inf cells where the case has them),
  ``y_train``;
- ``grouped``: ``_preprocess_and_group``'s grouped cells (R, F, G or 2G);
- ``column``: ``feature_distribution_embedder``'s output (R, F, E); ``hidden_<i>``: each
  induced block's hidden points (``cross_attn_block1``'s output, F, I, E);
- ``row``: ``column_aggregator``'s output flattened (R, Cl · E);
- ``icl_<i>``: each ICL block's output (R, D); ``icl``: ``output_norm``'s output (R, D);
- ``logits``: the forward's output (M, n_out).

``forward.json`` lists the cases (checkpoint, rows, features, classes) for the tests.

    /work/main/.venv-tabpfn/bin/python scripts/make_tabpfn_fixtures.py
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import torch

torch.set_num_threads(1)

from tabpfn.model_loading import load_model  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "tabpfn"

CASES = {
    # name: checkpoint, context rows, query rows, features, classes (0: regression), cells
    "classifier": ("classifier_small.ckpt", 40, 13, 5, 7, "finite"),
    "classifier_nan_inf": ("classifier_small.ckpt", 36, 11, 4, 10, "nan_inf"),
    "regressor": ("regressor_small.ckpt", 44, 12, 6, 0, "finite"),
    "regressor_two_features": ("regressor_small.ckpt", 30, 9, 2, 0, "nan_inf"),
    "one_feature": ("classifier_small.ckpt", 25, 7, 1, 3, "finite"),
    "wide_many_classes": ("classifier_wide.ckpt", 60, 14, 7, 12, "nan_inf"),
}


def inputs(seed: int, n: int, m: int, f: int, classes: int, cells: str):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n + m, f)).astype(np.float32) * rng.uniform(0.5, 3, f).astype(
        np.float32)
    if cells == "nan_inf":
        mask = rng.random(x.shape)
        x[mask < 0.08] = np.nan
        x[(mask >= 0.08) & (mask < 0.11)] = np.inf
        x[(mask >= 0.11) & (mask < 0.14)] = -np.inf
        x[:, -1] = np.where(np.arange(n + m) < n, np.nan, x[:, -1])  # no finite context cell
        if f > 2:
            x[:n, 0] = 1.5  # a constant context column (std 0 → 1)
            x[n:, 0] = np.where(np.isfinite(x[n:, 0]), x[n:, 0], 0.0)
    if classes:
        y = np.concatenate([np.arange(classes), rng.integers(0, classes, n - classes)])
        y = rng.permutation(y).astype(np.float32)
    else:
        y = (np.nan_to_num(x[:n, 0], posinf=1, neginf=-1) * 0.8
             + rng.normal(size=n)).astype(np.float32)
    return x, y


def run(name: str, ckpt: str, n: int, m: int, f: int, classes: int, cells: str,
        seed: int) -> dict:
    kind = "regressor" if classes == 0 else "classifier"
    models, _, _, _ = load_model(path=DATA / ckpt, estimator_type=kind)
    model = (models[0] if isinstance(models, list) else models).float().eval()
    x, y = inputs(seed, n, m, f, classes, cells)
    rec: dict[str, np.ndarray] = {"x": x, "y_train": y}
    hooks = []

    def keep(key, pick=lambda o: o):
        def hook(_module, _args, output):
            rec[key] = pick(output).detach().clone()[0].numpy()
        return hook

    orig = model._preprocess_and_group

    def preprocess(*args, **kw):
        out = orig(*args, **kw)
        rec["grouped"] = out[0].detach().clone()[0].numpy()
        return out

    model._preprocess_and_group = preprocess
    hooks.append(model.feature_distribution_embedder.register_forward_hook(
        keep("column", lambda o: o[0])))
    for i, layer in enumerate(model.feature_distribution_embedder.layers):
        hooks.append(layer.cross_attn_block1.register_forward_hook(
            lambda _m, _a, o, i=i: rec.__setitem__(f"hidden_{i}", o.detach().clone().numpy())))
    hooks.append(model.column_aggregator.register_forward_hook(
        lambda _m, _a, o: rec.__setitem__("row", o.detach().clone()[0].flatten(-2).numpy())))
    for i, block in enumerate(model.icl_blocks):
        hooks.append(block.register_forward_hook(keep(f"icl_{i}", lambda o: o[0])))
    hooks.append(model.output_norm.register_forward_hook(keep("icl")))
    with torch.no_grad():
        out = model(torch.from_numpy(x)[:, None, :], torch.from_numpy(y))
    for h in hooks:
        h.remove()
    rec["logits"] = out[:, 0].numpy()
    rec = {k: np.ascontiguousarray(v, dtype=np.float32) for k, v in rec.items()}
    assert rec["logits"].shape == (m, model.n_out), rec["logits"].shape
    assert rec["grouped"].shape[:2] == (n + m, f)
    np.savez_compressed(DATA / f"forward_{name}.npz", **rec)
    path = DATA / f"forward_{name}.npz"
    print(f"wrote {path.relative_to(ROOT)} ({path.stat().st_size:,} bytes)")
    return {"checkpoint": ckpt, "context_rows": n, "query_rows": m, "features": f,
            "classes": classes, "cells": cells}


def main() -> int:
    manifest = {name: run(name, *case, seed=i) for i, (name, case) in enumerate(CASES.items())}
    (DATA / "forward.json").write_text(json.dumps(manifest, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
