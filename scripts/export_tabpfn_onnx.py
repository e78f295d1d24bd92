"""Export TabPFN v3's raw forward (one ensemble member, random full-size weights) to ONNX for
the peer benchmark (``bench/bench_webgpu_peer.py --model tabpfn``, ORT-Web).

Run with the interpreter of the ``[tabpfn]`` extra plus onnx and onnxruntime (torch, the
``tabpfn`` package 9.2.0), e.g. ``.venv-bench/bin/python scripts/export_tabpfn_onnx.py``.
It draws the package's default v3 classifier (``tabpfn_v3.parse_config({"max_num_classes":
10})``: embed 128, 3 column blocks, 3 row blocks, 24 ICL layers; 53.0 M parameters) with
arenalite's ``random_checkpoint`` (numpy, seed 0: nothing zeroed, so every block acts),
loads the same tensors into the package's ``get_architecture`` model and writes under
``--out`` (default ``build/tabpfn_peer/``, git-ignored):

* ``tabpfn_v3_random.safetensors``: the weights as ``arenalite convert tabpfn`` writes them
  (read by the WebGPU side, ``loadTabpfnWeights``, and by the numpy side,
  ``arenalite.models.tabpfn.load``);
* ``tabpfn_v3_{n}_{m}_{h}.onnx`` per benchmark shape (static shapes: the package's forward
  branches in Python on the table's size, so the traced graph holds for one shape). Inputs
  ``X [n + m, 1, h]`` float32 and ``y_train [n, 1]`` float32 (class ids 0..2), output
  ``logits [m, 10]``: what ``model(X, y_train)`` returns (one member's raw logits), the
  same as ``arenalite.models.tabpfn.model.forward``;
* ``tabpfn_v3_{n}_{m}_{h}.npz``: the inputs, torch's output and numpy's.

**What the export needs.** The package's forward exports unpatched except for three
operators the TorchScript exporter (``dynamo=False``, opset 17; the dynamo exporter needs
onnxscript, not installed) has no symbolic for; each fails the export with
``UnsupportedOperatorError: Exporting the operator 'aten::…' to ONNX opset version 17 is not
supported``, in this order:

* ``aten::isposinf`` / ``aten::isneginf``: the NaN/±inf indicator cells
  (``tabpfn_v3.py`` line 2622, ``torch.isposinf(x) * _INFINITY_INDICATOR``);
* ``aten::nanmean``: the context means that replace non-finite cells (line 2594,
  ``torch.nanmean(x_train, dim=0)``);
* ``aten::rms_norm``: every ``_DtypeMatchingRMSNorm`` (``nn.RMSNorm``).

``register_symbolics`` gives each as the ONNX operators that compute it (``IsInf`` with one
sign; masked ``ReduceSum`` over the count; ``x · 1/√(mean(x²) + eps) · weight``), so the
graph is the package's forward operator for operator; ``--unpatched`` shows the failure.
It also gives ``aten::isinf``, ``aten::isfinite`` and ``aten::nan_to_num`` as ``IsInf`` /
``IsNaN`` / ``Where`` on the float32 input: the exporter's own symbolic casts to float64
first, and ORT-Web refuses that graph at session
creation (``Provider type for Cast node with name '/m/Cast_4' is not set``: the WebGPU
provider takes no float64).
The check prints onnxruntime CPU against torch and torch against numpy (max |diff|: 3.6e-7
and 3.6e-7 at 128 + 48 × 4) and the graph's operator types. Where ``torch.onnx.export``
fails, the exception is printed with the module it failed in and the script exits 1
(nothing is written for that shape).

    .venv-bench/bin/python scripts/export_tabpfn_onnx.py [--shapes 128x48x4 512x128x16]
"""

from __future__ import annotations

import argparse
import collections
import sys
import time
import traceback
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "pkg"), str(ROOT / "bench")]

from arenalite.models.tabpfn import checkpoint  # noqa: E402
from arenalite.models.tabpfn.model import TabPFNModel, forward  # noqa: E402
from forward_bench import data  # noqa: E402

WEIGHTS = "tabpfn_v3_random.safetensors"


def shape_name(n: int, m: int, h: int) -> str:
    return f"tabpfn_v3_{n}_{m}_{h}"


class Member(torch.nn.Module):
    """One member's raw forward: context and query rows in one call, float32."""

    def __init__(self, model) -> None:
        super().__init__()
        self.m = model

    def forward(self, X, y_train):
        out = self.m(X, y_train)
        return out.squeeze(1) if out.ndim == 3 else out


