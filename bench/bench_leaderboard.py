"""Seconds of the leaderboard and of each Elo resampling scheme.

Run ``python bench/bench_leaderboard.py``. Two inputs:

- the bundled demo (``content/demo_results.csv``: 6 models × 4 datasets, 60 seeds each);
- a TabArena-sized synthetic suite: 78 models × 51 datasets × 3 seeds
  (``bench_scale.synthetic``: model skill + dataset difficulty + model × dataset affinity
  + seed noise, fixed random seed).

It prints the seconds of ``leaderboard(n_bootstrap=200)`` on the suite (target: a few
seconds) and of ``elo_ranking`` with each scheme, each next to its ratio over the Elo
point fit alone (``n_bootstrap=0``) measured in the same run: the price of the interval.
Each time is the minimum over ``--repeat`` calls, each on a fresh copy of the loaded
Benchmark (so every call pays its own Elo point fit, which a Benchmark memoizes).
"""

from __future__ import annotations

import argparse
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import arenalite
from bench_scale import synthetic

ROOT = Path(__file__).resolve().parent.parent
SCHEMES = ("battle", "split", "dataset")


def seconds(call: Callable[[Any], Any], bench: Any, repeat: int) -> float:
    """Least seconds of ``call`` over ``repeat`` calls, each on a fresh copy of ``bench``
    (made untimed), so that no call reuses the Elo point fit another one memoized."""
    best = float("inf")
    for _ in range(repeat):
        fresh = bench.select_models(bench.models_)
        start = time.perf_counter()
        call(fresh)
        best = min(best, time.perf_counter() - start)
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="calls per timing (default 3)")
    args = parser.parse_args(argv)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        inputs = {
            "demo 6×4×60": arenalite.load_csv(ROOT / "content" / "demo_results.csv", seed="seed"),
            "suite 78×51×3": arenalite.load_df(synthetic(78, 51, 3), seed="seed",
                                               norm_ref_low=0.0, norm_ref_high=1.0),
        }
        for label, bench in inputs.items():
            point = seconds(lambda b: b.elo_ranking(n_bootstrap=0), bench, args.repeat)
            print(f"{label}: Elo point fit {point:.3f} s")
            for b_count in (200, 1000):
                for scheme in SCHEMES:
                    took = seconds(lambda b, n=b_count, s=scheme: b.elo_ranking(
                        n_bootstrap=n, random_state=0, resampling=s), bench, args.repeat)
                    print(f"  elo_ranking B={b_count:<4} {scheme:<7} {took:6.3f} s "
                          f"({took / point:5.1f}× the point fit)")
            took = seconds(lambda b: b.leaderboard(n_bootstrap=200, random_state=0), bench,
                           args.repeat)
            print(f"  leaderboard B=200 (dataset) {took:6.3f} s "
                  f"({took / point:5.1f}× the point fit)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
