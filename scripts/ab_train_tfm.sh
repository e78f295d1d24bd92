#!/usr/bin/env bash
# The A/B runs of issue 29 (docs/training/README.md): short warm-started runs of
# scripts/train_tfm.py from one seed, one after another on one core, each a complete
# schedule of 40 updates; compare their last validation line.
#   PY=/work/venv-train/bin/python bash scripts/ab_train_tfm.sh build/ab
set -u
PY=${PY:-python}
OUT=${1:-build/ab}
INIT=pkg/arenalite/models/weights/tabular_fm.safetensors
COMMON="--total-steps 40 --warmup 8 --log-every 10 --val-every 1000 --threads 1 --seed 0"
run() {
  name=$1; shift
  echo "== $name: $*"
  taskset -c 1 "$PY" scripts/train_tfm.py --out "$OUT/$name" $COMMON "$@" 2>&1 | tail -3
}
run A_recipe_lr3e-3 --init $INIT
run B_lr1e-3 --init $INIT --lr 1e-3
run C_lr1e-3_nocurriculum --init $INIT --lr 1e-3 --curriculum 0
