"""The tournament methodology's shape: 21 tables, their adaptive splits, 3 fast models.

``python bench/bench_tournament.py [--largest ROWS] [--runs NAME,...] [--no-report]
[--out FILE]``

The suite: 21 synthetic tables written as CSV files with a suite.toml, sized as the
methodology's adaptive rule sorts tables (docs/splits.md): 4 tables small enough for
20 repeats of 3 folds (60 splits each), 5 for 10 repeats (30 each) and 12 for 3 repeats
(9 each) up to ``--largest`` rows (54,000 by default, the size of issue 43's slow table):
498 splits, against the methodology's 489. Features 6 to 26; binary, multiclass and
regression targets.

Each run is a fresh child process calling ``arenalite.tournament(suite, models, out)``
(in process, or ``workers=2``) and reports

- the phases' wall times: setup (tables read and checked, splits made), the tasks, and the
  finish (scorecard with 1,000 bootstrap replicates, leaderboard, report.html);
- the runner's own time per task: the tasks' wall time less the models' own time
  (``total_ms`` of every row: validation, standardization and the model) shared over the
  processes playing them (1 or 2), per task; with the ``null`` models (three entrants
  that return the training prior or mean at once) nearly all of the wall is the runner's;
- peak RSS: the process's own (``ru_maxrss``) at the end of the setup, of the tasks and
  of the whole call, the largest worker's (its VmHWM, read from /proc while the run goes;
  a forked worker counts the pages it shares with its parent), and the process's RSS
  after its imports; the largest table's size in memory (its float64 features and
  target) for the goal "peak RSS ≤ 1.5 × largest table + 200 MB".

Runs: ``fast`` (knn k=1, knn k=15, attention), ``fast6`` (twice the models: also knn k=5,
knn k=31, attention T=1), ``null``; each in process (``-0``) and with 2 workers (``-2``).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

from arenalite.tournament import Model

HERE = Path(__file__).resolve()
FAST = ["knn:k=1", "knn:k=15", "attention"]
FAST6 = FAST + ["knn:k=5", "knn:k=31", "attention:temperature=1.0"]
RUNS = ("null-0", "null-2", "fast-0", "fast-2", "fast6-0", "fast6-2")
TASKS = ("binary", "multiclass", "regression")


def table_sizes(largest: int) -> list[int]:
    """4 tables of 20 repeats (≤ 749 rows), 5 of 10 (≤ 3,749), 12 of 3 up to ``largest``."""
    small = [300, 420, 560, 700]
    middle = [900, 1_400, 2_000, 2_800, 3_600]
    large = np.geomspace(4_000, max(largest, 4_001), 12).round().astype(int).tolist()
    return small + middle + large


def write_suite(folder: Path, largest: int) -> tuple[Path, int]:
    """The 21 CSV tables and suite.toml; returns the suite's path and the largest table's
    bytes in memory (float64 features and target)."""
    rng = np.random.default_rng(43)
    lines = ['name = "bench-methodology"']
    biggest = 0
    for i, rows in enumerate(table_sizes(largest)):
        features = 6 + (i * 5) % 21
        task = TASKS[i % 3]
        x = rng.normal(size=(rows, features))
        signal = x[:, :3] @ np.array([1.0, -0.7, 0.4]) + 0.5 * rng.normal(size=rows)
        if task == "binary":
            y = (signal > 0).astype(int)
        elif task == "multiclass":
            y = np.digitize(signal, [-0.6, 0.0, 0.6])
        else:
            y = signal * 10 + 3
        header = ",".join([f"f{j}" for j in range(features)] + ["target"])
        body = np.column_stack([x, y])
        fmt = ["%.6f"] * features + (["%d"] if task != "regression" else ["%.6f"])
        path = folder / f"t{i:02d}.csv"
        np.savetxt(path, body, delimiter=",", header=header, comments="", fmt=fmt)
        lines += ["[[datasets]]", f'path = "{path.name}"', 'target = "target"',
                  f'task = "{task}"']
        biggest = max(biggest, rows * (features + 1) * 8)
    suite = folder / "suite.toml"
    suite.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return suite, biggest


class Prior(Model):
    """An entrant that costs nothing: the training class prior (plus ``shrink`` per
    class) or the training mean times ``shrink``."""

    def __init__(self, label: str, shrink: float) -> None:
        self.label, self.params, self.shrink = label, {"shrink": shrink}, shrink

    def predict_timed(self, x_train, y_train, x_test, task, n_classes):
        t0 = time.perf_counter()
        if n_classes is None:
            out = np.full(len(x_test), float(np.mean(y_train)) * self.shrink)
        else:
            prior = np.bincount(y_train, minlength=n_classes) + self.shrink
            out = np.tile(prior / prior.sum(), (len(x_test), 1))
        ms = (time.perf_counter() - t0) * 1e3
        return out, {"embed": 0.0, "layers": [ms], "head": 0.0, "total": ms}


def null_models() -> list[Prior]:
    return [Prior("prior-a", 1.0), Prior("prior-b", 0.5), Prior("prior-c", 2.0)]


def rss_mb(who: int) -> float:
    return resource.getrusage(who).ru_maxrss / 1024  # Linux: KiB


def current_rss_mb() -> float:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def children_peak_mb(stop, found: dict) -> None:
    """Until ``stop`` is set, the largest VmHWM (peak RSS) of this process's children, read
    from /proc every 0.2 s into ``found["mb"]`` (ru_maxrss of the children would also count
    any short-lived child forked from this process late in the run)."""
    me = str(os.getpid())
    while not stop.wait(0.2):
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/status") as handle:
                    fields = dict(line.split(":", 1) for line in handle if ":" in line)
            except OSError:
                continue
            if fields.get("PPid", "").strip() == me and "VmHWM" in fields:
                kb = int(fields["VmHWM"].split()[0])
                found["mb"] = max(found.get("mb", 0.0), kb / 1024)


def child(run: str, suite: str, out: str, report: bool = True) -> dict:
    """One run in this (fresh) process; the figures as a dict."""
    import arenalite
    from arenalite.tournament import run as run_module

    imported = current_rss_mb()
    kind, workers = run.rsplit("-", 1)
    models = {"null": null_models, "fast": lambda: FAST, "fast6": lambda: FAST6}[kind]()
    phases = {"tasks": 0.0}
    play = run_module._play

    def timed_play(*args, **kwargs):
        phases["setup_rss_mb"] = rss_mb(resource.RUSAGE_SELF)
        t0 = time.perf_counter()
        try:
            return play(*args, **kwargs)
        finally:
            phases["tasks"] += time.perf_counter() - t0
            phases["tasks_rss_mb"] = rss_mb(resource.RUSAGE_SELF)

    run_module._play = timed_play
    stop, workers_peak = threading.Event(), {}
    watcher = threading.Thread(target=children_peak_mb, args=(stop, workers_peak), daemon=True)
    watcher.start()
    t0 = time.perf_counter()
    result = arenalite.tournament(suite, models, out=out, workers=int(workers),
                                  progress=False, log=lambda text: None, report=report)
    wall = time.perf_counter() - t0
    stop.set()
    watcher.join()
    n = len(result.results)
    model_s = float(result.results["total_ms"].sum()) / 1e3
    procs = max(1, int(workers))
    return {"run": run, "tasks": n, "failed": len(result.failures), "wall_s": wall,
            "tasks_s": phases["tasks"], "model_s": model_s,
            "own_ms_per_task": (phases["tasks"] - model_s / procs) / n * 1e3,
            "rss_mb": rss_mb(resource.RUSAGE_SELF),
            "setup_rss_mb": phases["setup_rss_mb"], "tasks_rss_mb": phases["tasks_rss_mb"],
            "worker_rss_mb": workers_peak.get("mb") if procs > 1 else None,
            "import_rss_mb": imported}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--largest", type=int, default=54_000)
    parser.add_argument("--runs", default=",".join(RUNS))
    parser.add_argument("--out", help="also write the figures as JSON here")
    parser.add_argument("--no-report", action="store_true",
                        help="tournament(..., report=False): no report.html")
    parser.add_argument("--child", nargs=3, metavar=("RUN", "SUITE", "OUT"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(*args.child, report=not args.no_report)))
        return
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-tournament-") as tmp:
        suite, biggest = write_suite(Path(tmp), args.largest)
        print(f"21 tables, largest {args.largest:,} rows ({biggest / 2**20:.1f} MB in memory); "
              f"goal for peak RSS: 1.5 x that + 200 MB = {1.5 * biggest / 2**20 + 200:.0f} MB")
        for run in args.runs.split(","):
            out = Path(tmp) / f"out-{run}"
            proc = subprocess.run([sys.executable, str(HERE), "--child", run, str(suite),
                                   str(out), *(["--no-report"] if args.no_report else [])],
                                  capture_output=True, text=True, check=False)
            if proc.returncode:
                print(proc.stderr[-3000:], file=sys.stderr)
                raise SystemExit(f"run {run} failed (exit {proc.returncode})")
            row = json.loads(proc.stdout.strip().splitlines()[-1])
            rows.append(row)
            worker = (f"{row['worker_rss_mb']:7.0f}" if row["worker_rss_mb"] is not None
                      else "      -")
            print(f"{run:<8} tasks {row['tasks']:5d}  failed {row['failed']}  "
                  f"wall {row['wall_s']:7.1f} s  tasks {row['tasks_s']:7.1f} s  "
                  f"models {row['model_s']:7.1f} s  own {row['own_ms_per_task']:6.2f} ms/task  "
                  f"peak RSS setup {row['setup_rss_mb']:5.0f} tasks {row['tasks_rss_mb']:5.0f} "
                  f"all {row['rss_mb']:5.0f} MB  worker {worker} MB  "
                  f"after imports {row['import_rss_mb']:4.0f} MB", flush=True)
    if args.out:
        Path(args.out).write_text(json.dumps({"largest": args.largest,
                                              "largest_table_mb": biggest / 2**20,
                                              "runs": rows}, indent=2) + "\n")


if __name__ == "__main__":
    main()
