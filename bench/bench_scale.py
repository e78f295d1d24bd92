"""Rankings at scale in CPython and on wasm32: seconds and peak memory per step (issue 13).

Run ``python bench/bench_scale.py`` (``--help`` for options). Five workloads, each in a
fresh worker process per runtime (this script re-run with ``--worker``), so that every
worker's peak memory is its own:

* ``300k``: 150 models × 400 datasets × 5 seeds (300,000 rows): load and every ranking,
  IQM and Elo at B = 1000, and Elo with the dataset bootstrap at B = 1000;
* ``300k-seeds``: the same steps on 150 models × 40 datasets × 50 seeds (300,000 rows,
  issue 30's suite: many seeds per dataset, so each model has 2,000 runs on 40 datasets);
* ``report``: the GeoBench-sized input (14 × 19 × 5, synthetic of that shape): the whole
  ``arenalite report`` (every method, its CSVs, PNGs and report.html);
* ``many``: 1000 models × 50 datasets, no seeds (configurations of one family): load and
  every ranking, Elo at B = 100 (battle and dataset bootstrap);
* ``separated``: the same shape, but the models well separated (skill spread 0.1 against
  0.01 dataset affinity and 0.005 noise: the best beat most others on most datasets, the
  MLE needs the tie prior, and so does every replicate; issue 21): load and every
  ranking, IQM at B = 1000, Elo at B = 100.

Each rankings workload prints two totals (load + every ranking): with Elo at its default
resampling (what a user's plain calls cost; the dataset bootstrap since issue 11) and with
Elo's battle bootstrap (comparable with older commits).

Runtimes: ``cpython`` (this interpreter) and ``wasm32`` (``scripts/wasm_python.py``:
CPython 3.15 on wasm32 with a 32-bit ``intp``, under a 2 GiB memory cap). Per step it
prints the seconds of an untraced call (the least of ``--repeat`` calls), the tracemalloc
peak of a second, traced call (numpy registers its buffers, so temporaries count), the
step's time over a fixed numpy reference measured in the same worker (sorting 2 million
floats: a yardstick for a shared or slower machine) and, where the issue sets one, the
target and seconds / target. CPython workers also report the process's peak resident set
size (wasm32 has no getrusage; there the 2 GiB cap is the check). scipy.stats is imported
before the ranking steps are timed (a one-time cost of the session, not of a ranking);
the report workload times the whole command, imports included.
``--pkg DIR`` times another copy of the package, e.g. an older commit's for a before/after
table: ``git archive d0d35ae pkg | tar -x -C build/before`` then ``--pkg build/before/pkg``.
"""

from __future__ import annotations

import argparse
import inspect
import json
import shutil
import subprocess
import sys
import tempfile
import time
import tracemalloc
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
PKG = HERE.parent / "pkg"
WORKLOADS = ("300k", "300k-seeds", "report", "many", "separated")
RUNTIMES = ("cpython", "wasm32")
WASM_MEMORY_BYTES = 2 * 2**30
# (workload, step) → target seconds; (workload, "total") is load + every ranking, and
# applies to both total rows (Elo at its default scheme, Elo battle; see ranking_steps).
TARGET_SECONDS = {("300k", "total"): {"cpython": 4.0, "wasm32": 8.0},
                  ("300k-seeds", "total"): {"cpython": 4.0, "wasm32": 8.0},
                  ("300k", "elo dataset (B=1000)"): {"cpython": 2.0},
                  ("report", "arenalite report"): {"cpython": 3.0},
                  ("many", "total"): {"cpython": 10.0},
                  ("separated", "total"): {"cpython": 5.0}}
TARGET_PEAK_MB = {"300k": {"cpython": 1024.0}, "many": {"cpython": 1536.0, "wasm32": 2048.0},
                  "separated": {"cpython": 1536.0, "wasm32": 2048.0}}


