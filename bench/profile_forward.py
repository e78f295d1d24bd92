"""Where a numpy model call spends its time, operator by operator (issue 45).

``python bench/profile_forward.py --model tabicl --threads 1`` (numpy only: random weights
made in numpy; ``--model tabpfn``; ``--shapes small,large``; ``--torch`` also profiles the
package's forward with ``torch.profiler``, needs the ``[tabicl]`` / ``[tabpfn]`` extra).

Each shared operator of :mod:`arenalite.models.ops` (linear, GELU, LayerNorm, RMSNorm,
softmax, RoPE, the query-aware scaling), the attention's batched products (what
``attend`` does besides the operators it calls) and numpy's copies (``concatenate``,
``ascontiguousarray``) is wrapped for the run; each wrapper adds the CPU time of its own
thread (``time.thread_time``) less that of the wrapped calls inside it, so the figures are
exclusive CPU seconds summed over the worker threads, and "rest" is the calls' CPU time
that none of them took (slicing, target embedding, the thread pool). The stage figures are
wall seconds (``forward``'s own timings for TabICL, the stage functions for TabPFN). CPU
time shares hold on a loaded machine; wall seconds do not.
"""

from __future__ import annotations

import argparse
import functools
import statistics
import sys
import threading
import time
from collections import defaultdict
from pathlib import Path

import forward_bench  # bench/, beside this script

forward_bench.prepare_process()

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "pkg"))

from arenalite.models import ops, threads  # noqa: E402

SHAPES = {"small": (128, 48, 4), "large": (1024, 256, 30)}
OPERATORS = {"linear": "products (linear)", "gelu": "GELU", "layer_norm": "LayerNorm",
             "rms_norm": "RMSNorm", "softmax": "softmax", "rotate": "RoPE",
             "query_aware_scale": "query scaling (rest)", "silu": "SiLU"}
CPU = defaultdict(float)
_local = threading.local()


def timed(label: str, fn):
    """``fn`` adding its exclusive thread CPU time to ``CPU[label]``."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        stack = getattr(_local, "stack", None)
        if stack is None:
            stack = _local.stack = [0.0]
        stack.append(0.0)
        start = time.thread_time()
        try:
            return fn(*args, **kwargs)
        finally:
            spent = time.thread_time() - start
            inner = stack.pop()
            CPU[label] += spent - inner
            stack[-1] += spent
    return wrapper


def instrument(modules) -> None:
    """Wrap the operators wherever a module imported them, the attention functions and
    numpy's copies."""
    originals = {name: getattr(ops, name) for name in OPERATORS}
    wrapped = {name: timed(OPERATORS[name], fn) for name, fn in originals.items()}
    for module in modules:
        for name, fn in originals.items():
            if getattr(module, name, None) is fn:
                setattr(module, name, wrapped[name])
    np.concatenate = timed("copies (concatenate, contiguous)", np.concatenate)
    np.ascontiguousarray = timed("copies (concatenate, contiguous)", np.ascontiguousarray)


def numpy_tabicl(shape):
    from arenalite.models.tabicl import column, head, icl, layers, row
    from arenalite.models.tabicl.checkpoint import random_checkpoint
    from arenalite.models.tabicl.model import TabICLModel, forward

    instrument([ops, layers, column, row, icl, head])
    layers.Attention.attend = timed("attention's batched products", layers.Attention.attend)
    forward = timed("rest (main thread)", forward)
    config = {"row_rope_interleaved": False}
    ck = random_checkpoint(config, seed=0)
    model = TabICLModel(ck.config, ck.tensors)
    x, y = forward_bench.data(*shape)
    n = shape[0]

    def run():
        _, t = forward(model, x[:n], y, x[n:])
        n_row = len(model.row.blocks)
        return {"column": t["embed"] / 1e3, "row": sum(t["layers"][:n_row]) / 1e3,
                "icl+head": (sum(t["layers"][n_row:]) + t["head"]) / 1e3}
    return run


