"""What the model forward benches (bench_tabicl.py, bench_tabpfn.py, bench_tabfm.py)
share: the thread count set before numpy loads, one child process per thread count
(``--threads 1,all``: both counts in one command, each child with its own BLAS setting),
``--isa avx2`` (every library held to its AVX2 code paths on an AVX-512 CPU: the nearest
stand-in for an AVX2 machine when none is at hand), the random table they time, and the
machine each table holds for (CPU and vector extensions, the code paths numpy, its BLAS
and torch run, torch's build), printed beside every table so that figures from different
machines are never compared."""

from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import sys
import time

BLAS_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")

ISA_ENVIRONMENT = {
    "native": {},
    "avx2": {
        "NPY_DISABLE_CPU_FEATURES": "X86_V4 AVX512_ICL AVX512_SPR",  # numpy's AVX-512 loops
        "OPENBLAS_CORETYPE": "Haswell",  # OpenBLAS's AVX2 kernels
        "ATEN_CPU_CAPABILITY": "avx2",  # torch's own vectorised kernels
        "MKL_ENABLE_INSTRUCTIONS": "AVX2",  # torch's BLAS
        "ONEDNN_MAX_CPU_ISA": "AVX2",  # torch's oneDNN
    },
}
"""``--isa``: the environment each library reads at load time to pick its code paths.
``avx2`` runs an AVX-512 CPU as an AVX2 one would be run: the same kernels, not the same
chip (clock, caches and core count stay this machine's)."""


RESULT = "RESULT "  # the line a child prints its measurements on


def usable_cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


def thread_counts(spec: str) -> list[int]:
    """``--threads``' value as counts: "1", "2", "1,all" (all: the cores this process may use)."""
    counts = []
    for part in spec.split(","):
        n = usable_cores() if part == "all" else int(part)
        if n < 1:
            raise SystemExit(f"--threads: {part!r} is not a thread count")
        if n not in counts:
            counts.append(n)
    return counts


def option_from_argv(argv: list[str], name: str, default: str) -> str:
    """The value of ``--name`` on a command line, read before argparse runs."""
    value = default
    for i, a in enumerate(argv):
        if a == f"--{name}" and i + 1 < len(argv):
            value = argv[i + 1]
        elif a.startswith(f"--{name}="):
            value = a.split("=", 1)[1]
    return value


def threads_from_argv(argv: list[str]) -> str:
    """``--threads`` of a command line (default "1,all"): the first count when several."""
    return str(thread_counts(option_from_argv(argv, "threads", "1,all"))[0])


def run_per_count(script: str, argv: list[str], counts: list[int]) -> list[dict]:
    """Run ``script`` once per thread count (``--threads N`` replacing the list), its
    output passed through; returns each child's RESULT dicts, tagged with the count, and
    the machine description the last child printed (``MACHINE``)."""
    rest, skip = [], False
    for a in argv:
        if skip:
            skip = False
        elif a == "--threads":
            skip = True
        elif not a.startswith("--threads="):
            rest.append(a)
    results, described = [], None
    for n in counts:
        child = subprocess.run([sys.executable, script, "--threads", str(n), *rest],
                               stdout=subprocess.PIPE, text=True, check=True,
                               env={**os.environ, CHILD: "1"})
        for line in child.stdout.splitlines():
            if line.startswith(RESULT):
                results.append({"threads": n, **json.loads(line[len(RESULT):])})
            elif line.startswith(MACHINE):
                described = json.loads(line[len(MACHINE):])
                print(described, flush=True)
            else:
                print(line, flush=True)
    return results, described


def cpu_line() -> str:
    """The CPU's model name and its vector extensions (AVX-512 subsets, AVX2), from
    /proc/cpuinfo where there is one."""
    name, flags = platform.processor() or platform.machine(), set()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            for line in info:
                key, _, value = line.partition(":")
                if key.strip() == "model name":
                    name = value.strip()
                elif key.strip() == "flags":
                    flags = set(value.split())
                    break
    except OSError:
        pass
    avx512 = sorted(f[len("avx512"):].lstrip("_") for f in flags if f.startswith("avx512"))
    vector = ("AVX-512 (" + "/".join(avx512) + ")" if avx512 else
              "AVX2, no AVX-512" if "avx2" in flags else "no AVX2" if flags else "flags unknown")
    return f"CPU: {name}, {os.cpu_count()} logical cores ({usable_cores()} usable); {vector}"


def blas_lines() -> list[str]:
    """numpy's BLAS as threadpoolctl sees it: library, version, core type, threads."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return ["BLAS: threadpoolctl not installed (pip install threadpoolctl)"]
    return [f"BLAS: {p.get('internal_api')} {p.get('version')}, core "
            f"{p.get('architecture', '?')}, {p.get('num_threads')} thread(s) "
            f"({os.path.basename(p.get('filepath', ''))})"
            for p in threadpool_info() if p.get("user_api") == "blas"] or ["BLAS: none found"]


def numpy_line() -> str:
    """numpy's version and the widest SIMD group its loops dispatch to here."""
    import numpy as np

    try:
        from numpy._core._multiarray_umath import __cpu_features__ as features
    except ImportError:
        return f"numpy {np.__version__}"
    for group, label in (("X86_V4", "AVX-512"), ("X86_V3", "AVX2"), ("AVX512_SKX", "AVX-512"),
                         ("AVX2", "AVX2")):
        if features.get(group):
            return f"numpy {np.__version__}, loops up to {group} ({label})"
    return f"numpy {np.__version__}, loops below AVX2"