# ---- worker: runs inside the timed interpreter ---------------------------------------------
def synthetic(n_models: int, n_datasets: int, n_seeds: int, seed: int = 0, *,
              skill_sd: float = 0.04, affinity_sd: float = 0.02, noise_sd: float = 0.02) -> Any:
    """Long table of accuracy-like scores: model skill + dataset difficulty + model-dataset
    affinity + seed noise (standard deviations as given; difficulty 0.1)."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(seed)
    skill = rng.normal(0.0, skill_sd, n_models)
    difficulty = rng.normal(0.0, 0.1, n_datasets)
    affinity = rng.normal(0.0, affinity_sd, (n_models, n_datasets, 1))
    noise = rng.normal(0.0, noise_sd, (n_models, n_datasets, n_seeds))
    score = np.clip(0.75 + skill[:, None, None] + difficulty[None, :, None] + affinity + noise,
                    0.01, 0.99)
    m, d, s = (a.ravel() for a in np.meshgrid(np.arange(n_models), np.arange(n_datasets),
                                              np.arange(n_seeds), indexing="ij"))
    return pd.DataFrame({
        "model": np.char.add("model_", m.astype(str)).astype(object),
        "dataset": np.char.add("data_", d.astype(str)).astype(object),
        "seed": s,
        "metric": "accuracy",
        "score": score.ravel().round(6),
    })


def measure(fn: Callable[..., Any], repeat: int, memory: bool, keep: bool = False,
            setup: Callable[[], tuple] = tuple) -> tuple[Any, float, float | None]:
    """(result if ``keep`` else None, least seconds over ``repeat`` untraced calls
    ``fn(*setup())``, tracemalloc peak MB of one more, traced call or None).

    ``setup`` runs untimed before each call. No result is held while the next call
    runs, so a step's peak is its own.
    """
    best = float("inf")
    out = None
    for _ in range(repeat):
        out = None
        args = setup()
        start = time.perf_counter()
        out = fn(*args)
        best = min(best, time.perf_counter() - start)
        if not keep:
            out = None
    peak = None
    if memory:
        args = setup()
        tracemalloc.start()
        fn(*args)
        peak = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
    return out, best, peak


def reference_seconds() -> float:
    """The yardstick: least time of five sorts of 2 million floats."""
    import numpy as np

    values = np.random.default_rng(0).random(2_000_000)
    return min(measure(lambda: np.sort(values), 1, False)[1] for _ in range(5))


def dataset_bootstrap_supported(bench: Any) -> bool:
    """Whether this arenalite's Elo has ``resampling="dataset"`` (issue 11)."""
    from arenalite.rankings import elo

    return "resampling" in inspect.signature(bench.elo_ranking).parameters and \
        "dataset" in getattr(elo, "RESAMPLING", ())


TOTAL_DEFAULT = "total, Elo default scheme"
TOTAL_BATTLE = "total, Elo battle scheme"
COMPARE = "compare_rankings"


def elo_default_scheme(bench: Any) -> str:
    """The resampling a plain ``elo_ranking()`` call uses ("battle" before issue 11)."""
    if not dataset_bootstrap_supported(bench):
        return "battle"
    return inspect.signature(bench.elo_ranking).parameters["resampling"].default


def ranking_steps(bench: Any, elo_bootstrap: int, iqm_bootstrap: int | None
                  ) -> list[tuple[str, tuple[str, ...], Callable[[Any], Any]]]:
    """(name, the totals it counts in, call on a Benchmark) for every ranking of ``bench``.

    Two totals: every ranking as a user's plain calls cost it (Elo at its default
    resampling, the dataset bootstrap since issue 11), and every ranking with Elo's
    battle bootstrap (the scheme of d0d35ae, so before and after compare). The profiles'
    long-form table (M × T rows, laid out when first read) is timed on its own row and
    counts in neither total.
    """
    both = (TOTAL_DEFAULT, TOTAL_BATTLE)
    has_schemes = dataset_bootstrap_supported(bench)
    default = elo_default_scheme(bench)
    steps: list[tuple[str, tuple[str, ...], Callable[[Any], Any]]] = [
        ("aggregate", both, lambda b: b.aggregate_ranking())]
    if iqm_bootstrap:
        steps.append((f"iqm (B={iqm_bootstrap})", both,
                      lambda b: b.iqm_ranking(n_bootstrap=iqm_bootstrap, random_state=0)))
    battle = {"resampling": "battle"} if has_schemes else {}
    battle_totals = both if default == "battle" else (TOTAL_BATTLE,)
    steps.append((f"elo battle (B={elo_bootstrap})", battle_totals,
                  lambda b: b.elo_ranking(n_bootstrap=elo_bootstrap, random_state=0,
                                          **battle)))
    if has_schemes:
        steps.append((f"elo dataset (B={elo_bootstrap})",
                       (TOTAL_DEFAULT,) if default == "dataset" else (),
                       lambda b: b.elo_ranking(n_bootstrap=elo_bootstrap, random_state=0,
                                               resampling="dataset")))
    steps += [("improvability", both, lambda b: b.improvability_ranking()),
              ("performance_profiles", both, lambda b: b.performance_profiles()),
              # the profiles' M × T long form, laid out on first access: shown, not totalled
              ("profiles .table (long form)", (), lambda b: b.performance_profiles().table),
              (COMPARE, both, lambda b: b.compare_rankings()),
              ("friedman + nemenyi", both, lambda b: b.frequentist_comparison())]
    return steps


