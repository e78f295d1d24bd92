"""Google TabFM's numpy forward against the package's torch forward, same run, same weights.

``python bench/bench_tabfm.py`` (needs the ``[tabfm]`` extra: torch and ``tabfm[pytorch]``
1.0.1; ``--threads`` sets both libraries' thread count: ``1``, ``2``, ``all`` or a list,
default ``1,all``, one child process per count and a numpy / torch table at the end).
One v1.0.0-size classifier (``checkpoint.V1_0_0``: embed 256, max_classes 10, column
3 blocks × 4 heads with 256 inducing points, row 3 × 8 with 8 CLS tokens, ICL 24 × 8 at
width 2,048, ff_factor 4; 1.64 billion weights) with random weights
(``random_checkpoint``, every tensor drawn) runs one ensemble member's model call as the
wrappers' PyTorch path makes it (``tabfm_v1_0_0.load(..., dtype=None)``: float32; one
table, ``train_size`` the context rows, ``d`` every column) at 128 context + 48 query rows
× 4 features and at 1,024 + 256 × 30, in both libraries. The torch model shares the numpy
weights' memory (built on the meta device, then ``load_state_dict(assign=True)``).

Per shape it prints the median wall time after a warm-up, each stage's time (cells; the
two column stages; the two row stages; ICL; decoder), the ratio numpy / torch and the
largest logit difference. ``--large`` adds numpy's run at 10,000 + 256 × 100 with peak
traced memory (tracemalloc: numpy's buffers) and the process's maximum resident set size;
``--large-icl-blocks K`` runs it with only K of the 24 ICL blocks: at 10,000 context rows
the ICL keys and values are past the model's cache budget and streamed one block at a
time, so K changes the time (each block about the same) but not the activations' peak;
``--large-only`` skips the timed shapes.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import time
import tracemalloc
from collections import defaultdict
from pathlib import Path

import forward_bench  # bench/, beside this script

forward_bench.prepare_process()

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "pkg"))

from arenalite.models import threads  # noqa: E402
from arenalite.models.tabfm import checkpoint  # noqa: E402
from arenalite.models.tabfm.model import TabFMModel, forward  # noqa: E402

SHAPES = [(128, 48, 4), (1024, 256, 30)]
LARGE = (10_000, 256, 100)
STAGES = ("cells", "column", "row", "icl", "decoder")
TORCH_STAGES = {"cells": ["cell_embedder"], "column": ["col_embedder", "col_embedder_2"],
                "row": ["row_interactor", "row_interactor_2"], "icl": ["icl_predictor"],
                "decoder": ["icl_predictor.decoder"]}
"""Each stage's torch modules (``icl`` is the ICL predictor less its decoder)."""


def numpy_stages(timings: dict) -> dict[str, float]:
    return {"cells": timings["cells"] / 1e3, "column": sum(timings["column"]) / 1e3,
            "row": sum(timings["row"]) / 1e3, "icl": sum(timings["icl"]) / 1e3,
            "decoder": timings["decoder"] / 1e3}


class TorchClock:
    """Seconds per stage of the torch model, by forward hooks."""

    def __init__(self, model) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self._start: dict[str, float] = {}
        for stage, names in TORCH_STAGES.items():
            for name in names:
                module = model.get_submodule(name)
                module.register_forward_pre_hook(self._pre(name))
                module.register_forward_hook(self._post(stage, name))

    def _pre(self, name):
        def hook(_module, _args):
            self._start[name] = time.perf_counter()
        return hook

    def _post(self, stage, name):
        def hook(_module, _args, _out):
            self.seconds[stage] += time.perf_counter() - self._start.pop(name)
        return hook

    def stages(self) -> dict[str, float]:
        out = {k: self.seconds.get(k, 0.0) for k in STAGES}
        out["icl"] -= out["decoder"]
        return out


