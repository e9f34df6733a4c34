#!/usr/bin/env bash
# Session 31, on nvidia-h200 (one GPU, 16 cores), from the repo root; carry [".whl"]:
#   bash scripts/device_s31_dilated.sh OUTDIR [BUDGET_S]
# The dilated problems the training sweeps lack (sweeps/runs/s31/dilated.csv, scripts/dilated_problems.py --count
# 400 --seed 31): every config of f16nhwc90 (57), then of f16nhwc (106), graph batches (the collector's default),
# every output checked.  Resumable: a second call on the warm machine continues from build/parts/<name>.
set -uo pipefail
out=${1:?usage: device_s31_dilated.sh OUTDIR [BUDGET_S]}
source scripts/device_env.sh > /dev/null || { echo "wheel install failed"; exit 1; }
device_start "$out" "${2:-570}"
cat "$out/env.txt"
layers=sweeps/runs/s31/dilated.csv
collect_run dil-f16nhwc90 330 "$out/raw-dilated-f16nhwc90.parquet" --family f16nhwc90 --build-dir build/s31 --layers $layers
collect_run dil-f16nhwc 600 "$out/raw-dilated-f16nhwc.parquet" --family f16nhwc --build-dir build/s31 --layers $layers
tar -czf "$out/logs.tgz" -C /tmp logs
echo "end $(date +%T) ($(( $(date +%s) - DEVICE_T0 )) s)"
ls -la "$out"
