"""Are every ranking's tables unchanged? This tree's package against another copy.

``python bench/compare_tables.py --pkg build/before/pkg`` (e.g. after
``mkdir -p build/before && git archive <commit> pkg | tar -x -C build/before``) computes
aggregate, IQM, Elo (dataset bootstrap), improvability, the performance profiles (AUP and
every 997th row of the long table), compare_rankings and Friedman/Nemenyi on
``bench_scale.py``'s 300k and separated suites, once with each package (one subprocess
each), and prints per table: bit-identical, or the largest numeric difference after
ordering rows by model, and whether the other columns agree.
"""

from __future__ import annotations

import argparse
import os
import pickle
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def tables() -> dict[tuple[str, str], object]:
    """Every compared table of both suites, with the package on ``sys.path``."""
    import arenalite
    from bench_scale import synthetic

    suites = {"300k": (synthetic(150, 400, 5), "seed", 1000),
              "separated": (synthetic(1000, 50, 1, skill_sd=0.1, affinity_sd=0.01,
                                      noise_sd=0.005).drop(columns="seed"), None, 100)}
    out = {}
    for name, (df, seed, elo_bootstrap) in suites.items():
        print(f"[compare_tables] {name} with {Path(arenalite.__file__).parent}", flush=True)
        bench = arenalite.load_df(df, seed=seed, norm_ref_low=0.0, norm_ref_high=1.0)
        profiles = bench.performance_profiles()
        out[name, "aggregate"] = bench.aggregate_ranking().table
        out[name, "iqm"] = bench.iqm_ranking(n_bootstrap=1000, random_state=0).table
        out[name, "elo dataset"] = bench.elo_ranking(n_bootstrap=elo_bootstrap, random_state=0,
                                                     resampling="dataset").table
        out[name, "improvability"] = bench.improvability_ranking().table
        out[name, "profiles aup"] = profiles.aup.to_frame()
        out[name, "profiles table"] = profiles.table.iloc[::997].reset_index(drop=True)
        out[name, "compare"] = bench.compare_rankings().table
        out[name, "friedman"] = bench.frequentist_comparison().table
    return out


def difference(new, old) -> str:
    """'bit-identical', or the largest numeric difference by model and the other columns."""
    import numpy as np

    if new.equals(old):
        return "bit-identical"
    if new.shape != old.shape or list(new.columns) != list(old.columns):
        return (f"DIFFERENT SHAPES: {new.shape} {list(new.columns)} vs {old.shape} "
                f"{list(old.columns)}")
    if "model" in new.columns:
        new, old = (t.sort_values("model").reset_index(drop=True) for t in (new, old))
    numbers = new.select_dtypes("number").columns
    largest = (float(np.abs(new[numbers].to_numpy(float) - old[numbers].to_numpy(float)).max())
               if len(numbers) else 0.0)
    others = [c for c in new.columns if c not in numbers]
    same = all(new[c].astype(str).equals(old[c].astype(str)) for c in others)
    return f"largest difference {largest:.2e}; other columns {'equal' if same else 'DIFFER'}"


def worker(path: Path) -> None:
    sys.path.insert(0, str(HERE))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        found = tables()
    path.write_bytes(pickle.dumps(found))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pkg", type=Path, required=True, help="the other copy's pkg folder")
    ap.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        worker(args.worker)
        return 0
    if not (args.pkg / "arenalite").is_dir():
        print(f"compare_tables: {args.pkg} has no arenalite package", file=sys.stderr)
        return 2
    found = {}
    with tempfile.TemporaryDirectory() as folder:
        for label, pkg in (("this tree", ROOT / "pkg"), ("other", args.pkg.resolve())):
            out = Path(folder) / f"{label}.pkl"
            env = {**os.environ, "PYTHONPATH": str(pkg)}
            subprocess.run([sys.executable, __file__, "--pkg", str(pkg), "--worker", str(out)],
                           check=True, env=env)
            found[label] = pickle.loads(out.read_bytes())
    for key, new in found["this tree"].items():
        print(f"{key[0]:>9} {key[1]:<15} {difference(new, found['other'][key])}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
