"""One checkout's numpy forward alone, calls back to back: compare two trees of arenalite.

``python bench/bench_numpy_tree.py TREE --model tabicl|tabpfn [--threads 2] [--isa avx2]
[--shape 128x48x4]`` imports ``arenalite`` from ``TREE/pkg`` (any checkout, e.g. a
``git worktree`` of an older commit), builds the full-size random model in numpy
(``random_checkpoint``: TabICLv2's v2 config, TabPFN v3's defaults with 10 classes; no
torch), and prints the median of six blocks' medians of five calls. Run it for two trees in
turn, several times, to see what a change did on this machine (bench/README.md, "Issue 45").
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import forward_bench  # bench/, beside this script

forward_bench.prepare_process()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tree", help="a checkout of arenalite (its pkg/ is imported)")
    parser.add_argument("--model", choices=["tabicl", "tabpfn"], default="tabicl")
    parser.add_argument("--threads", default="all", help="one thread count (default all)")
    forward_bench.add_isa_argument(parser)
    parser.add_argument("--shape", default="128x48x4", help="context x query rows x features")
    args = parser.parse_args(argv)
    sys.path.insert(0, os.path.join(os.path.abspath(args.tree), "pkg"))
    import arenalite
    from arenalite.models import threads

    threads.set_count(forward_bench.thread_counts(args.threads)[0])
    n, m, h = (int(v) for v in args.shape.split("x"))
    x, y = forward_bench.data(n, m, h)
    if args.model == "tabicl":
        from arenalite.models.tabicl.checkpoint import random_checkpoint
        from arenalite.models.tabicl.model import TabICLModel as Model
        from arenalite.models.tabicl.model import forward
        checkpoint = random_checkpoint({"row_rope_interleaved": False}, seed=0)
    else:
        from arenalite.models.tabpfn.checkpoint import random_checkpoint
        from arenalite.models.tabpfn.model import TabPFNModel as Model
        from arenalite.models.tabpfn.model import forward
        checkpoint = random_checkpoint({"max_num_classes": 10}, seed=0)
    model = Model(checkpoint.config, checkpoint.tensors)
    medians = []
    for _ in range(6):
        forward(model, x[:n], y, x[n:])
        times = []
        for _ in range(5):
            start = time.perf_counter()
            forward(model, x[:n], y, x[n:])
            times.append(time.perf_counter() - start)
        medians.append(statistics.median(times))
    print(f"{args.model} {n} + {m} x {h}, {threads.count()} thread(s), --isa {args.isa}, "
          f"arenalite from {os.path.dirname(arenalite.__file__)}: "
          f"{statistics.median(medians) * 1e3:.1f} ms", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
