"""The package's torch forward of one TabICL member, timed per stage on a device.

``python bench/torch_tabicl_forward.py WEIGHTS NPZ --device cuda [--runs 3 --warmups 1]``
(an interpreter with torch and the ``tabicl`` package; ``bench_webgpu_peer.py --torch-device``
runs it). Builds the package's v2 classifier (as ``scripts/export_tabicl_onnx.py``), loads
the state dict from our safetensors WEIGHTS (the same weights the WebGPU side and numpy
read), runs the shape stored in NPZ (``x``, ``y``: n context rows then m query rows), and
prints one JSON line: the wall ms of each timed run (device synchronised), the median ms
per stage (column, row, icl+head) and the logits. Without that device it prints
``{"skipped": why}``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_tabicl import v2_config  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("weights", type=Path)
    ap.add_argument("npz", type=Path)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--warmups", type=int, default=1)
    args = ap.parse_args(argv)
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        print(json.dumps({"skipped": "torch sees no CUDA device"}))
        return 0
    from safetensors.torch import load_file
    from tabicl._model.inference_config import InferenceConfig
    from tabicl._model.tabicl import TabICL

    model = TabICL(**v2_config(TabICL)).eval()
    missing, unexpected = model.load_state_dict(load_file(str(args.weights)), strict=False)
    if missing or unexpected:
        sys.exit(f"torch_tabicl_forward: {args.weights} does not fit the v2 model "
                 f"(missing {missing[:3]}, unexpected {unexpected[:3]})")
    model.to(args.device)
    base = {"device": args.device, "use_amp": False, "offload": False}
    config = InferenceConfig(COL_CONFIG=dict(base), ROW_CONFIG=dict(base), ICL_CONFIG=dict(base))
    z = np.load(args.npz)
    n = len(z["y"])
    xt = torch.from_numpy(z["x"])[None].to(args.device)
    yt = torch.from_numpy(z["y"])[None].to(args.device)

    def sync():
        if args.device.startswith("cuda"):
            torch.cuda.synchronize()

    times, stages = [], []
    for i in range(args.warmups + args.runs):
        with torch.no_grad():
            sync()
            t0 = time.perf_counter()
            col = model.col_embedder(xt, y_train=yt, mgr_config=config.COL_CONFIG)
            sync()
            t1 = time.perf_counter()
            rep = model.row_interactor(col, mgr_config=config.ROW_CONFIG)
            sync()
            t2 = time.perf_counter()
            out = model.icl_predictor(rep, y_train=yt, mgr_config=config.ICL_CONFIG)
            sync()
            t3 = time.perf_counter()
        if i >= args.warmups:
            times.append((t3 - t0) * 1e3)
            stages.append({"column": (t1 - t0) * 1e3, "row": (t2 - t1) * 1e3,
                           "icl+head": (t3 - t2) * 1e3})
    logits = out[0].float().cpu().numpy()[:, :3]
    print(json.dumps({"device": torch.cuda.get_device_name() if args.device.startswith("cuda")
                      else args.device, "n": n, "times": times,
                      "stages": {k: statistics.median(s[k] for s in stages) for k in stages[0]},
                      "out": logits.ravel().tolist()}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
