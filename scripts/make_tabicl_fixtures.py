"""Write the TabICL parity fixtures CI checks the numpy reference against.

Needs the ``tabicl`` extra (torch and the ``tabicl`` package; CI never installs it):
``pip install -e ".[tabicl]"``, then ``python scripts/make_tabicl_fixtures.py``. It reads
the random-weight checkpoints that ``scripts/make_tabicl_checkpoints.py`` wrote into
``tests/data/tabicl/`` (and writes ``classifier_v1.ckpt``, TabICLv1's layout, when missing),
and writes, per case, ``tests/data/tabicl/stages_<case>.npz``:

- the raw model's inputs (``x``: context rows then query rows, ``y_train``) and each
  stage's output from the package's own torch modules on the CPU with autocast off
  (``column``: the column embeddings without the reserved CLS columns, ``row``: the row
  representations, ``output``: ``TabICL.forward``'s logits or raw quantiles);
- the wrappers' results at the package's defaults on the same data
  (``TabICLClassifier(model_path=CKPT, device="cpu").fit(...).predict_proba(...)``, or
  ``TabICLRegressor(...).predict(...)``), as ``wrapper``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import torch
from tabicl import TabICLClassifier, TabICLRegressor
from tabicl._model.inference_config import InferenceConfig
from tabicl._model.tabicl import TabICL

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "data" / "tabicl"

CASES = {
    # name: checkpoint, context rows, query rows, features, classes (0: regression)
    "binary": ("classifier_small.ckpt", 60, 17, 5, 2),
    "multiclass_two_features": ("classifier_small.ckpt", 48, 9, 2, 3),
    "many_classes": ("classifier_small.ckpt", 130, 11, 4, 13),
    "wide": ("classifier_wide.ckpt", 70, 13, 7, 4),
    "regression": ("regressor_small.ckpt", 64, 15, 6, 0),
    "v1_layout": ("classifier_v1.ckpt", 50, 12, 6, 3),
}
V1_LAYOUT = {  # TabICLv1's layout: no feature groups, interleaved RoPE; small sizes
    "max_classes": 10, "embed_dim": 16, "col_num_blocks": 2, "col_nhead": 2, "col_num_inds": 8,
    "col_feature_group": False, "col_target_aware": True, "row_num_blocks": 2, "row_nhead": 2,
    "row_num_cls": 2, "row_rope_interleaved": True, "icl_num_blocks": 2, "icl_nhead": 2,
    "zero_init": False,
}


def write_v1_layout(path: Path) -> None:
    """A random-weight classifier in TabICLv1's layout (the package's classifier then
    shares each call's first column embedding with the call's other tables)."""
    torch.manual_seed(1)
    model = TabICL(**V1_LAYOUT)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if not name.endswith("rope.freqs"):
                p.add_(torch.randn_like(p) * 0.05)
    torch.save({"config": V1_LAYOUT, "state_dict": model.state_dict()}, path)


def cpu_config() -> InferenceConfig:
    """The raw model's inference settings on the CPU with autocast off (the wrappers'
    ``use_amp="auto"`` resolves to off on the CPU too)."""
    base = {"device": "cpu", "use_amp": False, "offload": False}
    return InferenceConfig(COL_CONFIG=dict(base), ROW_CONFIG=dict(base), ICL_CONFIG=dict(base))


def data(case: str, n: int, m: int, h: int, classes: int) -> tuple[np.ndarray, np.ndarray]:
    """Features with some structure (a skewed column, a near-constant one) and a target
    that depends on them, so preprocessing and the model both matter."""
    rng = np.random.default_rng(len(case) * 7919 + h)
    x = rng.normal(size=(n + m, h))
    x[:, 0] = np.exp(x[:, 0])
    signal = x @ rng.normal(size=h)
    if classes:
        edges = np.quantile(signal[:n], np.linspace(0, 1, classes + 1)[1:-1])
        y = np.searchsorted(edges, signal[:n]).astype(np.float64)
    else:
        y = 3.0 * signal[:n] + rng.normal(size=n) + 10.0
    return x.astype(np.float32), y


def main() -> None:
    torch.set_num_threads(1)
    torch.manual_seed(0)
    index = {}
    for case, (ckpt, n, m, h, classes) in CASES.items():
        path = OUT / ckpt
        if case == "v1_layout" and not path.exists():
            write_v1_layout(path)
        checkpoint = torch.load(path, map_location="cpu", weights_only=True)
        model = TabICL(**checkpoint["config"])
        model.load_state_dict(checkpoint["state_dict"])
        model.eval()
        x, y = data(case, n, m, h, classes)
        xt, yt = torch.from_numpy(x)[None], torch.from_numpy(y.astype(np.float32))[None]
        config = cpu_config()
        with torch.no_grad():
            column = model.col_embedder(xt.clone(), y_train=yt, mgr_config=config.COL_CONFIG)
            row = model.row_interactor(column.clone(), mgr_config=config.ROW_CONFIG)
            output = model(xt.clone(), yt, inference_config=config)
        if classes:
            wrapper = TabICLClassifier(model_path=str(path), device="cpu")
            wrapper.fit(x[:n].astype(np.float64), y.astype(np.int64))
            predicted = wrapper.predict_proba(x[n:].astype(np.float64))
        else:
            wrapper = TabICLRegressor(model_path=str(path), device="cpu")
            wrapper.fit(x[:n].astype(np.float64), y)
            predicted = wrapper.predict(x[n:].astype(np.float64))
        n_cls = model.row_interactor.num_cls
        np.savez_compressed(
            OUT / f"stages_{case}.npz", x=x, y_train=y,
            column=column[0, :, n_cls:].numpy(), row=row[0].numpy(),
            output=output[0].float().numpy(), wrapper=np.asarray(predicted, dtype=np.float64))
        index[case] = {"checkpoint": ckpt, "context_rows": n, "query_rows": m, "features": h,
                       "classes": classes}
        print(f"{case}: {ckpt}, {n} + {m} rows × {h} features, output {tuple(output.shape)}")
    (OUT / "stages.json").write_text(json.dumps(index, indent=1) + "\n")


if __name__ == "__main__":
    main()
