"""Load + split of a user's table file against pandas' own ``read_csv`` of the same file.

    python bench/bench_tables.py                  # 1.2 M rows × (2 numeric, 3 categorical)
    python bench/bench_tables.py --rows 200000    # smaller
    python bench/bench_tables.py --no-memory      # timings only

Writes a generated CSV (fixed seed) to a temporary folder, then per step prints the best of
``--repeats`` untraced wall times, the tracemalloc peak of one traced run (numpy and pandas
register their buffers), and the time over pandas' ``read_csv`` of the same file measured
in the same run (goal for ``read_table`` + ``make_table_splits``: ≤ 1.5×).
"""

from __future__ import annotations

import argparse
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pandas as pd

from arenalite.datasets import table


def make_csv(path: Path, n_rows: int) -> Path:
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({
        "amount": rng.normal(size=n_rows).round(4),
        "count": rng.integers(0, 1000, n_rows),
        "region": rng.choice(["north", "south", "east", "west", ""], n_rows),
        "product": rng.choice([f"p{i}" for i in range(40)], n_rows),
        "channel": rng.choice(["web", "shop", "phone"], n_rows),
        "bought": rng.choice(["yes", "no"], n_rows),
    })
    frame.to_csv(path, index=False)
    return path


def timed(fn, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def peak_mb(fn) -> float:
    tracemalloc.start()
    fn()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / 2**20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_200_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-memory", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = make_csv(Path(folder) / "sales.csv", args.rows)
        print(f"{path.name}: {args.rows:,} rows, {path.stat().st_size / 2**20:.1f} MB")
        steps = {
            "pandas read_csv": lambda: pd.read_csv(path),
            "read_table": lambda: table.read_table(path, target="bought"),
            "read_table + make_table_splits": lambda: table.make_table_splits(
                table.read_table(path, target="bought")),
        }
        reference = None
        print(f"{'step':<34}{'seconds':>9}{'peak_MB':>9}{'x pandas':>10}")
        for name, fn in steps.items():
            seconds = timed(fn, args.repeats)
            reference = reference or seconds
            peak = float("nan") if args.no_memory else peak_mb(fn)
            print(f"{name:<34}{seconds:>9.2f}{peak:>9.0f}{seconds / reference:>10.2f}")


if __name__ == "__main__":
    main()