def register_symbolics() -> None:
    """The four operators the TorchScript exporter has no symbolic for at opset 17
    (module docstring), each as the ONNX operators that compute it exactly."""
    from torch.onnx import register_custom_op_symbolic
    from torch.onnx.symbolic_helper import parse_args

    def isinf(positive: int, negative: int):
        return lambda g, x: g.op("IsInf", x, detect_positive_i=positive,
                                 detect_negative_i=negative)

    @parse_args("v", "is", "i", "none")
    def nanmean(g, x, dim, keepdim, dtype):
        missing = g.op("IsNaN", x)
        zero = g.op("Constant", value_t=torch.tensor(0.0))
        axes = g.op("Constant", value_t=torch.tensor(dim, dtype=torch.long))
        total = g.op("ReduceSum", g.op("Where", missing, zero, x), axes, keepdims_i=keepdim)
        count = g.op("ReduceSum", g.op("Cast", g.op("Not", missing), to_i=1), axes,
                     keepdims_i=keepdim)
        return g.op("Div", total, count)

    @parse_args("v", "is", "v", "v")
    def rms_norm(g, x, shape, weight, eps):
        from torch.onnx.symbolic_helper import _get_const, _is_none

        e = torch.finfo(torch.float32).eps if _is_none(eps) else _get_const(eps, "f", "eps")
        mean_square = g.op("ReduceMean", g.op("Mul", x, x),
                           axes_i=list(range(-len(shape), 0)), keepdims_i=1)
        scale = g.op("Reciprocal", g.op("Sqrt", g.op(
            "Add", mean_square, g.op("Constant", value_t=torch.tensor(float(e))))))
        out = g.op("Mul", x, scale)
        return out if _is_none(weight) else g.op("Mul", out, weight)

    def isfinite(g, x):
        return g.op("Not", g.op("Or", g.op("IsInf", x), g.op("IsNaN", x)))

    def nan_to_num(g, x, nan, posinf, neginf):
        from torch.onnx.symbolic_helper import _get_const, _is_none

        big = torch.finfo(torch.float32).max
        value = lambda v, default, name: default if _is_none(v) else _get_const(v, "f", name)  # noqa: E731
        const = lambda v: g.op("Constant", value_t=torch.tensor(v, dtype=torch.float32))  # noqa: E731
        out = g.op("Where", g.op("IsNaN", x), const(value(nan, 0.0, "nan")), x)
        out = g.op("Where", g.op("IsInf", x, detect_negative_i=0),
                   const(value(posinf, big, "posinf")), out)
        return g.op("Where", g.op("IsInf", x, detect_positive_i=0),
                    const(value(neginf, -big, "neginf")), out)

    register_custom_op_symbolic("aten::nan_to_num", nan_to_num, 17)
    register_custom_op_symbolic("aten::isinf", isinf(1, 1), 17)
    register_custom_op_symbolic("aten::isfinite", isfinite, 17)
    register_custom_op_symbolic("aten::isposinf", isinf(1, 0), 17)
    register_custom_op_symbolic("aten::isneginf", isinf(0, 1), 17)
    register_custom_op_symbolic("aten::nanmean", nanmean, 17)
    register_custom_op_symbolic("aten::rms_norm", rms_norm, 17)


def build():
    from tabpfn.architectures import tabpfn_v3

    config, unused = tabpfn_v3.parse_config({"max_num_classes": 10})
    assert not unused, unused
    import dataclasses
    ck = checkpoint.random_checkpoint(dataclasses.asdict(config), seed=0)
    model = tabpfn_v3.get_architecture(config)
    state = {k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in ck.tensors.items()}
    model.load_state_dict(state, strict=True)
    return ck, model.eval()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "build" / "tabpfn_peer")
    ap.add_argument("--shapes", nargs="+", default=["128x48x4", "512x128x16"],
                    help="context x query rows x features, one graph each")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--unpatched", action="store_true",
                    help="no symbolics for isposinf/isneginf/nanmean/rms_norm (to see the "
                         "export fail)")
    args = ap.parse_args(argv)
    if not args.unpatched:
        register_symbolics()
    torch.set_num_threads(args.threads)
    args.out.mkdir(parents=True, exist_ok=True)
    ck, model = build()
    path = checkpoint.write_safetensors(ck, args.out / WEIGHTS)
    n_params = sum(v.size for k, v in ck.tensors.items() if k != "regression_borders")
    print(f"wrote {path} ({path.stat().st_size / 1e6:.1f} MB, {n_params / 1e6:.2f} M "
          "parameters)", flush=True)
    ours = TabPFNModel(ck.config, ck.tensors)
    wrapper = Member(model).eval()
    failed = 0
    for spec in args.shapes:
        n, m, h = (int(v) for v in spec.split("x"))
        x, y = data(n, m, h)
        xt, yt = torch.from_numpy(x)[:, None, :], torch.from_numpy(y)[:, None]
        with torch.no_grad():
            ref = wrapper(xt, yt).numpy()
        mine = forward(ours, x[:n], y, x[n:])
        print(f"{n} + {m} x {h}: torch {ref.shape}, numpy vs torch max |diff| "
              f"{np.abs(mine - ref).max():.2e}", flush=True)
        onnx_path = args.out / f"{shape_name(n, m, h)}.onnx"
        t0 = time.perf_counter()
        try:
            with torch.no_grad():
                torch.onnx.export(wrapper, (xt, yt), str(onnx_path), dynamo=False,
                                  input_names=["X", "y_train"], output_names=["logits"],
                                  opset_version=17)
        except Exception as e:  # say where and why; no graph for this shape
            print(f"  torch.onnx.export failed at {n} + {m} x {h}: {type(e).__name__}: {e}",
                  flush=True)
            traceback.print_exc()
            failed += 1
            continue
        print(f"wrote {onnx_path} ({onnx_path.stat().st_size / 1e6:.1f} MB) in "
              f"{time.perf_counter() - t0:.0f} s", flush=True)
        np.savez(args.out / f"{shape_name(n, m, h)}.npz", x=x, y=y, torch=ref, numpy=mine)
        import onnx

        ops = collections.Counter(node.op_type for node in onnx.load(str(onnx_path)).graph.node)
        print("  operators: " + ", ".join(f"{k} {v}" for k, v in sorted(ops.items())))
        import onnxruntime as ort

        opts = ort.SessionOptions()
        opts.intra_op_num_threads = args.threads
        try:
            session = ort.InferenceSession(str(onnx_path), opts,
                                           providers=["CPUExecutionProvider"])
        except Exception as e:
            print(f"  onnxruntime refuses {onnx_path.name}: {e}", flush=True)
            failed += 1
            continue
        got = session.run(None, {"X": x[:, None, :], "y_train": y[:, None]})[0]
        print(f"  onnxruntime CPU vs torch at {n} + {m} x {h}: max |diff| "
              f"{np.abs(got.reshape(ref.shape) - ref).max():.2e}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
