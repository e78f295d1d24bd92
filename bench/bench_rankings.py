"""Time load + every ranking on synthetic inputs; print seconds, peak memory and ratios.

Run ``python bench/bench_rankings.py`` (``--help`` for options). Two sizes:

(a) GeoBench-sized: 14 models × 19 datasets × 5 seeds (1,330 rows);
(b) large: 150 models × 400 datasets × 5 seeds (300,000 rows).

Seconds come from an untraced run of each step; peak memory from a second, traced run
(tracemalloc peak; numpy registers its buffers with tracemalloc), plus the process's
maximum resident set size at the end. Ratios compare
each step with references measured in the same run on the same data: a plain numpy
mean over the score array, and a naive loop-based Elo bootstrap (Python loops over
battles and replicates, Hunter's MM per replicate) on input (a).
"""

from __future__ import annotations

import argparse
import resource
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

import arenalite
from bench_scale import measure, synthetic

ELO_RESAMPLING = "auto"
"""The battle bootstrap (multinomial, Poisson on input (b)): the scheme of the loop reference
and of this script's targets; the default of ``elo_ranking`` is now the dataset bootstrap."""


def naive_elo_bootstrap(df: pd.DataFrame, n_bootstrap: int, seed: int = 0) -> np.ndarray:
    """Reference: Python loops over replicates, match days and battles, then Hunter's MM."""
    rng = np.random.default_rng(seed)
    models = sorted(df["model"].unique())
    index = {m: i for i, m in enumerate(models)}
    n_models = len(models)
    n_pairs = n_models * (n_models - 1) / 2
    days = []
    for (_, _), day in df.groupby(["dataset", "seed"]):
        scores = dict(zip(day["model"], day["score"], strict=True))
        battles = [(index[a], index[b],
                    float(scores[a] > scores[b]) + 0.5 * float(scores[a] == scores[b]))
                   for a in scores for b in scores if index[a] < index[b]]
        days.append(battles)
    seeds_per_dataset = df.groupby("dataset")["seed"].nunique().iloc[0]
    weight = 1.0 / (n_pairs * seeds_per_dataset)
    out = np.empty((n_bootstrap, n_models))
    for r in range(n_bootstrap):
        win = np.zeros((n_models, n_models))
        for battles in days:
            for k in rng.integers(0, len(battles), len(battles)):
                i, j, p = battles[k]
                win[i, j] += weight * p
                win[j, i] += weight * (1 - p)
        gamma = np.ones(n_models)
        total = win + win.T
        for _ in range(10_000):
            new = win.sum(1) / (total / (gamma[:, None] + gamma[None, :])).sum(1)
            new /= np.exp(np.log(new).mean())
            if np.abs(new - gamma).max() < 1e-6:
                break
            gamma = new
        out[r] = 1000 + 400 / np.log(10) * (np.log(new) - np.log(new).mean())
    return out


def run_size(label: str, df: pd.DataFrame, elo_bootstrap: int, iqm_bootstrap: int,
             rows: list[dict[str, Any]], memory: bool = True) -> dict[str, float]:
    """Load and rank ``df``; append one row per step to ``rows``; return seconds per step."""
    n_models, n_datasets = df["model"].nunique(), df["dataset"].nunique()
    n_seeds = df["seed"].nunique()
    cube = df.sort_values(["model", "dataset", "seed"])["score"].to_numpy().reshape(
        n_models, n_datasets, n_seeds)
    _, ref_seconds, _ = measure(lambda: cube.mean(axis=2).mean(axis=1), 1, False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bench, *stats = measure(lambda: arenalite.load_df(df, seed="seed", norm_ref_low=0.0,
                                                          norm_ref_high=1.0), 1, memory,
                                keep=True)
        steps: list[tuple[str, Callable[[], Any]]] = [
            ("aggregate", bench.aggregate_ranking),
            (f"iqm (B={iqm_bootstrap})",
             lambda: bench.iqm_ranking(n_bootstrap=iqm_bootstrap, random_state=0)),
            ("elo (B=0)", lambda: bench.elo_ranking(n_bootstrap=0, resampling=ELO_RESAMPLING)),
            (f"elo (B={elo_bootstrap})",
             lambda: bench.elo_ranking(n_bootstrap=elo_bootstrap, random_state=0,
                                       resampling=ELO_RESAMPLING)),
            ("improvability", bench.improvability_ranking),
            ("performance_profiles", bench.performance_profiles),
            ("compare_rankings", bench.compare_rankings),
        ]
        timings = {"load": stats[0]}
        rows.append({"input": label, "step": "load", "seconds": stats[0], "peak_MB": stats[1],
                     "x numpy mean": stats[0] / ref_seconds})
        for name, fn in steps:
            _, seconds, peak = measure(fn, 1, memory)
            timings[name] = seconds
            rows.append({"input": label, "step": name, "seconds": seconds, "peak_MB": peak,
                         "x numpy mean": seconds / ref_seconds})
    rows.append({"input": label, "step": "reference: numpy mean", "seconds": ref_seconds,
                 "peak_MB": np.nan, "x numpy mean": 1.0})
    return timings


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-large", action="store_true", help="only input (a)")
    parser.add_argument("--large-elo-bootstrap", type=int, default=1000,
                        help="Elo replicates on input (b) (22 million battles each: the "
                             "'auto' resampling uses the Poisson bootstrap there)")
    parser.add_argument("--large-iqm-bootstrap", type=int, default=1000)
    parser.add_argument("--no-memory", action="store_true",
                        help="skip the traced second run of each step (peak memory)")
    parser.add_argument("--naive-replicates", type=int, default=5,
                        help="replicates of the loop-based Elo reference")
    args = parser.parse_args(argv)

    rows: list[dict[str, Any]] = []
    small = synthetic(14, 19, 5)
    timings = run_size("(a) 14×19×5", small, 1000, 1000, rows, not args.no_memory)
    _, naive_seconds, _ = measure(lambda: naive_elo_bootstrap(small, args.naive_replicates), 1,
                                  False)
    naive_per_replicate = naive_seconds / args.naive_replicates
    ours_per_replicate = (timings["elo (B=1000)"] - timings["elo (B=0)"]) / 1000
    rows.append({"input": "(a) 14×19×5",
                 "step": f"reference: loop Elo (B={args.naive_replicates})",
                 "seconds": naive_seconds, "peak_MB": np.nan, "x numpy mean": np.nan})

    if not args.skip_large:
        large = synthetic(150, 400, 5)
        big = run_size("(b) 150×400×5", large, args.large_elo_bootstrap,
                       args.large_iqm_bootstrap, rows, not args.no_memory)
        total = sum(v for k, v in big.items() if k != "elo (B=0)")

    table = pd.DataFrame(rows)
    with pd.option_context("display.width", 120, "display.max_rows", 100):
        print(table.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    print(f"\n(a) Elo bootstrap per replicate: {1e3 * ours_per_replicate:.3f} ms vectorized vs "
          f"{1e3 * naive_per_replicate:.1f} ms loop reference "
          f"({naive_per_replicate / max(ours_per_replicate, 1e-12):.0f}× faster)")
    print(f"(a) Elo with 1000 replicates: {timings['elo (B=1000)']:.3f} s (target: well under 1 s)")
    if not args.skip_large:
        print(f"(b) load + every ranking, Elo with B={args.large_elo_bootstrap} (Poisson "
              f"bootstrap), IQM with B={args.large_iqm_bootstrap}: {total:.1f} s (target < 30 s)")
    peak_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"max resident set size of the whole run: {peak_rss:.0f} MB (target < 4096 MB)")


if __name__ == "__main__":
    main()
