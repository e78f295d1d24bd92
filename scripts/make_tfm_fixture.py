"""Write the torch-output fixture that lets CI check the numpy ``tabular_fm`` without torch.

Needs the ``[train]`` extra (torch). For each case, the inputs go through arenalite's own
preprocessing (``models.preprocess.prepare``, the clip of ``models.tabular_fm``), the torch
model of ``scripts/train_tfm.py`` runs the forward pass in float32, and the outputs are
turned into probabilities / (mean, spread) by the formulas of docs/models.md. Written:

* ``tests/data/tabular_fm_small.safetensors``: a randomly initialised model of another size
  (d 32, 2 heads, 2 layers) — a user's own weights of the same architecture;
* ``tests/data/tabular_fm_torch.npz``: inputs and torch outputs, for that model on random
  shapes and for the shipped weights on slices of the bundled datasets.

    python scripts/make_tfm_fixture.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "pkg"), str(ROOT / "scripts")]

import train_tfm  # noqa: E402

from arenalite import datasets  # noqa: E402
from arenalite.models import preprocess, tabular_fm  # noqa: E402

OUT = ROOT / "tests" / "data"
SMALL = {"d_model": 32, "n_heads": 2, "n_layers": 2, "d_mlp": 48, "max_features": 12,
         "max_classes": 5, "max_context": 64, "ln_eps": 1e-5}


def torch_outputs(model: train_tfm.TabularFM, x_train, y_train, x_test, task, n_classes=None):
    """What docs/models.md says the model outputs, computed with the torch forward."""
    if len(x_train) > model.config["max_context"]:
        x_train, y_train = tabular_fm.subsample(x_train, y_train, model.config["max_context"])
    prep = preprocess.prepare(x_train, y_train, x_test, task, n_classes)
    xc = torch.tensor(np.clip(prep.x_train, -10, 10).astype(np.float32))[None]
    xq = torch.tensor(np.clip(prep.x_test, -10, 10).astype(np.float32))[None]
    regression = prep.n_classes is None
    if regression:
        mean, std = preprocess.target_stats(prep.y_train)
        yc = torch.tensor(((prep.y_train - mean) / std).astype(np.float32))[None]
    else:
        yc = torch.tensor(prep.y_train)[None]
    with torch.no_grad():
        out = model(xc, yc, xq, regression)[0].numpy().astype(np.float64)
    if regression:
        sigma = np.logaddexp(0.0, out[:, 1]) + tabular_fm.MIN_SIGMA
        return np.stack([out[:, 0] * std + mean, sigma * std], axis=1)
    logits = out[:, :prep.n_classes]
    e = np.exp(logits - logits.max(1, keepdims=True))
    return e / e.sum(1, keepdims=True)


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(3)
    small = train_tfm.TabularFM(SMALL, seed=3)
    with torch.no_grad():  # larger than the initialisation, so the layers mix visibly
        for p in small.parameters():
            p.add_(0.2 * torch.randn_like(p))
    tabular_fm.write_weights(OUT / "tabular_fm_small.safetensors", SMALL,
                             train_tfm.tensors_of(small))
    rng = np.random.default_rng(7)
    arrays: dict[str, np.ndarray] = {}
    cases = [("small_bin", 40, 17, 5, "binary", 2), ("small_multi", 90, 33, 12, "multiclass", 5),
             ("small_reg", 25, 9, 1, "regression", None), ("small_ctx", 100, 7, 3, "binary", 2)]
    for name, n, m, f, task, c in cases:
        x_train = rng.normal(size=(n, f)) * rng.uniform(0.5, 3, f)
        x_test = rng.normal(size=(m, f)) * 2
        y = rng.integers(0, c, n) if c else rng.normal(size=n) * 30 + 100
        if c:
            y[:c] = np.arange(c)
        arrays.update({f"{name}.x_train": x_train, f"{name}.y_train": y,
                       f"{name}.x_test": x_test,
                       f"{name}.out": torch_outputs(small, x_train, y, x_test, task, c)})
    shipped = tabular_fm.DEFAULT_PATH
    if shipped.exists():
        model = train_tfm.TabularFM(tabular_fm.read_weights(shipped).config)
        load_into(model, tabular_fm.read_weights(shipped).tensors)
        for ds_name in ("iris", "diabetes"):
            ds = datasets.load(ds_name)
            x, y = ds.X[:120], ds.y[:120]
            task = ds.task
            out = torch_outputs(model, x[:90], y[:90], x[90:], task,
                                ds.n_classes if task != "regression" else None)
            arrays[f"shipped_{ds_name}.out"] = out
    np.savez_compressed(OUT / "tabular_fm_torch.npz", **arrays)
    print(f"wrote {OUT / 'tabular_fm_small.safetensors'} and {OUT / 'tabular_fm_torch.npz'} "
          f"({len(arrays)} arrays)")
    return 0


def load_into(model: train_tfm.TabularFM, tensors: dict[str, np.ndarray]) -> None:
    """Load docs/models.md tensors into the torch model (feature codes become the identity)."""
    state = {}
    t = {k: torch.tensor(v) for k, v in tensors.items()}

    def lin(prefix, name):
        state[name + ".weight"] = t[prefix + ".w"].T.contiguous()
        state[name + ".bias"] = t[prefix + ".b"]

    state.update({"cell_w": t["cell.w"], "cell_b": t["cell.b"], "target_cls": t["target.cls"],
                  "target_reg_w": t["target.reg.w"], "target_reg_b": t["target.reg.b"],
                  "target_unknown": t["target.unknown"],
                  "feature_codes": t["feature.emb"],
                  "feature_proj.weight": torch.eye(t["feature.emb"].shape[1])})
    for i in range(model.config["n_layers"]):
        for part, mod in (("fa", "feature_attn"), ("ra", "row_attn")):
            state[f"layers.{i}.{mod}.ln.weight"] = t[f"layers.{i}.{part}.ln.g"]
            state[f"layers.{i}.{mod}.ln.bias"] = t[f"layers.{i}.{part}.ln.b"]
            for n in "qkvo":
                lin(f"layers.{i}.{part}.{n}", f"layers.{i}.{mod}.{n}")
        state[f"layers.{i}.ln.weight"] = t[f"layers.{i}.mlp.ln.g"]
        state[f"layers.{i}.ln.bias"] = t[f"layers.{i}.mlp.ln.b"]
        lin(f"layers.{i}.mlp.w1", f"layers.{i}.w1")
        lin(f"layers.{i}.mlp.w2", f"layers.{i}.w2")
    state.update({"head_ln.weight": t["head.ln.g"], "head_ln.bias": t["head.ln.b"]})
    lin("head.cls", "head_cls")
    lin("head.reg", "head_reg")
    model.load_state_dict(state)


if __name__ == "__main__":
    raise SystemExit(main())
