#!/usr/bin/env bash
# TabICLv2 on a machine with a real GPU, one command, under 10 minutes:
#
#   bash bench/gpu_check.sh [--out DIR]
#
# 1. says which GPU this is (nvidia-smi, when there) and stops if Chromium finds no
#    hardware WebGPU adapter (a software adapter's figures are not GPU figures);
# 2. times one ensemble member of TabICLv2 (random full-size weights) at 128 + 48 × 4 and
#    1,024 + 256 × 30 rows × features: ours (the bridge's WGSL in headless Chromium on the
#    real adapter, GPU timestamps per stage), ORT-Web's WebGPU provider on the same
#    weights' ONNX graph, numpy, and the package's torch forward on CUDA when torch sees a
#    GPU; prints the table (median ms, per-stage ms, achieved GFLOP/s per stage from the
#    StageTimer's GPU times and bench/tabicl_flops.py) and writes it to
#    bench/out/peer_tabicl.md.
#
# Needs what `bash scripts/test.sh` installs (Debian's chromium, webgpu_bridge/node_modules,
# .venv-pins) plus an interpreter with torch, the `tabicl` package, safetensors and onnx for
# the export and the torch timing (ARENALITE_TABICL_PYTHON, default
# /work/venv-tabicl/bin/python; a CUDA build of torch there for the torch CUDA column, which
# is left out, with a line saying so, where torch sees no GPU). See bench/README.md.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=bench/out
[ "${1:-}" = "--out" ] && OUT=$2
PY=${ARENALITE_PYTHON:-.venv-pins/bin/python}
TABICL_PY=${ARENALITE_TABICL_PYTHON:-/work/venv-tabicl/bin/python}
SHAPES=128x48x4,1024x256x30
# Chromium on a real adapter: Vulkan, no GPU blocklist, WebGPU's unsafe APIs (timestamps)
GPU_FLAGS=(--chromium-arg=--enable-features=Vulkan,VulkanFromANGLE --chromium-arg=--use-angle=vulkan
  --chromium-arg=--ignore-gpu-blocklist --chromium-arg=--enable-dawn-features=allow_unsafe_apis)

if command -v nvidia-smi >/dev/null; then
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
else
  echo "gpu_check: no nvidia-smi; going on with whatever adapter Chromium finds"
fi

if [ ! -f build/tabicl_peer/tabicl_v2_1024_256_30.onnx ]; then
  # shellcheck disable=SC2086  # one argument per shape
  "$TABICL_PY" scripts/export_tabicl_onnx.py --shapes ${SHAPES//,/ }
fi

timeout 570 "$PY" bench/bench_webgpu_peer.py --model tabicl --tabicl-shapes "$SHAPES" \
  --engines ours,webgpu --runs 3 --warmups 1 --large-runs 3 --large-warmups 1 \
  --torch-device cuda --torch-python "$TABICL_PY" --require-hardware "${GPU_FLAGS[@]}"
mkdir -p "$OUT"
[ "$OUT" = bench/out ] || cp bench/out/peer_tabicl.md "$OUT/"
