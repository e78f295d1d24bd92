"""What the model forward benches (bench_tabicl.py, bench_tabpfn.py) share: the thread
count set before numpy loads, and the random table they time."""

from __future__ import annotations

import os
import sys

BLAS_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def threads_from_argv(argv: list[str]) -> str:
    """``--threads N`` of a command line (default 1)."""
    for i, a in enumerate(argv):
        if a == "--threads" and i + 1 < len(argv):
            return argv[i + 1]
        if a.startswith("--threads="):
            return a.split("=", 1)[1]
    return "1"


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