def run_rankings(df: Any, seed: str | None, elo_bootstrap: int, iqm_bootstrap: int | None,
                 repeat: int, memory: bool) -> list[dict]:
    """Load ``df`` and time every ranking; the last two rows are the totals (load + the
    steps that count in each, see :func:`ranking_steps`).

    Each call gets a fresh copy of the loaded Benchmark (untimed), so no step reuses
    another's work through ``Benchmark.memo``; except compare_rankings, whose copy has
    had one plain ``elo_ranking`` call, as in a session that runs every ranking (both
    totals' Elo steps pay that point fit, which compare_rankings then shares).
    """
    import arenalite

    rows = []
    bench, seconds, peak = measure(lambda: arenalite.load_df(
        df, seed=seed, norm_ref_low=0.0, norm_ref_high=1.0), repeat, memory, keep=True)
    rows.append({"step": "load", "seconds": seconds, "peak_MB": peak})

    def fresh() -> tuple[Any]:
        return (bench.select_models(bench.models_),)

    def after_elo() -> tuple[Any]:
        copy = bench.select_models(bench.models_)
        copy.elo_ranking(n_bootstrap=0)
        return (copy,)

    totals = {TOTAL_DEFAULT: seconds, TOTAL_BATTLE: seconds}
    for name, counted, fn in ranking_steps(bench, elo_bootstrap, iqm_bootstrap):
        setup = after_elo if name == COMPARE else fresh
        _, seconds, peak = measure(fn, repeat, memory, setup=setup)
        rows.append({"step": name, "seconds": seconds, "peak_MB": peak})
        for total in counted:
            totals[total] += seconds
    label = f"{TOTAL_DEFAULT} ({elo_default_scheme(bench)})"
    rows.append({"step": label, "seconds": totals[TOTAL_DEFAULT], "peak_MB": None})
    rows.append({"step": TOTAL_BATTLE, "seconds": totals[TOTAL_BATTLE], "peak_MB": None})
    return rows


def run_report(repeat: int, memory: bool) -> list[dict]:
    """Time ``arenalite report`` on a GeoBench-shaped CSV (CSVs, PNGs and report.html)."""
    from arenalite import cli

    folder = Path(tempfile.mkdtemp(prefix="bench_scale_"))
    csv = folder / "results.csv"
    synthetic(14, 19, 5).to_csv(csv, index=False)
    config = folder / "config.json"
    config.write_text(json.dumps({"seed": "seed", "norm_ref_low": 0, "norm_ref_high": 1}))
    argv = ["report", str(csv), "--config", str(config), "--output", str(folder / "out")]
    _, seconds, peak = measure(lambda: cli.main(argv), repeat, memory)
    shutil.rmtree(folder, ignore_errors=True)
    return [{"step": "arenalite report", "seconds": seconds, "peak_MB": peak}]


