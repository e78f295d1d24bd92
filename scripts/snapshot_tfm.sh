#!/usr/bin/env bash
# Copy a tabular_fm training run's state into docs/training/ for committing (light work; on
# core $CORE, default 0, while the run trains on core 1): the latest checkpoint, its EMA (the
# averaged weights) as safetensors, the log (as tabular_fm_train_log_run$RUN_NO.csv) and the
# plot of every run.
#   PY=.venv-train/bin/python CORE=1 RUN_NO=4 bash scripts/snapshot_tfm.sh build/tfm4
set -eu
PY=${PY:-python}
CORE=${CORE:-0}
RUN_NO=${RUN_NO:-4}
RUN=${1:-build/tfm4}
cp "$RUN/checkpoint.pt" docs/training/tabular_fm_checkpoint.pt.tmp
mv docs/training/tabular_fm_checkpoint.pt.tmp docs/training/tabular_fm_checkpoint.pt
mkdir -p build/snapshot && cp docs/training/tabular_fm_checkpoint.pt build/snapshot/checkpoint.pt
taskset -c "$CORE" "$PY" scripts/train_tfm.py --out build/snapshot --export-ema \
  docs/training/tabular_fm_ema.safetensors
taskset -c "$CORE" "$PY" scripts/plot_train_log.py "$RUN/train_log.csv" docs/training/ \
  --run "$RUN_NO"
[ -f "$RUN/stdout.log" ] && cp "$RUN/stdout.log" "docs/training/tabular_fm_train_stdout_run$RUN_NO.log"
ls -la docs/training/
