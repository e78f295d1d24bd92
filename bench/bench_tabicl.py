"""TabICLv2's numpy reference against the package's torch forward, same run, same weights.

``python bench/bench_tabicl.py`` (needs the ``tabicl`` extra: torch and the ``tabicl``
package; ``--skip-large`` leaves out the 10,000 × 100 memory run, ``--threads`` sets both
libraries' thread count — torch's, numpy's BLAS (before numpy loads) and arenalite's worker
threads: ``1``, ``2``, ``all``, or a list, default ``1,all``: one child process per count,
then a table of numpy / torch per count and shape). One full-size TabICLv2 classifier with
random weights (the v2 config: 27.5 M parameters) runs one ensemble member's raw forward at
128 context + 48 query rows × 4 features and at 1,024 + 256 × 30, in both libraries, and
prints per shape the median wall time after a warm-up, each stage's time (column embedding,
row interaction, ICL with its head), the ratio numpy / torch (goal ≤ 1.5) and the largest
output difference. The large run reports numpy's peak traced memory (tracemalloc: numpy's
buffers) and the process's maximum resident set size. ``--wrappers`` also times issue 37's
own measure: the package's ``TabICLClassifier(n_estimators=1).fit(X,
y).predict_proba(X_test)`` against ``arenalite.models.predict`` (preprocessing included) on
a saved full-size checkpoint.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import resource
import statistics
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import forward_bench  # bench/, beside this script

forward_bench.prepare_process()

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "pkg"))

from arenalite.models import threads  # noqa: E402
from arenalite.models.tabicl.model import TabICLModel, forward  # noqa: E402

SHAPES = [(128, 48, 4), (1024, 256, 30)]
LARGE = (10_000, 256, 100)


def v2_config(TabICL) -> dict:
    """TabICLv2's classifier config: the class defaults with the split-half RoPE."""
    params = inspect.signature(TabICL.__init__).parameters
    config = {k: p.default for k, p in params.items() if k not in ("self",)}
    config.update(row_rope_interleaved=False, zero_init=False, recompute=False)
    return config


def build_models(torch):
    """TabICLv2's classifier with the package's random initialisation (seed 0), arenalite's
    numpy model on the same tensors, and the package's inference config with autocast and
    offloading off: ``(torch model, TabICLModel, InferenceConfig)``."""
    from tabicl._model.inference_config import InferenceConfig
    from tabicl._model.tabicl import TabICL

    torch.manual_seed(0)
    config = v2_config(TabICL)
    tmodel = TabICL(**config).eval()
    tensors = {k: v.detach().numpy().copy() for k, v in tmodel.state_dict().items()}
    base = {"device": "cpu", "use_amp": False, "offload": False}
    icfg = InferenceConfig(COL_CONFIG=dict(base), ROW_CONFIG=dict(base), ICL_CONFIG=dict(base))
    return tmodel, TabICLModel(config, tensors), icfg


def torch_stages(torch, model, x, y, config):
    """The package's forward stage by stage (autocast off), with each stage's seconds."""
    xt, yt = torch.from_numpy(x)[None], torch.from_numpy(y)[None]
    with torch.no_grad():
        t0 = time.perf_counter()
        col = model.col_embedder(xt, y_train=yt, mgr_config=config.COL_CONFIG)
        t1 = time.perf_counter()
        rep = model.row_interactor(col, mgr_config=config.ROW_CONFIG)
        t2 = time.perf_counter()
        out = model.icl_predictor(rep, y_train=yt, mgr_config=config.ICL_CONFIG)
        t3 = time.perf_counter()
    return out[0].numpy(), {"column": t1 - t0, "row": t2 - t1, "icl+head": t3 - t2}


def numpy_stages(model, x, y, n):
    out, t = forward(model, x[:n], y, x[n:])
    n_row = len(model.row.blocks)
    ms = {"column": t["embed"], "row": sum(t["layers"][:n_row]),
          "icl+head": sum(t["layers"][n_row:]) + t["head"]}
    return out, {k: v / 1e3 for k, v in ms.items()}


