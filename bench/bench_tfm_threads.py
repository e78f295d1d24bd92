"""tabular_fm's numpy forward on one thread and on every core, in one command.

``python bench/bench_tfm_threads.py [--threads 1,all] [--repeats 3]`` times
``arenalite.models.predict({"name": "tabular_fm"}, ...)`` (the shipped weights; context
subsampled to the model's 1,024 rows as always) at 1,024 context + 1,024 query rows × 20
features, binary, and at 1,024 + 256 × 60, once per thread count in a child process of its
own (BLAS threads set before numpy loads, ``arenalite.models.threads`` set to the same
count), and prints the median of ``--repeats`` runs after a warm-up per count, the speed-up
over one thread and the largest output difference from the one-thread run.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time

import forward_bench  # bench/, beside this script

forward_bench.prepare_process()

import numpy as np  # noqa: E402

SHAPES = [(1024, 1024, 20), (1024, 256, 60)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", default="1,all", help="thread counts: 1, 2, all or a list")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)
    counts = forward_bench.thread_counts(args.threads)
    if len(counts) > 1:
        results = forward_bench.run_per_count(__file__, sys.argv[1:], counts)
        one = {r["shape"]: r for r in results if r["threads"] == 1}
        print("\n| threads | shape | median s | speed-up | max |diff| from 1 thread |\n"
              "|---|---|---:|---:|---:|")
        for r in results:
            base = one.get(r["shape"])
            diff = (np.abs(np.asarray(r["out"]) - np.asarray(base["out"])).max()
                    if base else float("nan"))
            speed = f"{base['seconds'] / r['seconds']:.2f}" if base else "—"
            print(f"| {r['threads']} | {r['shape']} | {r['seconds']:.2f} | {speed} | {diff:.1e} |")
        return 0
    from arenalite.models import predict, threads

    threads.set_count(counts[0])
    for n, m, h in SHAPES:
        x, y = forward_bench.data(n, m, h)
        y = (y > 0).astype(np.float32)
        times = []
        for i in range(args.repeats + 1):
            t0 = time.perf_counter()
            out = predict({"name": "tabular_fm"}, x[:n], y, x[n:], "binary", 2)
            if i:
                times.append(time.perf_counter() - t0)
        shape = f"{n:,} + {m:,} × {h}"
        seconds = statistics.median(times)
        print(f"{counts[0]} thread(s), {shape}: {seconds:.2f} s", flush=True)
        print(forward_bench.RESULT + json.dumps({"shape": shape, "seconds": seconds,
                                                 "out": np.asarray(out).ravel().tolist()}),
              flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
