"""Export Google TabFM's raw forward (one ensemble member, random v1.0.0-width weights) to
ONNX for the peer benchmark (``bench/bench_webgpu_peer.py --model tabfm``, ORT-Web).

Run with the interpreter of the ``[tabfm]`` extra plus onnx and onnxruntime (torch,
``tabfm[pytorch]`` 1.0.1), e.g. ``.venv-tabfm/bin/python scripts/export_tabfm_onnx.py``.
It draws a classifier of the v1.0.0 architecture (``checkpoint.V1_0_0``: embed 256,
column 3 × 4 heads with 256 inducing points, row 3 × 8 heads with 8 CLS tokens, ICL at
width 2,048 × 8 heads, ff_factor 4, 10 classes) with ``--icl-blocks`` of its 24 ICL blocks
(default 2: 162 M parameters, 0.65 GB; all 24 are 1.64 G parameters, 6.6 GB of float32,
past the 2 GiB of one ONNX protobuf without external data and past ORT-Web's 4 GiB wasm32
heap, which holds the graph's initializers before they go to the GPU; each ICL block does
the same work, so the blocks' per-layer times are what scales) with arenalite's
``random_checkpoint`` (numpy, seed 0: every tensor drawn), loads the same tensors into the
package's ``TabFM_HF`` and writes under ``--out`` (default ``build/tabfm_peer/``,
git-ignored):

* ``tabfm_v1_random.safetensors``: the weights as ``arenalite convert tabfm`` writes them
  (read by the WebGPU side, ``loadTabfmWeights``, and by the numpy side);
* ``tabfm_v1_{n}_{m}_{h}.onnx`` per benchmark shape (static shapes: the package's forward
  chunks rows and columns in Python, so the traced graph holds for one shape). Inputs
  ``X [1, n + m, h]`` float32 and ``y_train [1, n]`` float32 (class ids 0..2; the query
  rows' targets are the package's −100), output ``logits [m, 10]``: one member's raw
  logits as ``model(X, y, train_size=[n], d=[h])`` gives them for the query rows, the same
  as ``arenalite.models.tabfm.model.forward``;
* ``tabfm_v1_{n}_{m}_{h}.npz``: the inputs, torch's output and numpy's.

**What the export changes** (TorchScript exporter, ``dynamo=False``, opset 17; each change
gives the same values in torch). Exported as the package has it, the graph either fails in
onnxruntime or computes something else:

* the package's activation chunking (``_ROW_CHUNK_SIZE`` 4096 rows, ``_COL_CHUNK_SIZE`` 16
  columns, ``_FFN_CHUNK_SIZE`` 8192 tokens; exact, and a no-op below those sizes) is
  switched off (``None``): its feed-forward chunk (``torch.empty`` + slice assignment)
  traces to a Reshape that onnxruntime refuses at run, ``Node
  (/m/col_embedder/tf_col/blocks.0/mab1/Reshape) … Input shape:{4,256,256}, requested
  shape:{1,256}`` (``--chunked`` shows it);
* ``RowInteraction``'s CLS-token output ``out.reshape(b, t, -1)`` gets its width spelled
  out: traced, it is refused at run, ``Node (/m/row_interactor_2/Reshape_1) … Input
  shape:{176,8,256}, requested shape:{1,176,1}``;
* ``RoPE.rotate`` duplicates cos/sin per pair by ``stack`` + ``reshape`` instead of
  ``repeat_interleave(2, -1)``: that graph runs but is wrong — onnxruntime's output
  differed from torch's by 1.5 in the logits, traced to the row stage (max |diff| 2.6 after
  ``row_interactor``) and to ``RoPE.rotate`` alone (4.9 on a random input; 4.8e-7 with the
  change).

* ``aten::isinf``, ``aten::isfinite`` and ``aten::nan_to_num`` (the entry's) are given as
  ``IsInf`` / ``IsNaN`` / ``Where`` on the float32 input:
  the exporter's own symbolic casts to float64 first, which ORT-Web's
  WebGPU provider does not take (``Provider type for Cast node … is not set`` at session
  creation, as for TabPFN's graph).

Where ``torch.onnx.export`` fails, the exception and its traceback are printed and the
script exits 1 (nothing is written for that shape).

    .venv-tabfm/bin/python scripts/export_tabfm_onnx.py [--shapes 128x48x4 512x128x16]
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

from arenalite.models.tabfm import checkpoint  # noqa: E402
from arenalite.models.tabfm.model import TabFMModel, forward  # noqa: E402
from forward_bench import data  # noqa: E402

WEIGHTS = "tabfm_v1_random.safetensors"


def shape_name(n: int, m: int, h: int) -> str:
    return f"tabfm_v1_{n}_{m}_{h}"


class Member(torch.nn.Module):
    """One member's raw forward for ``m`` query rows after ``n`` context rows of ``h``
    features (the shape is fixed at export)."""

    def __init__(self, model, n: int, m: int, h: int) -> None:
        super().__init__()
        self.m = model
        self.n, self.q, self.h = n, m, h

    def forward(self, X, y_train):
        y = torch.cat([y_train.long(), torch.full((1, self.q), -100, dtype=torch.long)], dim=1)
        out = self.m(X, y, torch.tensor([self.n]), d=torch.tensor([self.h]))
        return out[0, self.n:]


def patch_row_output() -> None:
    """``RowInteraction.forward``'s last step ``out.reshape(b, t, -1)`` with the width spelled
    out (``num_cls * e``, the same tensor): traced, the ``-1`` comes out as a Reshape to
    ``[1, T, 1]`` that onnxruntime refuses at run (module docstring)."""
    from tabfm.src.pytorch import model as tabfm_model

    original = tabfm_model.RowInteraction.forward

    def forward(self, x, d=None):
        if self.output_full:
            return original(self, x, d)
        b, t, hc, e = x.shape
        self.output_full = True
        try:
            full = original(self, x, d)  # [B, T, HC, E], the CLS columns first
        finally:
            self.output_full = False
        return full[:, :, : self.num_cls, :].reshape(b, t, self.num_cls * e)

    tabfm_model.RowInteraction.forward = forward


def patch_rope() -> None:
    """``RoPE.rotate`` with its cos/sin duplicated per pair by ``stack`` + ``reshape`` and the
    pairs rotated through a ``(…, Dh/2, 2)`` view, instead of ``repeat_interleave(2, -1)``
    and strided slices: the same values in torch (max |diff| 0), but the TorchScript
    exporter traces ``repeat_interleave`` on the last axis wrongly (module docstring)."""
    from tabfm.src.pytorch import model as tabfm_model

    def rotate(self, x):
        t, dh = x.shape[1], x.shape[-1]
        f = torch.outer(torch.arange(t, device=x.device).float(), self.freqs.float())
        cos = torch.stack((f.cos(), f.cos()), -1).reshape(t, dh)[None, :, None, :].to(x.dtype)
        sin = torch.stack((f.sin(), f.sin()), -1).reshape(t, dh)[None, :, None, :].to(x.dtype)
        pairs = x.reshape(*x.shape[:-1], dh // 2, 2)
        rot = torch.stack((-pairs[..., 1], pairs[..., 0]), -1).reshape(x.shape)
        return x * cos + rot * sin

    tabfm_model.RoPE.rotate = rotate


def register_symbolics() -> None:
    """``aten::isinf``, ``aten::isfinite`` and ``aten::nan_to_num`` on the float32 input
    (module docstring)."""
    from torch.onnx import register_custom_op_symbolic

    def isinf(g, x):
        return g.op("IsInf", x)

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
    register_custom_op_symbolic("aten::isinf", isinf, 17)
    register_custom_op_symbolic("aten::isfinite", isfinite, 17)


def build(icl_blocks: int, chunked: bool = False):
    from tabfm.src.pytorch.tabfm_v1_0_0 import TabFM_HF

    config = {**checkpoint.V1_0_0, "icl_num_blocks": icl_blocks}
    ck = checkpoint.random_checkpoint(config, seed=0)
    arch = {k: v for k, v in ck.config.items() if k in checkpoint.ARCHITECTURE}
    model = TabFM_HF(**arch)
    model.load_state_dict({k: torch.from_numpy(np.ascontiguousarray(v))
                           for k, v in ck.tensors.items()}, strict=True)
    if chunked:
        return ck, model.eval()
    for module in model.modules():  # the package's activation chunking off (docstring)
        for knob in ("row_chunk_size", "col_chunk_size", "ffn_chunk_size"):
            if hasattr(module, knob):
                setattr(module, knob, None)
    return ck, model.eval()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "build" / "tabfm_peer")
    ap.add_argument("--shapes", nargs="+", default=["128x48x4", "512x128x16"],
                    help="context x query rows x features, one graph each")
    ap.add_argument("--icl-blocks", type=int, default=2,
                    help="ICL blocks of the drawn model (v1.0.0 has 24; default 2)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--chunked", action="store_true",
                    help="keep the package's activation chunking (to see onnxruntime refuse "
                         "the graph)")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    args.out.mkdir(parents=True, exist_ok=True)
    if not args.chunked:
        patch_row_output()
        patch_rope()
        register_symbolics()
    ck, model = build(args.icl_blocks, args.chunked)
    path = checkpoint.write_safetensors(ck, args.out / WEIGHTS)
    n_params = sum(v.size for v in ck.tensors.values())
    print(f"wrote {path} ({path.stat().st_size / 1e6:.1f} MB, {n_params / 1e6:.2f} M "
          f"parameters, {args.icl_blocks} ICL blocks)", flush=True)
    ours = TabFMModel(ck.config, ck.tensors)
    failed = 0
    for spec in args.shapes:
        n, m, h = (int(v) for v in spec.split("x"))
        x, y = data(n, m, h)
        wrapper = Member(model, n, m, h).eval()
        xt, yt = torch.from_numpy(x)[None], torch.from_numpy(y)[None]
        with torch.no_grad():
            ref = wrapper(xt, yt).numpy()
        mine, _ = forward(ours, x[:n], y.astype(np.int64), x[n:])
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
        got = session.run(None, {"X": x[None], "y_train": y[None]})[0]
        print(f"  onnxruntime CPU vs torch at {n} + {m} x {h}: max |diff| "
              f"{np.abs(got - ref).max():.2e}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