def torch_model(torch, config: dict, tensors: dict[str, np.ndarray]):
    from tabfm.src.pytorch.tabfm_v1_0_0 import TabFM_HF

    arch = {k: v for k, v in config.items() if k in checkpoint.ARCHITECTURE}
    with torch.device("meta"):
        model = TabFM_HF(**arch)
    model.load_state_dict({k: torch.from_numpy(v) for k, v in tensors.items()}, strict=True,
                          assign=True)
    return model.eval()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", default="1,all",
                        help="thread counts: 1, 2, all or a list (default 1,all)")
    forward_bench.add_isa_argument(parser)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--icl-blocks", type=int, default=None,
                        help="ICL blocks of the timed model (default: v1.0.0's 24)")
    parser.add_argument("--large", action="store_true",
                        help="also numpy's run at 10,000 + 256 × 100 (peak memory)")
    parser.add_argument("--large-only", action="store_true",
                        help="only the large run (no timed shapes)")
    parser.add_argument("--large-icl-blocks", type=int, default=None,
                        help="ICL blocks of the large run's model (default: v1.0.0's 24)")
    args = parser.parse_args(argv)
    counts = forward_bench.thread_counts(args.threads)
    if len(counts) > 1:
        forward_bench.summary(*forward_bench.run_per_count(__file__, sys.argv[1:], counts))
        return 0
    args.threads = counts[0]
    try:
        import tabfm  # noqa: F401
        import torch
    except ImportError:
        print("bench_tabfm needs torch and tabfm: pip install -e '.[tabfm]'", file=sys.stderr)
        return 2
    torch.set_num_threads(args.threads)
    threads.set_count(args.threads)
    config = dict(checkpoint.V1_0_0)
    if args.icl_blocks is not None:
        config["icl_num_blocks"] = args.icl_blocks
    t0 = time.perf_counter()
    ck = checkpoint.random_checkpoint(config, seed=0)
    tmodel = torch_model(torch, ck.config, ck.tensors)
    model = TabFMModel(ck.config, ck.tensors)
    clock = TorchClock(tmodel)
    n_params = sum(v.size for v in ck.tensors.values())
    print(f"Google TabFM classifier (v1.0.0 config, {config['icl_num_blocks']} ICL blocks), "
          f"random weights: {n_params / 1e9:.3f} G parameters (drawn in "
          f"{time.perf_counter() - t0:.0f} s); {args.threads} thread(s); torch "
          f"{torch.__version__}, numpy {np.__version__}", flush=True)
    forward_bench.report_machine(torch)
    print(f"{'shape':>18} {'lib':>6} {'median s':>9} " + " ".join(f"{s:>7}" for s in STAGES)
          + f" {'ratio':>6} {'max |diff|':>10}", flush=True)
    for n, m, h in ([] if args.large_only else SHAPES):
        x, y = forward_bench.data(n, m, h)
        y_full = torch.from_numpy(np.concatenate([y, np.full(m, -100)]).astype(np.int64))[None]
        runs: dict[str, list] = {"torch": [], "numpy": []}
        outs = {}
        for i in range(args.repeats + 1):
            for lib in ("torch", "numpy"):
                clock.seconds.clear()
                t0 = time.perf_counter()
                if lib == "torch":
                    with torch.no_grad():
                        out = tmodel(torch.from_numpy(x)[None], y_full, torch.tensor([n]),
                                     d=torch.tensor([h]))
                    out, stages = out[0, n:].numpy(), clock.stages()
                else:
                    out, timings = forward(model, x[:n], y.astype(np.int64), x[n:])
                    stages = numpy_stages(timings)
                if i:  # the first round is the warm-up
                    runs[lib].append((time.perf_counter() - t0, stages))
                outs[lib] = out
        diff = float(np.abs(outs["torch"] - outs["numpy"]).max())
        medians = {lib: statistics.median(r[0] for r in rs) for lib, rs in runs.items()}
        for lib in ("torch", "numpy"):
            stage = {k: statistics.median(r[1][k] for r in runs[lib]) for k in STAGES}
            ratio = f"{medians['numpy'] / medians['torch']:.2f}" if lib == "numpy" else ""
            print(f"{f'{n} + {m} x {h}':>18} {lib:>6} {medians[lib]:9.3f} "
                  + " ".join(f"{stage[k]:7.3f}" for k in STAGES)
                  + f" {ratio:>6} {f'{diff:.1e}' if lib == 'numpy' else '':>10}", flush=True)
        print(forward_bench.RESULT + json.dumps({"shape": f"{n:,} + {m} × {h}", **medians}),
              flush=True)
    if args.large or args.large_only:
        del tmodel
        large = dict(config)
        if args.large_icl_blocks is not None:
            large["icl_num_blocks"] = args.large_icl_blocks
            model = TabFMModel(large, {k: v for k, v in ck.tensors.items()
                                       if not _beyond(k, args.large_icl_blocks)})
        n, m, h = LARGE
        x, y = forward_bench.data(n, m, h)
        tracemalloc.start()
        t0 = time.perf_counter()
        _, timings = forward(model, x[:n], y.astype(np.int64), x[n:])
        seconds = time.perf_counter() - t0
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        blocks = large["icl_num_blocks"]
        per_block = 2 * n * large["embed_dim"] * large["row_num_cls"] * 4
        stages = numpy_stages(timings)
        print(f"numpy at {n} + {m} x {h} ({blocks} ICL blocks): {seconds:.1f} s ("
              + ", ".join(f"{k} {v:.1f}" for k, v in stages.items())
              + f"), peak traced {peak / 2**30:.2f} GiB (one ICL block's context keys and "
              f"values: {per_block / 2**30:.3f} GiB), max RSS {rss / 1024:.2f} GiB "
              f"(weights {n_params * 4 / 2**30:.2f} GiB)", flush=True)
    print(f"pid {os.getpid()} done")
    return 0


def _beyond(name: str, blocks: int) -> bool:
    """Whether ``name`` is an ICL block at or past ``blocks``."""
    prefix = "icl_predictor.tf_icl.blocks."
    return name.startswith(prefix) and int(name[len(prefix):].split(".")[0]) >= blocks


if __name__ == "__main__":
    raise SystemExit(main())