def wrappers(torch, TabICL, threads_n: int, repeats: int, folder: Path) -> None:
    """Issue 37's measure: the package's ``TabICLClassifier(n_estimators=1).fit(X, y)
    .predict_proba(X_test)`` against ``arenalite.models.predict`` on the same full-size
    random checkpoint (written to ``folder``), 1,024 + 256 × 30, preprocessing included."""
    from tabicl import TabICLClassifier

    from arenalite import models

    path = folder / "tabicl_random_v2.ckpt"
    if not path.exists():
        torch.manual_seed(0)
        config = v2_config(TabICL)
        torch.save({"config": config, "state_dict": TabICL(**config).state_dict()}, path)
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(1280, 30)), rng.integers(0, 3, 1024)
    runs = {
        "package": lambda: TabICLClassifier(model_path=str(path), device="cpu", n_estimators=1)
        .fit(x[:1024], y).predict_proba(x[1024:]),
        "arenalite": lambda: models.predict({"name": "tabicl", "weights": str(path),
                                             "n_estimators": 1}, x[:1024], y, x[1024:],
                                            "multiclass")}
    forward_bench.compare_wrappers(runs, repeats, threads_n)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-large", action="store_true")
    parser.add_argument("--threads", default="1,all",
                        help="thread counts: 1, 2, all or a list (default 1,all)")
    forward_bench.add_isa_argument(parser)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--wrappers", action="store_true",
                        help="also time the package's fit + predict_proba against "
                             "arenalite.models.predict (one member, preprocessing included)")
    args = parser.parse_args(argv)
    counts = forward_bench.thread_counts(args.threads)
    if len(counts) > 1:
        forward_bench.summary(*forward_bench.run_per_count(__file__, sys.argv[1:], counts))
        return 0
    args.threads = counts[0]
    try:
        import torch
        from tabicl._model.tabicl import TabICL
    except ImportError:
        print("bench_tabicl needs torch and tabicl: pip install -e '.[tabicl]'", file=sys.stderr)
        return 2
    torch.set_num_threads(args.threads)
    threads.set_count(args.threads)
    tmodel, model, icfg = build_models(torch)
    n_params = sum(v.size for v in model.tensors.values())
    print(f"TabICLv2 classifier, random weights: {n_params / 1e6:.2f} M parameters; "
          f"{args.threads} thread(s); torch {torch.__version__}, numpy {np.__version__}")
    forward_bench.report_machine(torch)
    print(f"{'shape':>18} {'lib':>6} {'median s':>9} {'column':>7} {'row':>7} "
          f"{'icl+head':>8} {'ratio':>6} {'max |diff|':>10}")
    for n, m, h in SHAPES:
        x, y = forward_bench.data(n, m, h)
        runs = {"torch": [], "numpy": []}
        outs = {}
        for i in range(args.repeats + 1):
            for lib in ("torch", "numpy"):
                t0 = time.perf_counter()
                out, stages = (torch_stages(torch, tmodel, x, y, icfg) if lib == "torch"
                               else numpy_stages(model, x, y, n))
                if i:  # the first round is the warm-up
                    runs[lib].append((time.perf_counter() - t0, stages))
                outs[lib] = out
        diff = float(np.abs(outs["torch"][:, :3] - outs["numpy"]).max())
        medians = {lib: statistics.median(r[0] for r in rs) for lib, rs in runs.items()}
        for lib in ("torch", "numpy"):
            stage = {k: statistics.median(r[1][k] for r in runs[lib]) for k in runs[lib][0][1]}
            ratio = f"{medians['numpy'] / medians['torch']:.2f}" if lib == "numpy" else ""
            print(f"{f'{n} + {m} x {h}':>18} {lib:>6} {medians[lib]:9.2f} "
                  f"{stage['column']:7.2f} {stage['row']:7.2f} {stage['icl+head']:8.2f} "
                  f"{ratio:>6} {f'{diff:.1e}' if lib == 'numpy' else '':>10}", flush=True)
        print(forward_bench.RESULT + json.dumps({"shape": f"{n:,} + {m} × {h}", **medians}),
              flush=True)
    if args.wrappers:
        with tempfile.TemporaryDirectory(prefix="arenalite-bench-tabicl-") as folder:
            wrappers(torch, TabICL, args.threads, args.repeats, Path(folder))
    if not args.skip_large:
        n, m, h = LARGE
        x, y = forward_bench.data(n, m, h)
        tracemalloc.start()
        t0 = time.perf_counter()
        forward(model, x[:n], y, x[n:])
        seconds = time.perf_counter() - t0
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"numpy at {n} + {m} x {h}: {seconds:.1f} s, peak traced "
              f"{peak / 2**30:.2f} GiB, max RSS of the process {rss / 1024:.2f} GiB")
    print(f"pid {os.getpid()} done")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
