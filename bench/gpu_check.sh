#!/usr/bin/env bash
# The three checkpoint models on a machine with a real GPU, one command:
#
#   bash bench/gpu_check.sh [--out DIR] [--models "tabicl tabpfn tabfm"]
#
# 1. says which GPU this is (nvidia-smi, when there) and stops if Chromium finds no
#    hardware WebGPU adapter (a software adapter's figures are not GPU figures);
# 2. TabICLv2 (random full-size weights): one ensemble member at 128 + 48 × 4 and
#    1,024 + 256 × 30 rows × features: ours (the bridge's WGSL in headless Chromium on the
#    real adapter, GPU timestamps per stage), ORT-Web's WebGPU provider on the same
#    weights' ONNX graph, numpy, and the package's torch forward on CUDA when torch sees a
#    GPU; per-stage ms and achieved GFLOP/s per stage; bench/out/peer_tabicl.md;
# 3. TabPFN v3 (the default classifier, random weights) and Google TabFM (v1.0.0 widths, 2
#    of its ICL blocks, random weights): one member at 128 + 48 × 4 and 512 + 128 × 16:
#    ours and ORT-Web WebGPU on the graphs of scripts/export_tabpfn_onnx.py /
#    export_tabfm_onnx.py, numpy, per-layer ms (wall and GPU) and dispatches per member;
#    bench/out/peer_tabpfn.md, bench/out/peer_tabfm.md.
#
# Needs what `bash scripts/test.sh` installs (Debian's chromium, webgpu_bridge/node_modules,
# .venv-pins) plus, for the exports and the torch timing, interpreters with torch, onnx and
# onnxruntime and the model's package: ARENALITE_TABICL_PYTHON (tabicl; default
# /work/venv-tabicl/bin/python, a CUDA build of torch there for the torch CUDA column, left
# out with a line saying so where torch sees no GPU), ARENALITE_TABPFN_PYTHON (tabpfn 9.2.0;
# default .venv-bench/bin/python), ARENALITE_TABFM_PYTHON (tabfm 1.0.1; default
# .venv-tabfm/bin/python). See bench/README.md.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=bench/out
MODELS="tabicl tabpfn tabfm"
while [ $# -gt 0 ]; do
  case $1 in
    --out) OUT=$2; shift 2 ;;
    --models) MODELS=$2; shift 2 ;;
    *) echo "gpu_check: unknown argument $1" >&2; exit 2 ;;
  esac
done
PY=${ARENALITE_PYTHON:-.venv-pins/bin/python}
TABICL_PY=${ARENALITE_TABICL_PYTHON:-/work/venv-tabicl/bin/python}
TABPFN_PY=${ARENALITE_TABPFN_PYTHON:-.venv-bench/bin/python}
TABFM_PY=${ARENALITE_TABFM_PYTHON:-.venv-tabfm/bin/python}
CHECKPOINT_SHAPES=128x48x4,512x128x16
SHAPES=128x48x4,1024x256x30
# Chromium on a real adapter: Vulkan, no GPU blocklist, WebGPU's unsafe APIs (timestamps)
GPU_FLAGS=(--chromium-arg=--enable-features=Vulkan,VulkanFromANGLE --chromium-arg=--use-angle=vulkan
  --chromium-arg=--ignore-gpu-blocklist --chromium-arg=--enable-dawn-features=allow_unsafe_apis)

if command -v nvidia-smi >/dev/null; then
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
else
  echo "gpu_check: no nvidia-smi; going on with whatever adapter Chromium finds"
fi

mkdir -p "$OUT"
for model in $MODELS; do
  case $model in
    tabicl)
      if [ ! -f build/tabicl_peer/tabicl_v2_1024_256_30.onnx ]; then
        # shellcheck disable=SC2086  # one argument per shape
        "$TABICL_PY" scripts/export_tabicl_onnx.py --shapes ${SHAPES//,/ }
      fi
      timeout 570 "$PY" bench/bench_webgpu_peer.py --model tabicl --tabicl-shapes "$SHAPES" \
        --engines ours,webgpu --runs 3 --warmups 1 --large-runs 3 --large-warmups 1 \
        --torch-device cuda --torch-python "$TABICL_PY" --require-hardware "${GPU_FLAGS[@]}" ;;
    tabpfn|tabfm)
      py=$TABPFN_PY graph=tabpfn_v3
      [ "$model" = tabfm ] && py=$TABFM_PY graph=tabfm_v1
      if [ ! -f "build/${model}_peer/${graph}_512_128_16.onnx" ]; then
        # shellcheck disable=SC2086  # one argument per shape
        "$py" "scripts/export_${model}_onnx.py" --shapes ${CHECKPOINT_SHAPES//,/ }
      fi
      timeout 570 "$PY" bench/bench_webgpu_peer.py --model "$model" \
        --checkpoint-shapes "$CHECKPOINT_SHAPES" --engines ours,webgpu --runs 3 --warmups 1 \
        --require-hardware "${GPU_FLAGS[@]}" ;;
    *) echo "gpu_check: unknown model $model (tabicl, tabpfn, tabfm)" >&2; exit 2 ;;
  esac
  [ "$OUT" = bench/out ] || cp "bench/out/peer_$model.md" "$OUT/"
done
