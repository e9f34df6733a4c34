#!/usr/bin/env bash
# Session 44, the last of its device time: scripts/device_s44.sh cut to BUDGET seconds (default 400): on an H200 the
# f16nhwc90 half of the dilated problems, stopped by the collector's time limit so that what it measured comes back
# (scripts/device_s42b.sh, resumable); else the routed fp16 choice's dispatcher built and GPU-tested within BUDGET.
#   KEEP as for scripts/device_s44.sh; BUDGET=400 bash scripts/device_s44b.sh (carry the cutlass wheel); results in $OUT
set -uo pipefail
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
if [[ $gpu == *H200* ]]; then
  BUDGET=${BUDGET:-400} exec bash scripts/device_s42b.sh
fi
echo "GPU: $gpu"
BUDGET=${BUDGET:-400} exec bash scripts/device_dispatch_test.sh "$OUT" export/dispatch_f16_choice3/h200_dispatch.cu 280