def numpy_tabpfn(shape):
    from arenalite.models.tabpfn import cells, column, decoder, icl, layers, row
    from arenalite.models.tabpfn.checkpoint import random_checkpoint
    from arenalite.models.tabpfn.model import TabPFNModel, forward

    instrument([ops, layers, cells, column, decoder, icl, row])
    wall = defaultdict(float)
    for stage, module, names in (("column", column, ("embed_context", "embed_queries")),
                                 ("row", row, ("aggregate",)),
                                 ("icl", icl, ("fit_context", "query")),
                                 ("decoder", decoder, ("fit_context", "logits"))):
        for name in names:
            setattr(module, name, _walled(wall, stage, getattr(module, name)))
    for module in (column, row, icl):
        module.attend = timed("attention's batched products", module.attend)
    forward = timed("rest (main thread)", forward)
    ck = random_checkpoint({"max_num_classes": 10}, seed=0)
    model = TabPFNModel(ck.config, ck.tensors)
    x, y = forward_bench.data(*shape)
    n = shape[0]

    def run():
        wall.clear()
        forward(model, x[:n], y, x[n:])
        return dict(wall)
    return run


def _walled(wall, stage, fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        start = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            wall[stage] += time.perf_counter() - start
    return wrapper


def torch_profile(model: str, shape, n_threads: int) -> None:
    """The package's forward under ``torch.profiler``: self CPU time per aten operator."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    torch.set_num_threads(n_threads)
    x, y = forward_bench.data(*shape)
    if model == "tabicl":
        from tabicl._model.inference_config import InferenceConfig
        from tabicl._model.tabicl import TabICL

        from bench_tabicl import v2_config

        torch.manual_seed(0)
        tmodel = TabICL(**v2_config(TabICL)).eval()
        base = {"device": "cpu", "use_amp": False, "offload": False}
        icfg = InferenceConfig(COL_CONFIG=dict(base), ROW_CONFIG=dict(base),
                               ICL_CONFIG=dict(base))
        from bench_tabicl import torch_stages

        def call():
            torch_stages(torch, tmodel, x, y, icfg)
    else:
        from tabpfn.architectures import tabpfn_v3

        from bench_tabpfn import randomise

        config, _ = tabpfn_v3.parse_config({"max_num_classes": 10})
        tmodel = randomise(torch, tabpfn_v3.get_architecture(config))

        def call():
            with torch.no_grad():
                tmodel(torch.from_numpy(x)[:, None, :], torch.from_numpy(y))
    call()
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        start = time.perf_counter()
        call()
        seconds = time.perf_counter() - start
    rows = sorted(prof.key_averages(), key=lambda e: -e.self_cpu_time_total)
    total = sum(e.self_cpu_time_total for e in rows) / 1e6
    print(f"torch.profiler, {model} {shape}, {n_threads} thread(s): {seconds:.2f} s wall "
          f"(profiled), {total:.2f} s self CPU")
    for e in rows[:14]:
        print(f"  {e.key:<34} {e.self_cpu_time_total / 1e6:7.3f} s "
              f"{100 * e.self_cpu_time_total / 1e6 / total:5.1f} %  {e.count} calls")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=("tabicl", "tabpfn"), default="tabicl")
    parser.add_argument("--threads", default="1", help="one thread count (1, 2, all)")
    forward_bench.add_isa_argument(parser)
    parser.add_argument("--shapes", default="small,large")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--torch", action="store_true", help="also torch.profiler")
    args = parser.parse_args(argv)
    n_threads = forward_bench.thread_counts(args.threads)[0]
    threads.set_count(n_threads)
    forward_bench.report_machine()
    for name in args.shapes.split(","):
        shape = SHAPES[name]
        run = (numpy_tabicl if args.model == "tabicl" else numpy_tabpfn)(shape)
        run()  # warm-up
        CPU.clear()
        walls, stages = [], []
        for _ in range(args.repeats):
            start = time.perf_counter()
            stages.append(run())
            walls.append(time.perf_counter() - start)
        cpu = {k: v / args.repeats for k, v in CPU.items()}
        wall = statistics.median(walls)
        stage = {k: statistics.median(s[k] for s in stages) for k in stages[0]}
        print(f"\nnumpy {args.model} {shape[0]:,} + {shape[1]} × {shape[2]}, {n_threads} "
              f"thread(s): {wall:.3f} s wall (median of {args.repeats}); stages (wall s) "
              + ", ".join(f"{k} {v:.3f}" for k, v in stage.items()))
        print("| operator | CPU s per call | share |\n|---|---:|---:|")
        total = sum(cpu.values())
        for k, v in sorted(cpu.items(), key=lambda kv: -kv[1]):
            print(f"| {k} | {v:.3f} | {100 * v / total:.0f} % |")
        print(f"| total (thread CPU) | {total:.3f} | |")
        if args.torch:
            torch_profile(args.model, shape, n_threads)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
