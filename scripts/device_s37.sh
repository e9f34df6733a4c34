#!/usr/bin/env bash
# Session 37, one device call that does what the GPU it is given can do (the tool gives an H100 or an H200 for the
# `nvidia-h200` kind; data is named for the GPU that measured it):
#   H200: the 400 dilated problems of session 31 (sweeps/runs/s31/dilated.csv), every f16nhwc90 and f16nhwc config,
#         graph batches: training data for the H200 models (session 31 measured them on an H100): scripts/device_s36.sh.
#   else: the fp16 choice's dispatcher (export/dispatch_f16_choice, regenerated in session 36, never run on a GPU)
#         built and its GPU tests run (scripts/device_dispatch_test.sh).
#   ONLY_H200=1 makes the second branch do nothing (a retry for an H200 after the dispatcher was tested); arguments, if
#   given, are the command the second branch runs instead.
#   KEEP="sweeps/runs/s31/dilated.csv export/dispatch_f16_choice export/h200_conv_heuristics.hpp $(ls models/*.tree.json)" \
#     bash scripts/device_tree.sh slim; then bash scripts/device_s37.sh (carry the nvidia-cutlass wheel); results in $OUT
set -uo pipefail
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "GPU: $gpu"
if [[ $gpu == *H200* ]]; then
  exec bash scripts/device_s36.sh
fi
[ -n "${ONLY_H200:-}" ] && { echo "not an H200: nothing measured"; exit 0; }
[ $# -gt 0 ] && exec "$@"  # another session's fallback (scripts/device_s42.sh)
BUDGET=575 exec bash scripts/device_dispatch_test.sh "$OUT" export/dispatch_f16_choice/h200_dispatch.cu 330