def worker(workload: str, repeat: int, memory: bool) -> None:
    """Run one workload here; print one JSON line per step, then the reference."""
    import numpy as np

    import arenalite

    info = {"arenalite": str(Path(arenalite.__file__).parent), "intp_bits":
            8 * np.dtype(np.intp).itemsize, "reference_seconds": reference_seconds()}
    if workload != "report":  # one-time imports are not a ranking's cost (the report pays them)
        import scipy.special  # noqa: F401
        import scipy.stats  # noqa: F401
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if workload == "300k":
            rows = run_rankings(synthetic(150, 400, 5), "seed", 1000, 1000, repeat, memory)
        elif workload == "300k-seeds":
            rows = run_rankings(synthetic(150, 40, 50), "seed", 1000, 1000, repeat, memory)
        elif workload == "many":
            rows = run_rankings(synthetic(1000, 50, 1).drop(columns="seed"), None, 100, None,
                                repeat, memory)
        elif workload == "separated":
            suite = synthetic(1000, 50, 1, skill_sd=0.1, affinity_sd=0.01, noise_sd=0.005)
            rows = run_rankings(suite.drop(columns="seed"), None, 100, 1000, repeat, memory)
        else:
            rows = run_report(repeat, memory)
    try:
        import resource

        info["max_rss_MB"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    except ImportError:  # not on wasm32
        info["max_rss_MB"] = None
    for row in rows:
        print("BENCH " + json.dumps(row))
    print("BENCH " + json.dumps({"step": "_info", **info}))


# ---- driver: starts the workers and prints the tables -------------------------------------
def run_worker(runtime: str, workload: str, pkg: Path, repeat: int,
               memory: bool) -> tuple[list[dict], dict, str | None]:
    """(step rows, info, error or None) of one worker.

    wasm32 runs through ``scripts/wasm_python.py`` (the repository read-only at /repo, a
    2 GiB memory cap), so ``pkg`` must lie inside the repository there.
    """
    repo = HERE.parent
    args = ["--worker", workload, "--repeat", str(repeat)] + ([] if memory else ["--no-memory"])
    if runtime == "cpython":
        command = [sys.executable, str(HERE / "bench_scale.py"), *args, "--pkg", str(pkg)]
    else:
        if not pkg.is_relative_to(repo):
            return [], {}, f"--pkg {pkg} is outside the repository, which wasm32 cannot see"
        command = [sys.executable, str(repo / "scripts" / "wasm_python.py"), "--memory-bytes",
                   str(WASM_MEMORY_BYTES), "--", "bench/bench_scale.py", *args, "--pkg",
                   str(Path("/repo") / pkg.relative_to(repo))]
    proc = subprocess.run(command, capture_output=True, text=True, cwd=repo)
    rows = [json.loads(line[6:]) for line in proc.stdout.splitlines()
            if line.startswith("BENCH ")]
    info = next((r for r in rows if r["step"] == "_info"), {})
    if proc.returncode != 0 or not info:
        return rows, info, f"exit {proc.returncode}: {proc.stderr.strip()[-800:]}"
    return [r for r in rows if r["step"] != "_info"], info, None


def _cell(value: float | None, fmt: str) -> str:
    return "—" if value is None else format(value, fmt)


def print_table(workload: str, results: dict[str, tuple[list[dict], dict, str | None]]) -> None:
    """One table: a row per step, per runtime seconds, peak MB, ×reference and ×target."""
    steps = list(dict.fromkeys(r["step"] for rows, _, _ in results.values() for r in rows))
    header = f"{'step':<40}"
    for runtime in results:
        header += f" | {runtime:>8} s {'peak MB':>8} {'×ref':>6} {'×target':>8}"
    print(f"\n== {workload} ==\n{header}\n{'-' * len(header)}")
    for step in steps:
        line = f"{step:<40}"
        for runtime, (rows, info, _) in results.items():
            row = next((r for r in rows if r["step"] == step), None)
            seconds = None if row is None else row["seconds"]
            key = "total" if step.startswith("total") else step
            target = TARGET_SECONDS.get((workload, key), {}).get(runtime)
            ratio = None if seconds is None or target is None else seconds / target
            ref = info.get("reference_seconds")
            line += (f" | {_cell(seconds, '10.3f')} {_cell(row and row['peak_MB'], '8.0f')} "
                     f"{_cell(seconds / ref if seconds is not None and ref else None, '6.0f')} "
                     f"{_cell(ratio, '8.2f')}")
        print(line)
    for runtime, (rows, info, error) in results.items():
        if error:
            print(f"{runtime}: FAILED ({error})")
            continue
        peaks = [r["peak_MB"] for r in rows if r["peak_MB"] is not None]
        peak = info.get("max_rss_MB") or max(peaks, default=None)
        kind = "max RSS" if info.get("max_rss_MB") else "largest tracemalloc peak"
        target = TARGET_PEAK_MB.get(workload, {}).get(runtime)
        memory = (f"{kind} {peak:.0f} MB" + (f", target {target:.0f} MB, ×{peak / target:.2f}"
                                               if target else "")
                  if peak is not None else "no peak measured (--no-memory)")
        print(f"{runtime}: {memory}; reference (sort of 2e6 floats) "
              f"{1e3 * info['reference_seconds']:.1f} ms; intp {info['intp_bits']} bits; "
              f"arenalite from {info['arenalite']}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workloads", nargs="+", choices=WORKLOADS, default=list(WORKLOADS))
    parser.add_argument("--runtimes", nargs="+", choices=RUNTIMES, default=list(RUNTIMES))
    parser.add_argument("--repeat", type=int, default=1,
                        help="untraced calls per step; the least time is kept (default 1)")
    parser.add_argument("--no-memory", action="store_true",
                        help="skip the traced call of each step (no per-step peak)")
    parser.add_argument("--pkg", type=Path, default=PKG,
                        help="folder holding the arenalite package to time (default: pkg/; "
                             "for wasm32 it must lie inside the repository)")
    parser.add_argument("--worker", choices=WORKLOADS, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        sys.path.insert(0, str(args.pkg))
        worker(args.worker, args.repeat, not args.no_memory)
        return
    for workload in args.workloads:
        results = {runtime: run_worker(runtime, workload, args.pkg.resolve(), args.repeat,
                                       not args.no_memory)
                   for runtime in args.runtimes}
        print_table(workload, results)


if __name__ == "__main__":
    main()