def torch_line(torch) -> str:
    """torch's version and build: its BLAS, oneDNN and CPU capability (``__config__``)."""
    config = torch.__config__.show()
    parts = [f"torch {torch.__version__}"]
    for line in config.splitlines():
        line = line.strip().lstrip("- ")
        if "Math Kernel Library" in line:
            parts.append("MKL " + line.split("Version", 1)[-1].split("-")[0].strip())
        elif line.startswith("Intel(R) MKL-DNN") or line.startswith("oneDNN"):
            parts.append("oneDNN " + line.split()[-4 if "Git" in line else -1])
        elif line.startswith("CPU capability usage"):
            parts.append("CPU capability " + line.split(":", 1)[1].strip())
    blas = [b.split("=", 1)[1] for b in config.replace(",", " ").split()
            if b.startswith("BLAS_INFO=")]
    if blas:
        parts.append(f"BLAS_INFO={blas[0]}")
    return "; ".join(parts) + f"; {torch.get_num_threads()} intra-op thread(s)"


def machine(torch=None) -> str:
    """What a table's figures hold for: the CPU, numpy and its BLAS, torch's build."""
    isa = option_from_argv(sys.argv[1:], "isa", "native")
    lines = [cpu_line() + (" (--isa avx2: AVX-512 code paths off)" if isa == "avx2" else ""),
             numpy_line(), *blas_lines()]
    if torch is not None:
        lines.append(torch_line(torch))
    try:
        lines.append("load average " + " ".join(f"{v:.2f}" for v in os.getloadavg()))
    except OSError:
        pass
    return "\n".join(lines)


MACHINE = "MACHINE "  # the line a child prints its machine description on (JSON string)
CHILD = "ARENALITE_BENCH_CHILD"  # set in the children of run_per_count


def summary(results: list[dict], described: str | None = None) -> None:
    """numpy / torch per thread count and shape, the table of bench/README.md, with the
    machine it was measured on."""
    if described:
        print("\n" + described)
    print("\n| threads | shape | torch s | numpy s | numpy / torch |\n|---|---|---:|---:|---:|")
    for r in results:
        print(f"| {r['threads']} | {r['shape']} | {r['torch']:.2f} | {r['numpy']:.2f} "
              f"| **{r['numpy'] / r['torch']:.2f}** |")


def report_machine(torch=None) -> None:
    """Print the machine description: as a ``MACHINE`` line in a child of
    :func:`run_per_count` (which prints it, and again beside the summary table), else as
    it is."""
    if os.environ.get(CHILD) == "1":
        print(MACHINE + json.dumps(machine(torch)), flush=True)
    else:
        print(machine(torch), flush=True)


def add_isa_argument(parser) -> None:
    """``--isa native|avx2`` (read again by :func:`prepare_process` before argparse)."""
    parser.add_argument("--isa", choices=sorted(ISA_ENVIRONMENT), default="native",
                        help="avx2: numpy, OpenBLAS and torch held to their AVX2 code paths")


def prepare_process() -> None:
    """Before numpy loads: the BLAS thread count from ``--threads`` (OpenBLAS reads it at
    import; without it numpy's BLAS takes every core while torch has its count) and the
    code paths of ``--isa`` (children inherit both)."""
    for name in BLAS_VARIABLES:
        os.environ[name] = threads_from_argv(sys.argv[1:])
    isa = option_from_argv(sys.argv[1:], "isa", "native")
    if isa not in ISA_ENVIRONMENT:
        raise SystemExit(f"--isa: {isa!r} is not one of {', '.join(sorted(ISA_ENVIRONMENT))}")
    os.environ.update(ISA_ENVIRONMENT[isa])


def compare_wrappers(runs: dict, repeats: int, threads_n: int) -> None:
    """The package's wrapper against ``arenalite.models.predict`` (``runs``: "package" and
    "arenalite", each a call returning probabilities, and any other setting of the package
    to show beside them): a warm-up, then ``repeats`` calls of each; prints the medians,
    the ratios and the largest differences of the outputs."""
    import numpy as np

    seconds, outs = {}, {}
    for name, run in runs.items():
        outs[name] = run()  # warm-up
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            outs[name] = run()
            times.append(time.perf_counter() - start)
        seconds[name] = statistics.median(times)
    diff = float(np.abs(outs["package"] - outs["arenalite"]).max())
    print(f"wrappers, 1 member at 1024 + 256 x 30, {threads_n} thread(s): package fit + "
          f"predict_proba {seconds['package']:.2f} s, arenalite.models.predict "
          f"{seconds['arenalite']:.2f} s, ratio {seconds['arenalite'] / seconds['package']:.2f}, "
          f"max |diff| {diff:.1e}", flush=True)
    for name in runs.keys() - {"package", "arenalite"}:
        other = float(np.abs(outs[name] - outs["arenalite"]).max())
        print(f"  {name}: {seconds[name]:.2f} s (arenalite / it "
              f"{seconds['arenalite'] / seconds[name]:.2f}, max |diff| {other:.1e})", flush=True)


def data(n: int, m: int, h: int, seed: int = 0):
    """``n`` context + ``m`` query rows × ``h`` features (float32) and 3-class targets."""
    import numpy as np

    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n + m, h)).astype(np.float32)
    y = rng.integers(0, 3, n).astype(np.float32)
    y[:3] = [0, 1, 2]
    return x, y
