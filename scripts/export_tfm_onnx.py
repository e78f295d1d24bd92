"""Export the shipped ``tabular_fm`` weights to ONNX for the peer benchmark (ORT-Web).

Needs the ``[train]`` extra plus ``onnx`` (torch's exporter). The graph takes the already
standardized and clipped features — ``x_ctx [1, n, F]``, ``y_ctx [1, n]`` (int64 class ids)
and ``x_q [1, m, F]``, with n, m and F dynamic — and returns the class probabilities of a
binary task ``[1, m, 2]`` (softmax over the first two logits), i.e. what
``arenalite.models.predict`` returns after its preprocessing. It is checked against the
numpy reference with onnxruntime when that is installed.

    python scripts/export_tfm_onnx.py [--out bench/peer/tabular_fm_binary.onnx]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "pkg"), str(ROOT / "scripts")]

import train_tfm  # noqa: E402
from make_tfm_fixture import load_into  # noqa: E402

from arenalite.models import preprocess, tabular_fm  # noqa: E402


class BinaryProbabilities(torch.nn.Module):
    """The torch model with a binary head: softmax over the first two class logits."""

    def __init__(self, model: train_tfm.TabularFM) -> None:
        super().__init__()
        self.model = model

    def forward(self, x_ctx, y_ctx, x_q):
        f = x_ctx.shape[2]
        emb = self.model.feature_embedding()[:f]
        n_ctx = x_ctx.shape[1]
        m = self.model
        x = torch.cat([x_ctx, x_q], dim=1)
        cells = x[..., None] * m.cell_w + m.cell_b + emb
        t_ctx = m.target_cls[y_ctx]
        t_q = m.target_unknown.expand(1, x_q.shape[1], -1)
        h = torch.cat([cells, torch.cat([t_ctx, t_q], dim=1)[:, :, None]], dim=2)
        for layer in m.layers:
            h = layer(h, n_ctx)
        logits = m.head_cls(m.head_ln(h[:, n_ctx:, -1]))[..., :2]
        return torch.softmax(logits, dim=-1)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "peer" / "tabular_fm_binary.onnx")
    args = ap.parse_args(argv)
    weights = tabular_fm.read_weights()
    model = train_tfm.TabularFM(weights.config)
    load_into(model, weights.tensors)
    model.eval()
    wrapper = BinaryProbabilities(model)
    rng = np.random.default_rng(0)
    x_ctx = torch.tensor(rng.normal(size=(1, 20, 5)), dtype=torch.float32)
    y_ctx = torch.tensor(rng.integers(0, 2, (1, 20)))
    x_q = torch.tensor(rng.normal(size=(1, 7, 5)), dtype=torch.float32)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    torch.onnx.export(wrapper, (x_ctx, y_ctx, x_q), str(args.out), dynamo=False,
                      input_names=["x_ctx", "y_ctx", "x_q"], output_names=["proba"],
                      dynamic_axes={"x_ctx": {1: "n", 2: "F"}, "y_ctx": {1: "n"},
                                    "x_q": {1: "m", 2: "F"}, "proba": {1: "m"}},
                      opset_version=17)
    print(f"wrote {args.out} ({args.out.stat().st_size / 1e6:.2f} MB)")
    try:
        import onnxruntime as ort
    except ImportError:
        return 0
    session = ort.InferenceSession(str(args.out))
    for n, m, f in ((128, 48, 4), (128, 48, 30), (300, 20, 64)):
        xtr, xte = rng.normal(size=(n, f)), rng.normal(size=(m, f))
        y = rng.integers(0, 2, n)
        prep = preprocess.prepare(xtr, y, xte, "binary")
        feeds = {"x_ctx": np.clip(prep.x_train, -10, 10).astype(np.float32)[None],
                 "y_ctx": y[None].astype(np.int64),
                 "x_q": np.clip(prep.x_test, -10, 10).astype(np.float32)[None]}
        got = session.run(None, feeds)[0][0]
        ref = tabular_fm.forward(tabular_fm.Model(weights), prep)[0]
        print(f"onnxruntime vs numpy at n={n}, m={m}, F={f}: max |diff| "
              f"{np.abs(got - ref).max():.2e}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
