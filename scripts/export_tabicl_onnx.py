"""Export TabICLv2's raw forward (one ensemble member, random full-size weights) to ONNX for
the peer benchmark (``bench/bench_webgpu_peer.py --model tabicl``, ORT-Web).

Run with the interpreter that has torch + the ``tabicl`` package + onnx (+ onnxruntime for
the check), e.g. ``/work/venv-tabicl/bin/python scripts/export_tabicl_onnx.py``. It builds
the v2 classifier exactly as ``bench/bench_tabicl.py`` does (``torch.manual_seed(0)``, the
class defaults with ``row_rope_interleaved=False, zero_init=False``: 27.5 M parameters) and
writes under ``--out`` (default ``build/tabicl_peer/``, git-ignored; ~110 MB per graph):

* ``tabicl_v2_random.safetensors``: the same weights as our safetensors (read by the WebGPU
  side, ``loadTabiclWeights``, and by the numpy side, ``arenalite.models.tabicl.load``);
* ``tabicl_v2_{n}_{m}_{h}.onnx`` per benchmark shape (static shapes: the package's forward
  has data-dependent Python control flow, e.g. the class count of ``y_train``, so the traced
  graph holds for one shape and one class count). Inputs ``X [1, n + m, h]`` float32 and
  ``y_train [1, n]`` float32 (class ids 0..2), output ``logits [1, m, 3]``: what
  ``model(X, y_train, inference_config=<CPU, use_amp False, offload False>)`` returns, one
  member's raw logits, the same as ``arenalite.models.tabicl.forward``;
* ``tabicl_v2_{n}_{m}_{h}.npz``: the inputs and torch's output, for the benchmark's check.

**The one operator patched for the export.** ``tabicl._model.layers.SkippableLinear`` (the
column stage's ``in_linear``) ends with ``out[skip_mask] = skip_value``, a boolean-mask
``index_put_``. Traced (``dynamo=False``, opset 17) it becomes a ``Where`` whose operands
onnxruntime refuses at load: ``Node (/m/col_embedder/in_linear/Where) Op (Where)
[ShapeInferenceError] Incompatible dimensions``. The export replaces that forward by the
equivalent ``torch.where(skip_mask[..., None], skip_value, out)`` (same values everywhere;
the rows it affects are the reserved CLS columns, which the row stage overwrites anyway).
Every other part of the forward (the column stage's induced blocks with QASSMax, the
row stage with RoPE and CLS tokens, the ICL stage, the decoder) exports unpatched; the
check below compares onnxruntime CPU with torch (max |diff|) and lists the graph's
operator types.

    /work/venv-tabicl/bin/python scripts/export_tabicl_onnx.py [--shapes 128x48x4 1024x256x30]
"""

from __future__ import annotations

import argparse
import collections
import inspect
import sys
import time
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "pkg"), str(ROOT / "bench")]

from arenalite.models.tabicl.checkpoint import Checkpoint, write_safetensors  # noqa: E402
from bench_tabicl import v2_config  # noqa: E402
from forward_bench import data  # noqa: E402

WEIGHTS = "tabicl_v2_random.safetensors"


def patch_skippable_linear() -> None:
    """SkippableLinear.forward with ``torch.where`` instead of a boolean-mask assignment."""
    from tabicl._model import layers

    def forward(self, src):
        out = torch.nn.functional.linear(src, self.weight, self.bias)
        skip_mask = (src == self.skip_value).all(dim=-1)
        return torch.where(skip_mask[..., None], torch.full_like(out[..., :1], self.skip_value),
                           out)

    layers.SkippableLinear.forward = forward


class Member(torch.nn.Module):
    """One member's raw forward, CPU float32, no autocast, no offload."""

    def __init__(self, model, inference_config) -> None:
        super().__init__()
        self.m = model
        self.icfg = inference_config

    def forward(self, X, y_train):
        return self.m(X, y_train, inference_config=self.icfg)


def build():
    from tabicl._model.inference_config import InferenceConfig
    from tabicl._model.tabicl import TabICL

    torch.manual_seed(0)
    config = v2_config(TabICL)
    model = TabICL(**config).eval()
    base = {"device": "cpu", "use_amp": False, "offload": False}
    icfg = InferenceConfig(COL_CONFIG=dict(base), ROW_CONFIG=dict(base), ICL_CONFIG=dict(base))
    return config, model, icfg


def shape_name(n: int, m: int, h: int) -> str:
    return f"tabicl_v2_{n}_{m}_{h}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "build" / "tabicl_peer")
    ap.add_argument("--shapes", nargs="+", default=["128x48x4", "1024x256x30"],
                    help="context x query rows x features, one graph each")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--unpatched", action="store_true",
                    help="export SkippableLinear as the package has it (to see onnxruntime "
                         "refuse the graph); writes *_unpatched.onnx")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    args.out.mkdir(parents=True, exist_ok=True)
    config, model, icfg = build()
    state = {k: v.detach().numpy().copy() for k, v in model.state_dict().items()}
    keep = set(inspect.signature(type(model).__init__).parameters) - {"self"}
    ckpt = Checkpoint({k: v for k, v in config.items() if k in keep and k != "recompute"},
                      state)
    path = write_safetensors(ckpt, args.out / WEIGHTS)
    print(f"wrote {path} ({path.stat().st_size / 1e6:.1f} MB, "
          f"{sum(v.size for v in state.values()) / 1e6:.2f} M parameters)", flush=True)
    if not args.unpatched:
        patch_skippable_linear()
    wrapper = Member(model, icfg).eval()
    for spec in args.shapes:
        n, m, h = (int(v) for v in spec.split("x"))
        x, y = data(n, m, h)
        xt, yt = torch.from_numpy(x)[None], torch.from_numpy(y)[None]
        with torch.no_grad():
            ref = wrapper(xt, yt).numpy()
        onnx_path = args.out / f"{shape_name(n, m, h)}{'_unpatched' if args.unpatched else ''}.onnx"
        t0 = time.perf_counter()
        with torch.no_grad():
            torch.onnx.export(wrapper, (xt, yt), str(onnx_path), dynamo=False,
                              input_names=["X", "y_train"], output_names=["logits"],
                              opset_version=17)
        print(f"wrote {onnx_path} ({onnx_path.stat().st_size / 1e6:.1f} MB) in "
              f"{time.perf_counter() - t0:.0f} s; torch output {ref.shape}", flush=True)
        if not args.unpatched:
            np.savez(args.out / f"{shape_name(n, m, h)}.npz", x=x, y=y, torch=ref[0])
        import onnx

        ops = collections.Counter(node.op_type for node in onnx.load(str(onnx_path)).graph.node)
        print("  operators: " + ", ".join(f"{k} {v}" for k, v in sorted(ops.items())))
        try:
            import onnxruntime as ort
        except ImportError:
            continue
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = args.threads
        try:
            session = ort.InferenceSession(str(onnx_path), opts,
                                           providers=["CPUExecutionProvider"])
        except Exception as e:  # the unpatched graph: onnxruntime refuses it
            print(f"  onnxruntime refuses {onnx_path.name}: {e}", flush=True)
            continue
        got = session.run(None, {"X": x[None], "y_train": y[None]})[0]
        print(f"  onnxruntime CPU vs torch at {n} + {m} x {h}: max |diff| "
              f"{np.abs(got - ref).max():.2e}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
