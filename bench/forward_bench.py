"""What the model forward benches (bench_tabicl.py, bench_tabpfn.py) share: the thread
count set before numpy loads, one child process per thread count (``--threads 1,all``:
both counts in one command, each child with its own BLAS setting), and the random table
they time."""

from __future__ import annotations

import json
import os
import subprocess
import sys

BLAS_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


RESULT = "RESULT "  # the line a child prints its measurements on


def usable_cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


def thread_counts(spec: str) -> list[int]:
    """``--threads``' value as counts: "1", "2", "1,all" (all: the cores this process may use)."""
    counts = []
    for part in spec.split(","):
        n = usable_cores() if part == "all" else int(part)
        if n < 1:
            raise SystemExit(f"--threads: {part!r} is not a thread count")
        if n not in counts:
            counts.append(n)
    return counts


def threads_from_argv(argv: list[str]) -> str:
    """``--threads`` of a command line (default "1,all"): the first count when several."""
    value = "1,all"
    for i, a in enumerate(argv):
        if a == "--threads" and i + 1 < len(argv):
            value = argv[i + 1]
        elif a.startswith("--threads="):
            value = a.split("=", 1)[1]
    return str(thread_counts(value)[0])


def run_per_count(script: str, argv: list[str], counts: list[int]) -> list[dict]:
    """Run ``script`` once per thread count (``--threads N`` replacing the list), its
    output passed through; returns each child's RESULT dicts, tagged with the count."""
    rest, skip = [], False
    for a in argv:
        if skip:
            skip = False
        elif a == "--threads":
            skip = True
        elif not a.startswith("--threads="):
            rest.append(a)
    results = []
    for n in counts:
        child = subprocess.run([sys.executable, script, "--threads", str(n), *rest],
                               stdout=subprocess.PIPE, text=True, check=True)
        for line in child.stdout.splitlines():
            if line.startswith(RESULT):
                results.append({"threads": n, **json.loads(line[len(RESULT):])})
            else:
                print(line, flush=True)
    return results


def summary(results: list[dict]) -> None:
    """numpy / torch per thread count and shape, the table of bench/README.md."""
    print("\n| threads | shape | torch s | numpy s | numpy / torch |\n|---|---|---:|---:|---:|")
    for r in results:
        print(f"| {r['threads']} | {r['shape']} | {r['torch']:.2f} | {r['numpy']:.2f} "
              f"| **{r['numpy'] / r['torch']:.2f}** |")


def set_blas_threads() -> None:
    """The BLAS thread count from ``--threads``, before numpy loads (OpenBLAS reads it at
    import; without it numpy's BLAS takes every core while torch has its count)."""
    for name in BLAS_VARIABLES:
        os.environ[name] = threads_from_argv(sys.argv[1:])


def data(n: int, m: int, h: int, seed: int = 0):
    """``n`` context + ``m`` query rows × ``h`` features (float32) and 3-class targets."""
    import numpy as np

    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n + m, h)).astype(np.float32)
    y = rng.integers(0, 3, n).astype(np.float32)
    y[:3] = [0, 1, 2]
    return x, y
