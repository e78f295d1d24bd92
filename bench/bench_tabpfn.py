"""TabPFN v3's numpy forward against the package's torch forward, same run, same weights.

``python bench/bench_tabpfn.py`` (needs the ``tabpfn`` extra: torch and the ``tabpfn``
package 9.2.0; ``--threads`` sets both libraries' thread count: ``1``, ``2``, ``all`` or a
list, default ``1,all``, one child process per count and a numpy / torch table at the end;
``--skip-large`` leaves out the 10,000 × 100 memory run). One full-size TabPFN v3
classifier (the package's default ``TabPFNV3Config``, 10 classes) with random weights (every
tensor drawn afresh: the package zero-initialises its output projections) runs one
ensemble member's raw model call (``fit_mode="low_memory"``: context and query rows in one
forward, float32, no autocast) at 128 context + 48 query rows × 4 features and at
1,024 + 256 × 30 in both libraries. Per shape it prints the median wall time after a
warm-up, each stage's time (column: cells and the per-column induced attention; row: the
feature aggregation; icl: the in-context layers; decoder), the ratio numpy / torch and the
largest logit difference. The large run reports numpy's peak traced memory (tracemalloc:
numpy's buffers) and the process's maximum resident set size. ``--wrappers`` also times the
package's ``TabPFNClassifier(n_estimators=1, fit_mode="low_memory")`` fit + predict_proba,
in float32 and at its default precision, against ``arenalite.models.predict`` on the same
checkpoint file, preprocessing included; ``--isa avx2`` holds every library to its AVX2 code
paths.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import resource
import statistics
import sys
import tempfile
import time
import tracemalloc
from collections import defaultdict
from pathlib import Path

import forward_bench  # bench/, beside this script

forward_bench.prepare_process()

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "pkg"))

from arenalite.models import threads  # noqa: E402
from arenalite.models.tabpfn import cells, column, decoder, icl, row  # noqa: E402
from arenalite.models.tabpfn.model import TabPFNModel, forward  # noqa: E402

SHAPES = [(128, 48, 4), (1024, 256, 30)]
LARGE = (10_000, 256, 100)
NUMPY_STAGES = {"column": [(cells, "fit_scaler"), (column, "embed_context"),
                           (column, "embed_queries")],
                "row": [(row, "aggregate")],
                "icl": [(icl, "fit_context"), (icl, "query")],
                "decoder": [(decoder, "fit_context"), (decoder, "logits")]}
"""Each stage's public functions, timed by wrapping them for the bench (module attributes)."""
TORCH_STAGES = {"column": ["feature_distribution_embedder"], "row": ["column_aggregator"],
                "icl": ["icl_blocks", "output_norm"], "decoder": ["many_class_decoder"]}


def randomise(torch, model, seed: int = 0):
    """Every tensor but the RoPE frequencies drawn afresh: matrices normal(0, 1/√fan_in),
    norm weights 1 + normal(0, 0.1), the rest normal(0, 0.1)."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            leaf = name.rsplit(".", 1)[-1]
            if name.endswith("rope.freqs"):
                continue
            if p.ndim == 2 and leaf not in ("inducing_vectors", "cls_tokens"):
                p.copy_(torch.randn(p.shape, generator=g) / math.sqrt(p.shape[1]))
            elif p.ndim == 1 and leaf == "weight":
                p.copy_(1 + 0.1 * torch.randn(p.shape, generator=g))
            else:
                p.copy_(0.1 * torch.randn(p.shape, generator=g))
    return model.eval()


def build_models(torch):
    """The package's default v3 classifier with random weights (:func:`randomise`) and
    arenalite's numpy model on the same tensors: ``(torch model, TabPFNModel)``."""
    from tabpfn.architectures import tabpfn_v3

    config, unused = tabpfn_v3.parse_config({"max_num_classes": 10})
    assert not unused, unused
    tmodel = randomise(torch, tabpfn_v3.get_architecture(config))
    tensors = {k: v.detach().numpy().copy() for k, v in tmodel.state_dict().items()}
    return tmodel, TabPFNModel(dataclasses.asdict(config), tensors)


def wrappers(torch, threads_n: int, repeats: int, folder: Path) -> None:
    """The issue-45 measure: the package's ``TabPFNClassifier(n_estimators=1,
    fit_mode="low_memory", inference_precision=torch.float32).fit(X, y).predict_proba(X_test)``
    (the arithmetic arenalite reproduces; its default precision is timed beside it) against
    ``arenalite.models.predict`` on the same full-size random v3 checkpoint (written to
    ``folder`` as the package saves one, without an inference config: both read v2.5's
    defaults), 1,024 + 256 × 30, preprocessing included."""
    from tabpfn import TabPFNClassifier

    from arenalite import models

    path = folder / "tabpfn_random_v3.ckpt"
    tmodel, model = build_models(torch)
    torch.save({"state_dict": tmodel.state_dict(), "config": model.config,
                "architecture_name": "tabpfn_v3"}, path)
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(1280, 30)), rng.integers(0, 3, 1024)

    def package(**precision):
        return (TabPFNClassifier(model_path=str(path), device="cpu", n_estimators=1,
                                 fit_mode="low_memory", **precision)
                .fit(x[:1024], y).predict_proba(x[1024:]))

    runs = {
        "package": lambda: package(inference_precision=torch.float32),
        "package at its default inference_precision": package,
        "arenalite": lambda: models.predict({"name": "tabpfn", "weights": str(path),
                                             "n_estimators": 1}, x[:1024], y, x[1024:],
                                            "multiclass")}
    forward_bench.compare_wrappers(runs, repeats, threads_n)


