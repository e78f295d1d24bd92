"""Benchmark: Bayesian signed-rank comparison of all pairs of 14 models on 19 datasets.

Times ``Benchmark.bayesian_comparison`` (91 pairs, 50,000 posterior samples each) and,
in the same run, baycomp's ``SignedRankTest`` (a loop over samples per pair) on a few
pairs, extrapolated to all 91 pairs. Prints seconds and the speed-up ratio; checks that
the probabilities agree. Run: ``python bench/bench_stats.py [--baycomp-pairs N]``.
"""

from __future__ import annotations

import argparse
import time
import warnings
from itertools import combinations

import numpy as np
import pandas as pd

import arenalite
from arenalite.stats.bayesian import N_SAMPLES, bayesian_comparison

N_MODELS = 14
N_DATASETS = 19


def make_benchmark(seed: int = 0) -> arenalite.Benchmark:
    """14 models × 19 accuracy datasets with small, overlapping quality differences."""
    rng = np.random.default_rng(seed)
    quality = np.linspace(0.0, 0.04, N_MODELS)
    base = rng.uniform(0.6, 0.9, N_DATASETS)
    scores = base[None, :] + quality[:, None] + rng.normal(0, 0.02, (N_MODELS, N_DATASETS))
    rows = [{"model": f"model_{i:02d}", "dataset": f"dataset_{j:02d}", "metric": "accuracy",
             "score": float(scores[i, j])}
            for i in range(N_MODELS) for j in range(N_DATASETS)]
    return arenalite.load_df(pd.DataFrame(rows), norm_ref_low=0.0, norm_ref_high=1.0)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baycomp-pairs", type=int, default=3,
                        help="pairs timed with baycomp (extrapolated to all pairs); 0 skips it")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs of arenalite")
    args = parser.parse_args(argv)

    bench = make_benchmark()
    pairs = list(combinations(bench.models_, 2))
    bayesian_comparison(bench, random_state=0, n_samples=1000)  # warm-up (imports, caches)
    times = []
    for _ in range(args.repeats):
        start = time.perf_counter()
        result = bayesian_comparison(bench, rope=0.01, random_state=0, n_samples=N_SAMPLES)
        times.append(time.perf_counter() - start)
    ours = min(times)
    print(f"arenalite bayesian_comparison: {len(pairs)} pairs × {N_SAMPLES} samples, "
          f"{N_MODELS} models × {N_DATASETS} datasets: {ours:.3f} s "
          f"(best of {args.repeats}; all: {', '.join(f'{t:.3f}' for t in times)})")

    if args.baycomp_pairs <= 0:
        return
    try:
        from baycomp import SignedRankTest
    except ImportError:
        print("baycomp not installed: no reference timing")
        return
    scores = bench.scores_
    timed = pairs[: args.baycomp_pairs]
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = [SignedRankTest.probs(scores.loc[a].to_numpy(), scores.loc[b].to_numpy(),
                                       rope=0.01, prior=1, nsamples=N_SAMPLES, random_state=0)
                  for a, b in timed]
    per_pair = (time.perf_counter() - start) / len(timed)
    ours_probs = result.table.set_index(["model_a", "model_b"]).loc[
        timed, ["p_a_better", "p_equiv", "p_b_better"]].to_numpy()
    worst = float(np.max(np.abs(ours_probs - np.array(theirs))))
    reference = per_pair * len(pairs)
    print(f"baycomp SignedRankTest: {per_pair:.3f} s per pair × {len(pairs)} pairs = "
          f"{reference:.1f} s (extrapolated from {len(timed)} pairs)")
    print(f"speed-up: {reference / ours:.0f}×; largest probability difference to baycomp on the "
          f"timed pairs: {worst:.4f}")


if __name__ == "__main__":
    main()
