#!/usr/bin/env bash
# Session 47, one device call: on an H200 the 400 dilated problems of session 31 (sweeps/runs/s31/dilated.csv) over
# every f16nhwc90 and f16nhwc config, graph batches (scripts/device_s36.sh): training data for the H200 models.
# On any other GPU it only says which GPU came and stops, so a call that gets an H100 costs seconds, not minutes
# (every H100 measurement this session could make is already committed: sweeps/runs/s31, s36, s45, s46).
#   KEEP=sweeps/runs/s31/dilated.csv bash scripts/device_tree.sh slim; then this (carry
#   [".whl/nvidia_cutlass-4.2.0.0-py3-none-any.whl"]); bash scripts/device_tree.sh restore; results in $OUT
set -uo pipefail
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "GPU: $gpu"
if [[ $gpu == *H200* ]]; then
  exec bash scripts/device_s36.sh
fi
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$OUT/gpu.txt"
echo "not an H200: nothing measured"