class StageClock:
    """Seconds per stage, summed over the calls since :meth:`reset`."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)

    def reset(self) -> None:
        self.seconds.clear()

    def timed(self, stage: str, fn):
        def wrapper(*args, **kwargs):
            t0 = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.seconds[stage] += time.perf_counter() - t0
        return wrapper


def time_numpy_stages(clock: StageClock) -> None:
    for stage, fns in NUMPY_STAGES.items():
        for module, name in fns:
            setattr(module, name, clock.timed(stage, getattr(module, name)))


def time_torch_stages(model, clock: StageClock) -> None:
    def start(stage):
        def hook(_module, _args):
            clock.seconds[f"_{stage}"] = time.perf_counter()
        return hook

    def stop(stage):
        def hook(_module, _args, _out):
            clock.seconds[stage] += time.perf_counter() - clock.seconds.pop(f"_{stage}")
        return hook

    for stage, names in TORCH_STAGES.items():
        for name in names:
            modules = getattr(model, name)
            for m in (modules if hasattr(modules, "__iter__") else [modules]):
                m.register_forward_pre_hook(start(stage))
                m.register_forward_hook(stop(stage))


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
        import tabpfn.architectures  # noqa: F401  (build_models needs it)
        import torch
    except ImportError:
        print("bench_tabpfn needs torch and tabpfn: pip install -e '.[tabpfn]'", file=sys.stderr)
        return 2
    torch.set_num_threads(args.threads)
    threads.set_count(args.threads)
    tmodel, model = build_models(torch)
    tensors = model.tensors
    n_params = sum(v.size for k, v in tensors.items() if k != "regression_borders")
    torch_clock, numpy_clock = StageClock(), StageClock()
    time_torch_stages(tmodel, torch_clock)
    time_numpy_stages(numpy_clock)
    print(f"TabPFN v3 classifier (default config), random weights: {n_params / 1e6:.2f} M "
          f"parameters; {args.threads} thread(s); torch {torch.__version__}, numpy "
          f"{np.__version__}")
    forward_bench.report_machine(torch)
    print(f"{'shape':>18} {'lib':>6} {'median s':>9} {'column':>7} {'row':>7} {'icl':>7} "
          f"{'decoder':>7} {'ratio':>6} {'max |diff|':>10}")
    for n, m, h in SHAPES:
        x, y = forward_bench.data(n, m, h)
        runs = {"torch": [], "numpy": []}
        outs = {}
        for i in range(args.repeats + 1):
            for lib, clock in (("torch", torch_clock), ("numpy", numpy_clock)):
                clock.reset()
                t0 = time.perf_counter()
                if lib == "torch":
                    with torch.no_grad():
                        out = tmodel(torch.from_numpy(x)[:, None, :], torch.from_numpy(y))
                    out = out.squeeze(1).numpy() if out.ndim == 3 else out.numpy()
                else:
                    out = forward(model, x[:n], y, x[n:])
                if i:  # the first round is the warm-up
                    runs[lib].append((time.perf_counter() - t0, dict(clock.seconds)))
                outs[lib] = out
        diff = float(np.abs(outs["torch"].reshape(outs["numpy"].shape) - outs["numpy"]).max())
        medians = {lib: statistics.median(r[0] for r in rs) for lib, rs in runs.items()}
        for lib in ("torch", "numpy"):
            stage = {k: statistics.median(r[1].get(k, 0.0) for r in runs[lib])
                     for k in TORCH_STAGES}
            ratio = f"{medians['numpy'] / medians['torch']:.2f}" if lib == "numpy" else ""
            print(f"{f'{n} + {m} x {h}':>18} {lib:>6} {medians[lib]:9.3f} "
                  f"{stage['column']:7.3f} {stage['row']:7.3f} {stage['icl']:7.3f} "
                  f"{stage['decoder']:7.3f} {ratio:>6} "
                  f"{f'{diff:.1e}' if lib == 'numpy' else '':>10}", flush=True)
        print(forward_bench.RESULT + json.dumps({"shape": f"{n:,} + {m} × {h}", **medians}),
              flush=True)
    if args.wrappers:
        with tempfile.TemporaryDirectory(prefix="arenalite-bench-tabpfn-") as folder:
            wrappers(torch, args.threads, args.repeats, Path(folder))
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
