"""knn and attention against scikit-learn, and one split of a 54,000-row table.

``python bench/bench_knn.py [--repeats R] [--before REV --before-rows N]``

1. knn at 12,000 context × 6,000 query rows × 26 features (issue 43, item 6):
   arenalite's whole ``predict`` call (validation, standardization, neighbours, mean) and
   its ``neighbours`` alone, beside scikit-learn's ``KNeighborsRegressor`` (k = 5, its
   default algorithm, fit + predict on the already standardized rows), measured in the
   same run; the best of R repeats each, and the ratio to scikit-learn.
2. One split of a synthetic 54,000-row, 26-feature binary table as the adaptive 3-fold
   split cuts it (36,000 context × 18,000 query rows): knn (k = 5) and attention through
   ``predict``, seconds per split.
3. ``--before REV``: the same split with the knn/attention/distances modules of git
   revision REV (loaded from ``git show``), on the first N query rows (default 1,800) and
   scaled to 18,000 (the cost is linear in the query rows); knn's indices are checked
   equal to today's on those rows.

scikit-learn is the yardstick here only: arenalite never imports it.
"""

from __future__ import annotations

import argparse
import importlib
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from arenalite.models import predict
from arenalite.models.knn import neighbours
from arenalite.models.preprocess import standardize

ROOT = Path(__file__).resolve().parents[1]
MODULES = ("distances", "knn", "attention")


def best(fn, repeats: int) -> float:
    """The fastest of ``repeats`` calls, seconds."""
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def against_sklearn(repeats: int) -> None:
    from sklearn.neighbors import KNeighborsRegressor

    rng = np.random.default_rng(0)
    x, xq = rng.normal(size=(12_000, 26)), rng.normal(size=(6_000, 26))
    y = rng.normal(size=12_000)
    xs, xqs = standardize(x, xq)
    ours = best(lambda: predict({"name": "knn", "k": 5}, x, y, xq, "regression"), repeats)
    ours_nb = best(lambda: neighbours(xqs, xs, 5), repeats)
    sk = best(lambda: KNeighborsRegressor(n_neighbors=5).fit(xs, y).predict(xqs), repeats)
    same = np.allclose(predict({"name": "knn", "k": 5}, x, y, xq, "regression"),
                       KNeighborsRegressor(n_neighbors=5).fit(xs, y).predict(xqs),
                       rtol=0, atol=1e-12)
    print("knn, 12,000 context x 6,000 query x 26 features, k = 5 "
          f"(best of {repeats}; outputs equal to scikit-learn's: {same})")
    print(f"  scikit-learn KNeighborsRegressor fit+predict  {sk:8.3f} s")
    print(f"  arenalite predict (whole call)               {ours:8.3f} s   "
          f"ratio {ours / sk:5.2f}")
    print(f"  arenalite neighbours only                    {ours_nb:8.3f} s   "
          f"ratio {ours_nb / sk:5.2f}")


def big_split() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(1)
    x = rng.normal(size=(54_000, 26))
    y = (x[:, :3].sum(axis=1) + rng.normal(size=54_000) > 0).astype(np.int64)
    test = np.arange(54_000) % 3 == 0
    return x[~test], y[~test], x[test]


def split_54k(repeats: int) -> None:
    x, y, xq = big_split()
    print(f"one split of a 54,000-row table: {len(x):,} context x {len(xq):,} query x 26 "
          f"(binary; best of {repeats})")
    for model in ({"name": "knn", "k": 5}, {"name": "attention"}):
        s = best(lambda m=model: predict(m, x, y, xq, "binary", 2), repeats)
        print(f"  {model['name']:<10} {s:7.2f} s per split")


def load_revision(rev: str, where: Path):
    """The models' distance modules at ``rev`` as a package ``before_models``."""
    pkg = where / "before_models"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    for name in MODULES:
        text = subprocess.run(["git", "show", f"{rev}:pkg/arenalite/models/{name}.py"],
                              cwd=ROOT, check=True, capture_output=True, text=True).stdout
        (pkg / f"{name}.py").write_text(text.replace("from . import threads",
                                                     "from arenalite.models import threads"))
    sys.path.insert(0, str(where))
    return (importlib.import_module("before_models.knn"),
            importlib.import_module("before_models.attention"))


def before(rev: str, rows: int) -> None:
    x, _, xq = big_split()
    xs, xqs = standardize(x, xq[:rows])
    scale = len(xq) / rows
    with tempfile.TemporaryDirectory() as tmp:
        old_knn, old_attention = load_revision(rev, Path(tmp))
        t0 = time.perf_counter()
        old = old_knn.neighbours(xqs, xs, 5)
        knn_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        old_attention.attention_weights(xqs, xs, 26.0)
        att_s = time.perf_counter() - t0
    same = np.array_equal(old, neighbours(xqs, xs, 5))
    print(f"before ({rev}): {rows:,} of the {len(xq):,} query rows, scaled x{scale:g}")
    print(f"  knn        {knn_s * scale:7.1f} s per split (neighbours; indices equal to "
          f"today's: {same})")
    print(f"  attention  {att_s * scale:7.1f} s per split (weights only)")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--before", metavar="REV", help="also time REV's implementation")
    parser.add_argument("--before-rows", type=int, default=1_800)
    args = parser.parse_args(argv)
    against_sklearn(args.repeats)
    split_54k(max(1, args.repeats - 1))
    if args.before:
        before(args.before, args.before_rows)


if __name__ == "__main__":
    main()
