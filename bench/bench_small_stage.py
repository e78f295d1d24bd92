"""An ICL stage in row chunks or in shares of heads on the pool, calls back to back.

``python bench/bench_small_stage.py --model tabpfn --shape 128x48x4 [--threads 2] [--rounds 6]``
(``--model tabicl``, ``tabfm``; needs the model's extra: torch and the package). One
member's raw forward of the full-size random model (as ``bench_tabpfn.py`` /
``bench_tabicl.py`` / ``bench_tabfm.py`` build it), five calls in a row
per block, blocks in turn: ``rows`` (every ICL layer in row chunks on arenalite's pool,
``threads.SMALL_STAGE_ROWS`` set to 0), ``default`` (arenalite as shipped: an ICL stage of
fewer rows in shares of heads, ``tabicl.icl.shares`` / ``tabpfn.icl.shares`` /
``tabfm.icl.shares``), ``shares``
(every ICL layer in shares, whatever its rows) and the package's torch forward. The median
of the blocks' medians is printed with numpy / torch.

Why not call by call, as the other forward benches alternate: a torch call started right
after another library's threaded work can run on a contended core (measured: torch's
128 + 48 × 4 call 0.205 s alone, 0.25–0.28 s right after numpy's when numpy used OpenBLAS's
threads, whose workers spin for a while after each product), which flatters numpy's ratio.
Back to back, each library pays its own cost, as a user's ensemble of members does.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import forward_bench  # bench/, beside this script

if not any(a.startswith("--threads") for a in sys.argv[1:]):
    sys.argv[1:1] = ["--threads", "all"]  # this bench is about more than one thread
forward_bench.prepare_process()

import numpy as np  # noqa: E402  (numpy loads after the BLAS thread count is set)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "pkg"))

from arenalite.models import threads  # noqa: E402


def tabpfn_calls(torch, x, y, n):
    import bench_tabpfn

    tmodel, model = bench_tabpfn.build_models(torch)

    def run_torch():
        with torch.no_grad():
            tmodel(torch.from_numpy(x)[:, None, :], torch.from_numpy(y))

    return (lambda: bench_tabpfn.forward(model, x[:n], y, x[n:])), run_torch


def tabicl_calls(torch, x, y, n):
    import bench_tabicl

    tmodel, model, icfg = bench_tabicl.build_models(torch)
    return ((lambda: bench_tabicl.forward(model, x[:n], y, x[n:])),
            (lambda: bench_tabicl.torch_stages(torch, tmodel, x, y, icfg)))


def tabfm_calls(torch, x, y, n):
    import bench_tabfm
    from arenalite.models.tabfm import checkpoint
    from arenalite.models.tabfm.model import TabFMModel

    ck = checkpoint.random_checkpoint(dict(checkpoint.V1_0_0), seed=0)
    tmodel, model = bench_tabfm.torch_model(torch, ck.config, ck.tensors), TabFMModel(
        ck.config, ck.tensors)
    y = y.astype(np.int64)
    y_full = torch.from_numpy(np.concatenate([y, np.full(len(x) - n, -100)]))[None]

    def run_torch():
        with torch.no_grad():
            tmodel(torch.from_numpy(x)[None], y_full, torch.tensor([n]),
                   d=torch.tensor([x.shape[1]]))

    return (lambda: bench_tabfm.forward(model, x[:n], y, x[n:])), run_torch


def block_median(fn, calls: int = 5) -> float:
    fn()
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=["tabpfn", "tabicl", "tabfm"], default="tabpfn")
    parser.add_argument("--shape", default="128x48x4", help="context x query rows x features")
    parser.add_argument("--threads", default="all", help="one thread count (default all)")
    forward_bench.add_isa_argument(parser)
    parser.add_argument("--rounds", type=int, default=6)
    args = parser.parse_args(argv)
    count = forward_bench.thread_counts(args.threads)[0]
    n, m, h = (int(v) for v in args.shape.split("x"))
    import torch

    torch.set_num_threads(count)
    threads.set_count(count)
    forward_bench.report_machine(torch)
    x, y = forward_bench.data(n, m, h)
    calls = {"tabpfn": tabpfn_calls, "tabicl": tabicl_calls, "tabfm": tabfm_calls}[args.model]
    run_numpy, run_torch = calls(torch, x, y, n)
    shipped = threads.SMALL_STAGE_ROWS
    limits = {"rows": 0, "default": shipped, "shares": 1 << 62}
    medians: dict[str, list[float]] = {name: [] for name in (*limits, "torch")}
    for _ in range(args.rounds):
        for name in medians:
            threads.SMALL_STAGE_ROWS = limits.get(name, shipped)
            medians[name].append(block_median(run_torch if name == "torch" else run_numpy))
    threads.SMALL_STAGE_ROWS = shipped
    s = {k: statistics.median(v) for k, v in medians.items()}
    seconds = ", ".join(f"{k} {v:.3f} s" for k, v in s.items())
    ratios = ", ".join(f"{k} {s[k] / s['torch']:.2f}" for k in limits)
    print(f"{args.model} {n} + {m} x {h}, {count} thread(s), {args.rounds} rounds of 5 calls, "
          f"load {os.getloadavg()[0]:.2f}: {seconds}; numpy / torch: {ratios}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
