#!/usr/bin/env bash
# Session 42, the last of its device time (384 s): on an H200 only, the f16nhwc90 half of scripts/device_s36.sh (the
# 400 dilated problems of sweeps/runs/s31/dilated.csv, every f16nhwc90 config, graph batches), stopped by the
# collector's --time-limit so that what it measured comes back (resumable: carry the partial parquet back later and
# run the same collector command). On any other GPU: nothing.
#   KEEP="sweeps/runs/s31/dilated.csv" bash scripts/device_tree.sh slim; then
#   BUDGET=300 bash scripts/device_s42b.sh   (carry [".whl/nvidia_cutlass-4.2.0.0-py3-none-any.whl"]; results in $OUT)
set -uo pipefail
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "GPU: $gpu"
[[ $gpu == *H200* ]] || { echo "not an H200: nothing measured"; exit 0; }
source scripts/device_env.sh || { echo "wheel install failed"; exit 1; }
device_start "$OUT" "${BUDGET:-300}"
collect_run dilated-f16nhwc90 "$(( $(left) - 20 ))" "$OUT/raw-dilated-f16nhwc90.parquet" --family f16nhwc90 \
  --build-dir build/s36 --layers sweeps/runs/s31/dilated.csv
tar -czf "$OUT/logs.tgz" -C /tmp logs
echo "$(left) s left"
