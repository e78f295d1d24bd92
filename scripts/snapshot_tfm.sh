#!/usr/bin/env bash
# Copy a tabular_fm training run's state into docs/training/ for committing (light work, on
# core 0 while the run trains on core 1): the latest checkpoint, its EMA (the averaged
# weights) as safetensors, the log and its plot.
#   PY=/work/venv-train/bin/python bash scripts/snapshot_tfm.sh build/tfm3
set -eu
PY=${PY:-python}
RUN=${1:-build/tfm3}
cp "$RUN/checkpoint.pt" docs/training/tabular_fm_checkpoint.pt.tmp
mv docs/training/tabular_fm_checkpoint.pt.tmp docs/training/tabular_fm_checkpoint.pt
mkdir -p build/snapshot && cp docs/training/tabular_fm_checkpoint.pt build/snapshot/checkpoint.pt
taskset -c 0 "$PY" scripts/train_tfm.py --out build/snapshot --export-ema \
  docs/training/tabular_fm_ema.safetensors
taskset -c 0 "$PY" scripts/plot_train_log.py "$RUN/train_log.csv" docs/training/
[ -f "$RUN/stdout.log" ] && cp "$RUN/stdout.log" docs/training/tabular_fm_train_stdout.log
ls -la docs/training/
