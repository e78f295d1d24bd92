"""GFLOP/s of the WebGPU bridge's linear kernel under dawn.node, before and after a change.

    python bench/bench_webgpu_matmul.py [--repeats 5] [--rounds 2]
        [--baseline 7d30323 --baseline-tile 16x16] [--vulkan-icd JSON]

Runs ``webgpu_bridge/bench/matmul.mjs`` (median of ``--repeats`` dispatches after a
warm-up, GPU timestamps) on the transformer's shapes and on squares, for the kernel of
this checkout (``webgpu_bridge/src/kernels/linear.wgsl``, input-major weights) and, with
``--baseline REV``, for ``webgpu_bridge/src/kernels/matmul.wgsl`` (the bridge's matmul until
the kernels were merged into one linear) as it was at git revision REV (7d30323: the
one-thread-per-output kernel, 16 × 16 outputs per workgroup), alternating them
``--rounds`` times on the same adapter and keeping each shape's best round. Default
adapter: SwiftShader from Debian's chromium.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "pkg"))

from arenalite.node_runner import find_bridge, find_node, node_env  # noqa: E402

ICD = "/usr/lib/chromium/vk_swiftshader_icd.json"


def run_bench(kernel: Path | None, tile: str | None, repeats: int, env: dict) -> list[dict]:
    bridge = find_bridge()
    cmd = [find_node(), str(bridge / "bench" / "matmul.mjs"), "--repeats", str(repeats)]
    if kernel is not None:
        cmd += ["--kernel", str(kernel), "--tile", tile]
    done = subprocess.run(cmd, cwd=bridge, env=env, capture_output=True, text=True, check=True)
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--baseline", default=None, metavar="REV")
    parser.add_argument("--baseline-tile", default="16x16", metavar="ROWSxCOLS")
    parser.add_argument("--vulkan-icd", default=ICD)
    args = parser.parse_args(argv)
    env = node_env(args.vulkan_icd)
    with tempfile.TemporaryDirectory() as tmp:
        kernels: dict[str, tuple[Path | None, str | None]] = {"this checkout": (None, None)}
        if args.baseline:
            old = Path(tmp) / "matmul_baseline.wgsl"
            old.write_text(subprocess.run(
                ["git", "show", f"{args.baseline}:webgpu_bridge/src/kernels/matmul.wgsl"],
                cwd=ROOT, capture_output=True, text=True, check=True).stdout)
            kernels = {f"baseline {args.baseline}": (old, args.baseline_tile), **kernels}
        best: dict[str, dict[tuple, dict]] = {name: {} for name in kernels}
        for _ in range(args.rounds):
            for name, (kernel, tile) in kernels.items():
                for r in run_bench(kernel, tile, args.repeats, env):
                    key = (r["M"], r["K"], r["N"])
                    if key not in best[name] or r["gflops"] > best[name][key]["gflops"]:
                        best[name][key] = r
    first = next(iter(best.values()))
    adapter = next(iter(first.values()))["adapter"]
    print(f"adapter: {adapter} (clock: {next(iter(first.values()))['clock']})")
    print("| M × K × N | " + " | ".join(f"{n} ms | GFLOP/s" for n in best) + " |")
    print("|---|" + "---:|---:|" * len(best))
    for key in first:
        cells = " | ".join(f"{best[n][key]['ms']:.1f} | {best[n][key]['gflops']:.3f}" for n in best)
        print(f"| {key[0]} × {key[1]} × {key[2]} | {cells} |")


if __name__ == "__main__":
    main()
